package statuspage

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/oncall"
)

// nameTimeout bounds one refresh of the on-call names.
const nameTimeout = 20 * time.Second

// refreshNames asks the namer (WithPersonNames) for the people /oncall
// shows: who is on call now and next, and who acknowledged an open page.
// It runs in Run, never while a page renders: a name may cost a chat or
// desk look-up, which the namer caches.
func (h *Handler) refreshNames(ctx context.Context) {
	if h.cfg.names == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, nameTimeout)
	defer cancel()
	var members []string
	if v, _, err := h.view(ctx); err == nil && v.Set != nil && v.Set.OnCall() != nil {
		for _, st := range v.Set.OnCall().WhoIsOnCall(v.At) {
			members = append(members, st.Now.Member, st.Next.Member)
		}
	}
	if pages, err := h.ledger.OpenPages(ctx, listMax); err == nil {
		for _, p := range pages {
			members = append(members, p.AckedBy)
		}
	}
	names := make(map[string]string, len(members))
	for _, m := range members {
		if _, done := names[m]; done || m == "" || ctx.Err() != nil {
			continue
		}
		if n := h.cfg.names(ctx, m); n != "" && n != m {
			names[m] = n
		}
	}
	h.mu.Lock()
	h.names = names
	h.mu.Unlock()
}

// person is how /oncall shows a member: "Name (member)" when the namer
// named them, else the member as the rules file or chat says it.
func (h *Handler) person(member string) string {
	h.mu.Lock()
	n := h.names[member]
	h.mu.Unlock()
	if n == "" {
		return member
	}
	return n + " (" + member + ")"
}

// oncallRow is one schedule on /oncall, its people named.
type oncallRow struct {
	oncall.Status
	NowName, NextName string
}

// pageRow is one open page on /oncall, who acknowledged it named.
type pageRow struct {
	oncall.Page
	AckedByName string
}

package main

import (
	"context"
	"errors"
	"testing"

	"github.com/deskbot/deskbot/oncall"
)

// pagesOnly is a chat transport that cannot group pages (as the console).
type pagesOnly struct {
	chatTransport
	paged []int64
}

func (p *pagesOnly) Page(_ context.Context, r oncall.PageRequest) error {
	p.paged = append(p.paged, r.TicketID)
	if r.TicketID == 2 {
		return errors.New("refused")
	}
	return nil
}

// groups is a chat transport that groups pages (as Slack).
type groups struct {
	pagesOnly
	grouped int
}

func (g *groups) PageGroup(_ context.Context, rs []oncall.PageRequest) []error {
	g.grouped += len(rs)
	return make([]error, len(rs))
}

// The escalator's pager hands grouped steps to a transport that groups,
// and pages them one by one, each with its own outcome, through one that
// does not.
func TestChatPagerPageGroup(t *testing.T) {
	rs := []oncall.PageRequest{{TicketID: 1}, {TicketID: 2}, {TicketID: 3}}
	po := &pagesOnly{}
	errs := (&chatPager{chat: po}).PageGroup(t.Context(), rs)
	if len(errs) != 3 || errs[0] != nil || errs[1] == nil || errs[2] != nil || len(po.paged) != 3 {
		t.Fatalf("fallback: errs %v, paged %v", errs, po.paged)
	}
	g := &groups{}
	errs = (&chatPager{chat: g}).PageGroup(t.Context(), rs)
	if len(errs) != 3 || g.grouped != 3 || len(g.paged) != 0 {
		t.Fatalf("grouping transport: errs %v, grouped %d, paged %v", errs, g.grouped, g.paged)
	}
}

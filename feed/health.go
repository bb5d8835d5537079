package feed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Health is the mirror's part of /readyz: nil when every polled
// workspace's mirror is complete and its change feed current; else why
// not ("the first full sync of the default workspace is under way:
// syncing 3,400 of 10,000"). It reads the shared store, so every replica
// answers alike, and spends no desk request. tick is the cycle's tick:
// the feed is late after three of them (ten minutes at least).
func (f *Feed) Health(ctx context.Context, tick time.Duration) error {
	states, err := f.ms.MirrorStates(ctx)
	if err != nil {
		return fmt.Errorf("read the mirror state: %w", err)
	}
	now := f.cfg.clock.Now()
	late := max(10*time.Minute, 3*tick) + f.cfg.overlap
	var errs []string
	for _, m := range f.mirrors {
		st, ok := states[m.ws]
		m.mu.Lock()
		p := m.full
		var seen, total int
		var how string
		if p != nil {
			seen, total, how = p.seen, p.total, p.how
		}
		m.mu.Unlock()
		switch {
		case !ok || !st.Complete:
			msg := fmt.Sprintf("the first full sync of the %s is under way", m.name())
			switch {
			case p != nil && total >= 0:
				msg += fmt.Sprintf(": syncing %s of %s", thousands(seen), thousands(total))
				if how != "" {
					msg += " " + how
				}
			case p == nil:
				msg = fmt.Sprintf("the %s is not mirrored yet (the leader builds it)", m.name())
			}
			errs = append(errs, msg)
		case now.Sub(st.Cursor) > late:
			errs = append(errs, fmt.Sprintf("the change feed of the %s is %s behind", m.name(), now.Sub(st.Cursor).Round(time.Second)))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// thousands writes n with thousands separators (3,400).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

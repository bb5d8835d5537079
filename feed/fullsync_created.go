package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// readByWindows pages the search in created_at windows that each fit
// under the desk's page cap: on a desk with many more closed tickets than
// open ones it costs far fewer requests than the whole ticket list.
const readByWindows = "windows"

// windowsFrom is the first day the windows cover: before any desk's first
// ticket. Empty ranges cost one request each while being halved.
var windowsFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// errWindowTooFull: one day's tickets do not fit under the cap, so dates
// cannot slice the search; the ticket list reads instead.
var errWindowTooFull = errors.New("one day holds more open tickets than the search pages up to")

// capped is what a search that hit the desk's page cap learned.
type capped struct {
	pages    int // pages the desk answered in full before the cap
	pageSize int
	rest     int // open tickets of the query it did not reach
}

// windowsCheaper decides whether reading a capped search by created_at
// windows costs fewer requests than walking the whole ticket list: the
// windows read the rest a page at a time, plus the halving: about two
// probes per level from windowsFrom down to a window's days, and two per
// window that fits; the list reads every ticket of every status, 100 a
// page. It counts the desk's tickets once (one request) if no one has.
func (f *Feed) windowsCheaper(ctx context.Context, m *wsMirror, fs *fullSyncRun, c capped) (bool, string) {
	if c.pages < 1 || c.pageSize < 1 {
		return false, ""
	}
	if fs.all < 0 {
		p, resp, err := f.desk.FilterTickets(ctx, allTicketsQuery, &sdclient.FilterOptions{WorkspaceID: m.param})
		fs.requests += Attempts(resp, err)
		if err != nil {
			fs.all = 0
			return false, ""
		}
		fs.all = p.Total
	}
	limit := c.pages * c.pageSize
	days := int(f.cfg.clock.Now().Sub(windowsFrom).Hours()/24) + 2
	windowPages := (c.rest+c.pageSize-1)/c.pageSize + 2*((c.rest+limit-1)/limit) + 2*(bits.Len(uint(days))+1)
	listPages := fs.all/feedPageSize + 1
	if windowPages >= listPages {
		return false, ""
	}
	return true, fmt.Sprintf("about %d requests by created_at windows of at most %d tickets, against %d for the list of all %d tickets",
		windowPages, limit, listPages, fs.all)
}

// window is a range of creation days, both ends included (filter dates
// are days and :> :< are inclusive).
type window struct{ from, to time.Time }

func (w window) days() int { return int(w.to.Sub(w.from).Hours()/24) + 1 }

// query narrows q to the tickets created within w.
func (w window) query(q string) (string, error) {
	base, err := filter.Parse(q)
	if err != nil {
		return "", err
	}
	day := func(t time.Time) filter.Value { return filter.Date(t.Year(), t.Month(), t.Day()) }
	e := &filter.And{Exprs: []filter.Expr{base,
		&filter.Term{Field: "created_at", Op: filter.OpGte, Value: day(w.from)},
		&filter.Term{Field: "created_at", Op: filter.OpLte, Value: day(w.to)}}}
	if err := filter.CheckLen(e); err != nil {
		return "", err
	}
	return e.String(), nil
}

// fullSyncWindows reads every ticket of q by created_at windows that each
// fit under the desk's cap of limit tickets: a window whose first page
// reports more is halved (its tickets come with its halves), one that
// fits is paged to its end. Tickets this sync already has are skipped.
// A day too full to fit is errWindowTooFull.
func (f *Feed) fullSyncWindows(ctx context.Context, m *wsMirror, q string, fs *fullSyncRun, limit int) error {
	today := fs.deskStart
	if today.IsZero() {
		today = f.cfg.clock.Now()
	}
	// A day's margin: the desk may count days in its own time zone.
	stack := []window{{from: windowsFrom, to: today.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)}}
	windows := 0
	for len(stack) > 0 {
		w := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		wq, err := w.query(q)
		if err != nil {
			return fmt.Errorf("%w: %w", errWindowTooFull, err)
		}
		total, refusedAt, err := f.fullSyncWindow(ctx, m, wq, fs, limit)
		if err != nil {
			return err
		}
		windows++
		if refusedAt > 0 {
			limit = min(limit, (refusedAt-1)*max(fs.pageSize, 1)) // the cap is lower than it seemed
		}
		if total <= limit && refusedAt == 0 {
			continue
		}
		if w.days() == 1 {
			return fmt.Errorf("%w (%d on %s)", errWindowTooFull, total, w.from.Format(time.DateOnly))
		}
		mid := w.from.AddDate(0, 0, w.days()/2-1)
		stack = append(stack, window{mid.AddDate(0, 0, 1), w.to}, window{w.from, mid})
	}
	fs.log.Info("full sync read the search by created_at windows", slog.Int("windows", windows), slog.Int("window_tickets", limit))
	return nil
}

// fullSyncWindow reads one window's pages when its total fits under limit
// (else only the first, to learn the total), and returns the total and
// the page the desk refused (0: none).
func (f *Feed) fullSyncWindow(ctx context.Context, m *wsMirror, q string, fs *fullSyncRun, limit int) (total, refusedAt int, err error) {
	got := 0
	for page := 1; ; page++ {
		p, resp, err := f.desk.FilterTickets(ctx, q, &sdclient.FilterOptions{WorkspaceID: m.param, Page: page})
		fs.requests += Attempts(resp, err)
		if page > 1 && pageRefused(err) {
			return total, page, nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("full sync of the %s by created_at windows, page %d: %w", m.name(), page, err)
		}
		total = p.Total
		if total > limit {
			return total, 0, nil
		}
		fresh := p.Tickets[:0:0]
		for _, t := range p.Tickets {
			if t != nil && !fs.seen[t.ID] {
				fresh = append(fresh, t)
			}
		}
		if _, err := f.fullSyncPage(ctx, m, fresh, fs, fs.prog.total); err != nil {
			return 0, 0, err
		}
		got += len(p.Tickets)
		f.m.fullSyncProgress.WithLabelValues(m.name()).Set(float64(len(fs.seen)))
		if len(p.Tickets) == 0 || len(p.Tickets) < fs.pageSize || got >= total {
			return total, 0, nil
		}
	}
}

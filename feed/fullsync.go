package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// fullSyncRetry is how long a failed full sync waits before the next try.
const fullSyncRetry = 5 * time.Minute

// shiftedFullSyncAgain is how soon a full sync whose result moved under
// its paging runs again (a ticket that left the result between two page
// reads moves an unread one onto a page already read).
const shiftedFullSyncAgain = time.Hour

// fullSync rebuilds m from GET /tickets/filter over every open status,
// paging until the total, or, where the search cannot or should not be
// paged to its end, from the ticket list (fullsync_list.go), applying each page as it arrives
// so that rules can act on what is mirrored while it runs. On the first
// one the feed's cursor starts at the desk's clock (its Date header) less
// the overlap, before the first page. Mirrored open tickets the sync did
// not return, and that did not change since it started, are re-read: the
// desk may have deleted them, or the paging skipped them. Resolved and
// closed tickets unchanged for the closed retention leave the mirror.
func (f *Feed) fullSync(ctx context.Context, m *wsMirror) (requests int, err error) {
	fs := &fullSyncRun{log: f.cfg.logger.With(slog.String("workspace", m.name())), started: time.Now(), seen: map[int64]bool{},
		readBy: readBySearch, all: -1}
	m.mu.Lock()
	fs.prog = m.full
	fs.startCursor = m.state.Cursor
	m.mu.Unlock()
	defer func() { f.fullSyncEnded(m, fs.log, fs.requests, err) }()
	open, err := f.OpenStatuses(ctx, false)
	if err != nil {
		return 0, err
	}
	queries, err := openQueries(open)
	if err != nil {
		return 0, err
	}
	fs.log.Info("full sync of the mirror started", slog.Bool("first", !m.state.Complete))
	for i, q := range queries {
		err := f.fullSyncQuery(ctx, m, q, fs)
		var turn *turnToList
		if errors.As(err, &turn) {
			err = f.fullSyncPastCap(ctx, m, queries[i:], fs, turn)
		}
		if err != nil {
			return fs.requests, err
		}
		if fs.readBy != readBySearch {
			break
		}
	}
	if err = f.fullSyncFinish(ctx, m, fs); err == nil {
		f.fullSynced(ctx, m)
	}
	return fs.requests, err
}

// fullSynced tells the FullSyncSubscribers what m holds after a full sync.
func (f *Feed) fullSynced(ctx context.Context, m *wsMirror) {
	var subs []FullSyncSubscriber
	for _, s := range f.cfg.subscribers {
		if fs, ok := s.(FullSyncSubscriber); ok {
			subs = append(subs, fs)
		}
	}
	if len(subs) == 0 {
		return
	}
	now := f.cfg.clock.Now()
	m.mu.Lock()
	tickets := make([]*sdclient.Ticket, 0, len(m.tickets))
	for _, t := range m.tickets {
		tickets = append(tickets, t) // put replaces a mirrored ticket, never changes it
	}
	m.mu.Unlock()
	for _, s := range subs {
		s.FeedFullSynced(ctx, now, tickets)
	}
}

// fullSyncRun is the state of one full sync.
type fullSyncRun struct {
	log         *slog.Logger
	started     time.Time // on the local clock, for durations
	prog        *fullProgress
	startCursor time.Time
	seen        map[int64]bool
	shifted     bool      // the result moved while it was paged
	newest      time.Time // the newest updated_at seen
	deskStart   time.Time // the desk's clock at the first page
	done        int       // tickets of the queries before the current one
	requests    int
	// readBy is how the sync reads (readBySearch, readByList) and why
	// the why of a turn to the list; see fullsync_list.go.
	readBy, why string
	pageSize    int // the search's page size, as its first full page showed
	all         int // tickets of every status the list would return; -1 until counted
}

// fullSyncEnded records the end of a full sync of m (err: failed).
func (f *Feed) fullSyncEnded(m *wsMirror, log *slog.Logger, requests int, err error) {
	m.mu.Lock()
	m.full = nil
	if err != nil {
		m.fullFailed = f.cfg.clock.Now()
	} else {
		m.fullFailed = time.Time{}
	}
	m.mu.Unlock()
	f.m.fullSyncRequests.Add(float64(requests))
	if err != nil {
		f.m.fullSyncs.WithLabelValues("failed").Inc()
		log.Error("full sync of the mirror failed; retrying later", slog.Any("error", err),
			slog.Int("requests", requests), slog.Duration("retry_in", fullSyncRetry))
	}
}

// fullSyncQuery pages one filter query of a full sync into m until the
// total.
func (f *Feed) fullSyncQuery(ctx context.Context, m *wsMirror, q string, fs *fullSyncRun) error {
	total, pageSize, got := -1, 0, 0
	for page := 1; ; page++ {
		p, resp, err := f.desk.FilterTickets(ctx, q, &sdclient.FilterOptions{WorkspaceID: m.param, Page: page})
		fs.requests += Attempts(resp, err)
		if page > 1 && pageRefused(err) {
			return &turnToList{why: fmt.Sprintf("the desk refused page %d of its search (%v)", page, err),
				cap: &capped{pages: page - 1, pageSize: pageSize, rest: total - got}}
		}
		if err != nil {
			return fmt.Errorf("full sync of the %s, page %d: %w", m.name(), page, err)
		}
		if fs.deskStart.IsZero() {
			fs.deskStart = deskDate(resp)
		}
		if total >= 0 && p.Total != total {
			fs.shifted = true
		}
		total = p.Total
		n, err := f.fullSyncPage(ctx, m, p.Tickets, fs, fs.done+total)
		if err != nil {
			return err
		}
		got += n
		f.m.fullSyncProgress.WithLabelValues(m.name()).Set(float64(len(fs.seen)))
		f.m.fullSyncTotal.WithLabelValues(m.name()).Set(float64(fs.done + total))
		if page%50 == 0 {
			fs.log.Info("full sync of the mirror under way", slog.Int("seen", len(fs.seen)), slog.Int("total", fs.done+total))
		}
		pageSize = max(pageSize, len(p.Tickets))
		fs.pageSize = max(fs.pageSize, pageSize)
		if page == 1 {
			if why := f.listIsCheaper(ctx, m, fs, total-got, pageSize); why != "" {
				return &turnToList{why: why}
			}
		}
		if len(p.Tickets) == 0 || len(p.Tickets) < pageSize || got >= total {
			break
		}
	}
	if got < total {
		// The pages ended before the total: a cap that answers with an
		// empty page, or tickets that left the result while it was
		// paged (moving unread ones onto pages already read).
		return &turnToList{why: fmt.Sprintf("the search's pages ended at %d of the %d tickets it reported", got, total),
			cap: &capped{pages: got / max(pageSize, 1), pageSize: pageSize, rest: total - got}}
	}
	fs.done += max(total, 0)
	return nil
}

// fullSyncPage puts one page of a full sync into m and saves it; it
// returns how many tickets were new to this sync.
func (f *Feed) fullSyncPage(ctx context.Context, m *wsMirror, tickets []*sdclient.Ticket, fs *fullSyncRun, total int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f.startFeedCursor(m, fs)
	got := 0
	for _, t := range tickets {
		if t == nil {
			continue
		}
		if fs.seen[t.ID] {
			fs.shifted = true
			continue
		}
		fs.seen[t.ID] = true
		got++
		fs.newest = maxTime(fs.newest, t.UpdatedAt)
		m.put(t)
	}
	fs.prog.seen, fs.prog.total = len(fs.seen), total
	return got, m.persist(ctx, f.ms)
}

// startFeedCursor starts the feed's cursor of m at the desk's time at the
// sync's first page (from then on every change reaches the feed), if it
// has none yet. Caller holds m.mu.
func (f *Feed) startFeedCursor(m *wsMirror, fs *fullSyncRun) {
	if m.state.Cursor.IsZero() && !fs.deskStart.IsZero() {
		m.state.Cursor = fs.deskStart.Add(-f.cfg.overlap)
		m.state.TrashCursor = m.state.Cursor
	}
}

// fullSyncFinish ends a full sync whose pages are all read: it starts the
// feed's cursor if no page could, re-reads the open tickets the sync did
// not return, drops old closed ones, and marks the mirror complete.
func (f *Feed) fullSyncFinish(ctx context.Context, m *wsMirror, fs *fullSyncRun) error {
	now := f.cfg.clock.Now()
	m.mu.Lock()
	if m.state.Cursor.IsZero() {
		// The desk sent no Date header: start from the newest change it
		// showed, less the time the sync took (a duration, so whatever
		// the offset between the clocks) and the overlap.
		m.state.Cursor = fs.newest.Add(-time.Since(fs.started) - f.cfg.overlap)
		m.state.TrashCursor = m.state.Cursor
	}
	var suspects []int64
	for id, t := range m.tickets {
		switch {
		case fs.seen[id]:
		case sdclient.IsOpenStatus(t.Status):
			if !fs.startCursor.IsZero() && t.UpdatedAt.Before(fs.startCursor) {
				suspects = append(suspects, id)
			}
		case t.UpdatedAt.Before(m.state.Cursor.Add(-f.cfg.closedKeep)):
			m.remove(id)
		}
	}
	m.mu.Unlock()
	slices.Sort(suspects)
	if err := f.rereadSuspects(ctx, m, suspects, fs); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Complete, m.state.FullSyncAt = true, now
	m.nextFull = now.Add(f.cfg.fullSyncEvery)
	if fs.shifted {
		m.nextFull = now.Add(min(f.cfg.fullSyncEvery, shiftedFullSyncAgain))
	}
	if err := m.persist(ctx, f.ms); err != nil {
		return err
	}
	f.m.fullSyncs.WithLabelValues("complete").Inc()
	fs.log.Info("full sync of the mirror complete", slog.Int("tickets", len(m.tickets)), slog.Int("requests", fs.requests),
		slog.String("read_by", fs.readBy), slog.String("why", fs.why),
		slog.Int("re_read", len(suspects)), slog.Bool("result_moved_while_paging", fs.shifted),
		slog.Duration("took", time.Since(fs.started).Round(time.Millisecond)), slog.Time("next", m.nextFull))
	return nil
}

// rereadSuspects re-reads the mirrored open tickets a full sync did not
// return: gone ones leave the mirror, the others are refreshed.
func (f *Feed) rereadSuspects(ctx context.Context, m *wsMirror, suspects []int64, fs *fullSyncRun) error {
	for _, id := range suspects {
		t, resp, err := f.desk.GetTicket(ctx, id)
		fs.requests += Attempts(resp, err)
		if err != nil && !errors.Is(err, sdclient.ErrNotFound) {
			return fmt.Errorf("full sync of the %s: re-read ticket %d it did not return: %w", m.name(), id, err)
		}
		m.mu.Lock()
		if err != nil || (!m.put(t) && t.Deleted) {
			m.remove(id)
		}
		m.mu.Unlock()
	}
	return nil
}

// openQueries returns filter queries that together select every open
// status, each within the desk's query length limit.
func openQueries(open []int) ([]string, error) {
	var out []string
	var cur []filter.Expr
	flush := func() {
		if len(cur) == 0 {
			return
		}
		var e filter.Expr = cur[0]
		if len(cur) > 1 {
			e = &filter.Or{Exprs: slices.Clone(cur)}
		}
		out = append(out, e.String())
		cur = cur[:0]
	}
	for _, st := range open {
		term := &filter.Term{Field: "status", Op: filter.OpEq, Value: filter.Number(int64(st))}
		cur = append(cur, term)
		if filter.CheckLen(&filter.Or{Exprs: cur}) != nil {
			cur = cur[:len(cur)-1]
			flush()
			cur = append(cur, term)
		}
	}
	flush()
	if len(out) == 0 {
		return nil, errors.New("full sync: the desk has no open status")
	}
	return out, nil
}

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// feedPageSize is the per_page of the change feed (the desk's maximum).
const feedPageSize = 100

// maxFeedPages bounds one sync of one workspace's feed; a longer backlog
// (deskbot was down for days) carries on in the next cycle.
const maxFeedPages = 500

// SyncResult says what the sync step of a cycle did.
type SyncResult struct {
	// Complete is true when every workspace's feed caught up and every
	// mirror holds all open tickets (a full sync finished): only then may
	// a ticket's absence from a rule's matches end its episode.
	Complete bool
	Err      error // why the sync is incomplete
	Requests int   // desk requests of the feed and the sweeps (retries included)
	// FullSyncRequests is what a full sync the cycle waited for spent
	// (RunCycle); a scheduled cycle leaves full syncs to the background.
	FullSyncRequests int
	Decoded          int // tickets the desk sent
	Changed          int // tickets new or changed in the mirror
	Removed          int // tickets that left the mirror (deleted, spam)
	Tickets          int // tickets in the mirror after the sync
	// Syncing is how far a full sync under way has come (Total -1 before
	// its first page); zero when none runs.
	Syncing []FullSyncProgress

	changed []*sdclient.Ticket // the feed's changed tickets, for the subscribers (followers.go)
}

// FullSyncProgress is the progress of one workspace's full sync.
type FullSyncProgress struct {
	Workspace string // the workspace's name in logs
	Seen      int    // tickets read so far
	Total     int    // open tickets the desk reported; -1 before the first page
}

// sync brings every workspace's mirror up to date: it reloads a mirror
// another replica changed (a new leader), starts a full sync where one is
// due (inline: wait for it, as RunOnce does; else in the background),
// follows the change feed from the cursor and, now and then, sweeps the
// deleted and spam tickets out.
func (s *Scheduler) sync(ctx context.Context, cy *cycle, inline bool) *SyncResult {
	res := &SyncResult{Complete: true}
	// A ticket showed an open status the cache does not know: re-read
	// them now (they make the full sync's query; the periodic refresh
	// comes with the full sync, so quiet cycles spend nothing on it).
	if s.statuses.isStale() {
		if _, err := s.statuses.get(ctx, s, cy, false); err != nil {
			res.Complete, res.Err = false, err
			return res
		}
	}
	states, err := s.ms.MirrorStates(ctx)
	if err != nil {
		res.Complete, res.Err = false, fmt.Errorf("read the mirror state: %w", err)
		return res
	}
	for _, m := range s.mirrors {
		if err := s.syncWS(ctx, cy, m, states[m.ws].Version, inline, res); err != nil {
			res.Complete = false
			res.Err = errors.Join(res.Err, err)
		}
		m.mu.Lock()
		res.Tickets += len(m.tickets)
		if !m.state.Complete {
			res.Complete = false
		}
		if p := m.full; p != nil {
			res.Syncing = append(res.Syncing, FullSyncProgress{Workspace: m.name(), Seen: p.seen, Total: p.total})
		}
		m.mu.Unlock()
	}
	s.m.mirrorTickets.Set(float64(res.Tickets))
	s.publish(ctx, res)
	return res
}

// syncWS brings one workspace's mirror up to date: it reloads the mirror
// when another replica wrote it, runs a full sync when one is due (inline,
// or in the background), then follows the change feed and sweeps the trash.
func (s *Scheduler) syncWS(ctx context.Context, cy *cycle, m *wsMirror, stored int64, inline bool, res *SyncResult) error {
	now := s.cfg.clock.Now()
	due, err := s.prepareMirror(ctx, cy, m, stored, now)
	if err != nil {
		return err
	}
	if due {
		if err := s.startFullSync(ctx, m, inline, res); err != nil {
			return err
		}
	}
	m.mu.Lock()
	started := !m.state.Cursor.IsZero()
	m.mu.Unlock()
	if !started {
		return fmt.Errorf("the %s: the first full sync has not read its first page yet", m.name())
	}
	return s.followFeed(ctx, cy, m, now, res)
}

// prepareMirror (re)loads m from the store when needed, and reports
// whether a full sync is due at now (then marked under way).
func (s *Scheduler) prepareMirror(ctx context.Context, cy *cycle, m *wsMirror, stored int64, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Versions only grow: a stored one above ours, or one skipped by our
	// own last write (see persist), means another replica wrote.
	if !m.loaded || m.stale || stored > m.state.Version {
		if m.loaded {
			cy.log.Info("the mirror changed in the store (another replica led); reloading it", slog.String("workspace", m.name()))
		}
		if err := m.load(ctx, s.ms); err != nil {
			return false, err
		}
		if m.nextFull.IsZero() && !m.state.FullSyncAt.IsZero() {
			m.nextFull = m.state.FullSyncAt.Add(s.cfg.fullSyncEvery)
		}
	}
	due := m.full == nil && (!m.state.Complete || (!m.nextFull.IsZero() && !now.Before(m.nextFull))) &&
		(m.fullFailed.IsZero() || now.Sub(m.fullFailed) >= fullSyncRetry)
	if due {
		m.full = &fullProgress{started: now, total: -1}
		m.nextTrash = now.Add(s.cfg.trashEvery) // the full sync drops them
	}
	return due, nil
}

// startFullSync runs a due full sync of m: inline (RunCycle), or in the
// background, kicking a cycle when a first full sync finishes. A first
// full sync in the background makes the cycle's sync incomplete.
func (s *Scheduler) startFullSync(ctx context.Context, m *wsMirror, inline bool, res *SyncResult) error {
	if inline {
		n, err := s.fullSync(ctx, m)
		res.FullSyncRequests += n
		return err
	}
	first := !m.state.Complete && m.state.Cursor.IsZero()
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		if _, err := s.fullSync(s.baseCtx, m); err == nil && first {
			// Run every rule on the whole mirror now rather than
			// at the next tick.
			s.runCycle(s.baseCtx, kicked)
		}
	}()
	if first {
		return fmt.Errorf("the %s: %w", m.name(), errFirstSync)
	}
	return nil
}

// followFeed reads the change feed into m, sweeps the trash when due, and
// saves what changed.
func (s *Scheduler) followFeed(ctx context.Context, cy *cycle, m *wsMirror, now time.Time, res *SyncResult) error {
	err := s.feed(ctx, cy, m, res)
	if err == nil && !now.Before(m.nextTrash) {
		if err = s.sweepTrash(ctx, cy, m, res); err == nil {
			m.nextTrash = now.Add(s.cfg.trashEvery)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if perr := m.persist(ctx, s.ms); perr != nil {
		err = errors.Join(err, perr)
	}
	return err
}

// feed follows GET /tickets?updated_since=CURSOR ordered by updated_at
// ascending, a page of 100 at a time, until a short page. After each full
// page it asks again from the page's newest updated_at (keyset paging:
// tickets updated meanwhile move to the end instead of shifting an unread
// one onto a page already read); when a whole page shares one second it
// turns to the next page number instead. A desk that ignores order_by is
// paged by number to the end. The cursor becomes the newest updated_at the
// desk returned, or its Date at the first request if later (its clock,
// never ours), less the overlap; duplicates are dropped by (id,
// updated_at).
func (s *Scheduler) feed(ctx context.Context, cy *cycle, m *wsMirror, res *SyncResult) error {
	m.mu.Lock()
	since := m.state.Cursor
	m.mu.Unlock()
	var newest, asked time.Time
	ordered := true
	page := 1
	for n := 1; ; n++ {
		list, resp, err := s.listChanged(ctx, cy, m, res, "", since, page)
		if err != nil {
			// What arrived is applied; the cursor stays, so it is asked again.
			return fmt.Errorf("follow the change feed of the %s: %w", m.name(), err)
		}
		if n == 1 {
			asked = deskDate(resp)
		}
		s.m.feedDecoded.Add(float64(len(list)))
		m.mu.Lock()
		for i, t := range list {
			if t == nil {
				continue
			}
			if i > 0 && list[i-1] != nil && t.UpdatedAt.Before(list[i-1].UpdatedAt) {
				ordered = false
			}
			newest = maxTime(newest, t.UpdatedAt)
			if s.statuses.notice(t) {
				cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", t.ID), slog.Int("status", t.Status))
			}
			if m.put(t) {
				res.Changed++
				s.noteChange(res, t)
			}
		}
		m.mu.Unlock()
		if len(list) < feedPageSize {
			break
		}
		if n >= maxFeedPages {
			cy.log.Warn("change feed backlog longer than one sync reads; continuing next cycle",
				slog.String("workspace", m.name()), slog.Int("pages", n))
			if !ordered {
				return nil // the newest of an unordered answer is not a safe cursor
			}
			break
		}
		if last := list[len(list)-1]; ordered && last != nil && last.UpdatedAt.After(since) {
			since, page = last.UpdatedAt, 1
		} else {
			page++
		}
	}
	if !ordered {
		s.m.feedUnordered.Inc()
	}
	// Every change the desk had made by the time of the first request
	// (its Date header) was in the answer, less what committed late with
	// an earlier timestamp, which the overlap covers: on a quiet desk the
	// cursor follows the desk's clock instead of re-reading the last busy
	// second's tickets for ever.
	newest = maxTime(newest, asked)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := newest.Add(-s.cfg.feedOverlap); !newest.IsZero() && c.After(m.state.Cursor) {
		m.state.Cursor = c
	}
	s.m.feedLag.Set(s.cfg.clock.Now().Sub(m.state.Cursor).Seconds())
	return nil
}

// listChanged reads one page of m's tickets updated since, oldest first:
// the change feed (preset "") or a trash preset (deleted, spam). It counts
// the requests and the tickets decoded.
func (s *Scheduler) listChanged(ctx context.Context, cy *cycle, m *wsMirror, res *SyncResult, preset string, since time.Time, page int) ([]*sdclient.Ticket, *sdclient.Response, error) {
	opts := &sdclient.TicketListOptions{Filter: preset, UpdatedSince: &since, OrderBy: "updated_at", OrderType: "asc",
		WorkspaceID: m.param, ListOptions: sdclient.ListOptions{Page: page, PerPage: feedPageSize}}
	list, resp, err := s.desk.ListTickets(ctx, opts)
	s.count(cy, resp, err)
	res.Requests += attempts(resp, err)
	if err == nil {
		res.Decoded += len(list)
	}
	return list, resp, err
}

// sweepTrash removes the tickets the desk soft-deleted or marked as spam
// since the last sweep: they vanish from the change feed without a trace.
func (s *Scheduler) sweepTrash(ctx context.Context, cy *cycle, m *wsMirror, res *SyncResult) error {
	m.mu.Lock()
	since := m.state.TrashCursor
	m.mu.Unlock()
	var newest, asked time.Time
	for _, preset := range []string{"deleted", "spam"} {
		for page := 1; page <= maxFeedPages; page++ {
			list, resp, err := s.listChanged(ctx, cy, m, res, preset, since, page)
			if err != nil {
				return fmt.Errorf("read the %s tickets of the %s: %w", preset, m.name(), err)
			}
			if asked.IsZero() {
				asked = deskDate(resp)
			}
			m.mu.Lock()
			for _, t := range list {
				if t == nil {
					continue
				}
				newest = maxTime(newest, t.UpdatedAt)
				if have, ok := m.tickets[t.ID]; ok && have.UpdatedAt.After(t.UpdatedAt) {
					continue // restored since
				}
				if m.remove(t.ID) {
					res.Removed++
				}
			}
			m.mu.Unlock()
			if len(list) < feedPageSize {
				break
			}
		}
	}
	newest = maxTime(newest, asked)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := newest.Add(-s.cfg.feedOverlap); !newest.IsZero() && c.After(m.state.TrashCursor) {
		m.state.TrashCursor = c
	}
	return nil
}

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
func (s *Scheduler) fullSync(ctx context.Context, m *wsMirror) (requests int, err error) {
	fs := &fullSyncRun{log: s.logger.With(slog.String("workspace", m.name())), started: time.Now(), seen: map[int64]bool{},
		readBy: readBySearch, all: -1}
	m.mu.Lock()
	fs.prog = m.full
	fs.startCursor = m.state.Cursor
	m.mu.Unlock()
	defer func() { s.fullSyncEnded(m, fs.log, fs.requests, err) }()
	open, err := s.statuses.get(ctx, s, nil, false)
	if err != nil {
		return 0, err
	}
	queries, err := openQueries(open)
	if err != nil {
		return 0, err
	}
	fs.log.Info("full sync of the mirror started", slog.Bool("first", !m.state.Complete))
	for i, q := range queries {
		err := s.fullSyncQuery(ctx, m, q, fs)
		var turn *turnToList
		if errors.As(err, &turn) {
			err = s.fullSyncPastCap(ctx, m, queries[i:], fs, turn)
		}
		if err != nil {
			return fs.requests, err
		}
		if fs.readBy != readBySearch {
			break
		}
	}
	err = s.fullSyncFinish(ctx, m, fs)
	return fs.requests, err
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
func (s *Scheduler) fullSyncEnded(m *wsMirror, log *slog.Logger, requests int, err error) {
	m.mu.Lock()
	m.full = nil
	if err != nil {
		m.fullFailed = s.cfg.clock.Now()
	} else {
		m.fullFailed = time.Time{}
	}
	m.mu.Unlock()
	s.m.fullSyncRequests.Add(float64(requests))
	if err != nil {
		s.m.fullSyncs.WithLabelValues("failed").Inc()
		log.Error("full sync of the mirror failed; retrying later", slog.Any("error", err),
			slog.Int("requests", requests), slog.Duration("retry_in", fullSyncRetry))
	}
}

// fullSyncQuery pages one filter query of a full sync into m until the
// total.
func (s *Scheduler) fullSyncQuery(ctx context.Context, m *wsMirror, q string, fs *fullSyncRun) error {
	total, pageSize, got := -1, 0, 0
	for page := 1; ; page++ {
		p, resp, err := s.desk.FilterTickets(ctx, q, &sdclient.FilterOptions{WorkspaceID: m.param, Page: page})
		fs.requests += attempts(resp, err)
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
		n, err := s.fullSyncPage(ctx, m, p.Tickets, fs, fs.done+total)
		if err != nil {
			return err
		}
		got += n
		s.m.fullSyncProgress.WithLabelValues(m.name()).Set(float64(len(fs.seen)))
		s.m.fullSyncTotal.WithLabelValues(m.name()).Set(float64(fs.done + total))
		if page%50 == 0 {
			fs.log.Info("full sync of the mirror under way", slog.Int("seen", len(fs.seen)), slog.Int("total", fs.done+total))
		}
		pageSize = max(pageSize, len(p.Tickets))
		fs.pageSize = max(fs.pageSize, pageSize)
		if page == 1 {
			if why := s.listIsCheaper(ctx, m, fs, total-got, pageSize); why != "" {
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
func (s *Scheduler) fullSyncPage(ctx context.Context, m *wsMirror, tickets []*sdclient.Ticket, fs *fullSyncRun, total int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.startFeedCursor(m, fs)
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
	return got, m.persist(ctx, s.ms)
}

// startFeedCursor starts the feed's cursor of m at the desk's time at the
// sync's first page (from then on every change reaches the feed), if it
// has none yet. Caller holds m.mu.
func (s *Scheduler) startFeedCursor(m *wsMirror, fs *fullSyncRun) {
	if m.state.Cursor.IsZero() && !fs.deskStart.IsZero() {
		m.state.Cursor = fs.deskStart.Add(-s.cfg.feedOverlap)
		m.state.TrashCursor = m.state.Cursor
	}
}

// fullSyncFinish ends a full sync whose pages are all read: it starts the
// feed's cursor if no page could, re-reads the open tickets the sync did
// not return, drops old closed ones, and marks the mirror complete.
func (s *Scheduler) fullSyncFinish(ctx context.Context, m *wsMirror, fs *fullSyncRun) error {
	now := s.cfg.clock.Now()
	m.mu.Lock()
	if m.state.Cursor.IsZero() {
		// The desk sent no Date header: start from the newest change it
		// showed, less the time the sync took (a duration, so whatever
		// the offset between the clocks) and the overlap.
		m.state.Cursor = fs.newest.Add(-time.Since(fs.started) - s.cfg.feedOverlap)
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
		case t.UpdatedAt.Before(m.state.Cursor.Add(-s.cfg.closedKeep)):
			m.remove(id)
		}
	}
	m.mu.Unlock()
	slices.Sort(suspects)
	if err := s.rereadSuspects(ctx, m, suspects, fs); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Complete, m.state.FullSyncAt = true, now
	m.nextFull = now.Add(s.cfg.fullSyncEvery)
	if fs.shifted {
		m.nextFull = now.Add(min(s.cfg.fullSyncEvery, shiftedFullSyncAgain))
	}
	if err := m.persist(ctx, s.ms); err != nil {
		return err
	}
	s.m.fullSyncs.WithLabelValues("complete").Inc()
	fs.log.Info("full sync of the mirror complete", slog.Int("tickets", len(m.tickets)), slog.Int("requests", fs.requests),
		slog.String("read_by", fs.readBy), slog.String("why", fs.why),
		slog.Int("re_read", len(suspects)), slog.Bool("result_moved_while_paging", fs.shifted),
		slog.Duration("took", time.Since(fs.started).Round(time.Millisecond)), slog.Time("next", m.nextFull))
	return nil
}

// rereadSuspects re-reads the mirrored open tickets a full sync did not
// return: gone ones leave the mirror, the others are refreshed.
func (s *Scheduler) rereadSuspects(ctx context.Context, m *wsMirror, suspects []int64, fs *fullSyncRun) error {
	for _, id := range suspects {
		t, resp, err := s.desk.GetTicket(ctx, id)
		fs.requests += attempts(resp, err)
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

// deskDate is the desk's clock as its Date header says, zero without one.
func deskDate(resp *sdclient.Response) time.Time {
	if resp == nil || resp.Response == nil {
		return time.Time{}
	}
	t, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// attempts is how many requests one desk call sent.
func attempts(resp *sdclient.Response, err error) int {
	if resp != nil {
		return max(resp.Attempts, 1)
	}
	if err == nil {
		return 1
	}
	return 0
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// feedPageSize is the per_page of the change feed (the desk's maximum).
const feedPageSize = 100

// maxFeedPages bounds one sync of one workspace's feed; a longer backlog
// (deskbot was down for days) carries on in the next cycle.
const maxFeedPages = 500

// Synced says what one sync did.
type Synced struct {
	// Complete is true when every workspace's feed caught up and every
	// mirror holds all open tickets (a full sync finished): only then may
	// a ticket's absence from a rule's matches end its episode.
	Complete bool
	Err      error // why the sync is incomplete
	Requests int   // desk requests of the feed and the sweeps (retries included)
	// FullSyncRequests is what a full sync the sync waited for spent
	// (Inline); otherwise full syncs run in the background.
	FullSyncRequests int
	Decoded          int // tickets the desk sent
	Changed          int // tickets new or changed in the mirror
	Removed          int // tickets that left the mirror (deleted, spam)
	Tickets          int // tickets in the mirror after the sync
	// Syncing is how far a full sync under way has come (Total -1 before
	// its first page); zero when none runs.
	Syncing []FullSyncProgress
	// ChangedTickets are the tickets the change feed changed in the
	// mirror, as it read them (Changed counts them), in the order read;
	// RemovedIDs the tickets the sweep of the deleted and spam ones took
	// out (Removed counts them).
	ChangedTickets []*sdclient.Ticket
	RemovedIDs     []int64
	trashed        []*sdclient.Ticket // the sweep's tickets of RemovedIDs, for Changes.Gone
	observed       []*sdclient.Ticket // for Changes.Observed (and Gone)
}

// FullSyncProgress is the progress of one workspace's full sync.
type FullSyncProgress struct {
	Workspace string // the workspace's name in logs
	Seen      int    // tickets read so far
	Total     int    // open tickets the desk reported; -1 before the first page
}

// ErrFirstSync says that a mirror's first full sync is still under way
// (in the background): expected on a first start, so that a sync
// incomplete for it alone is worth an info line, not a warning.
var ErrFirstSync = errors.New("the first full sync of the mirror is under way")

// IncompleteLevel is the level of a line about an incomplete sync or
// cycle: info when the only cause is a first full sync under way.
func IncompleteLevel(err error) slog.Level {
	if onlyFirstSync(err) {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// onlyFirstSync reports whether err is ErrFirstSync, wrapped, or errors
// joined that all are.
func onlyFirstSync(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, x := range errs {
			if !onlyFirstSync(x) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return onlyFirstSync(e.Unwrap())
	}
	return err == ErrFirstSync
}

// SyncOption configures one Sync.
type SyncOption func(*syncConfig)

type syncConfig struct {
	inline bool
	count  func(resp *sdclient.Response, err error)
	notify []Subscriber
}

// Inline makes Sync run a due full sync itself and wait for it (RunCycle,
// tests, benchmarks) instead of starting it in the background.
func Inline() SyncOption { return func(c *syncConfig) { c.inline = true } }

// Count calls fn after every desk request the sync sends on its own
// behalf (the change feed, the sweeps, a re-read of the open statuses:
// resp and err nil), so that the caller's request budget sees each as it
// goes. Full syncs count theirs in FullSyncRequests and the metrics.
func Count(fn func(resp *sdclient.Response, err error)) SyncOption {
	return func(c *syncConfig) { c.count = fn }
}

// Notify adds subscribers for this sync only, called after those of
// WithSubscriber.
func Notify(subs ...Subscriber) SyncOption {
	return func(c *syncConfig) { c.notify = append(c.notify, subs...) }
}

// Sync brings every workspace's mirror up to date: it reloads a mirror
// another replica changed (a new leader), starts a full sync where one is
// due (Inline: waits for it; else in the background), follows the change
// feed from the cursor and, now and then, sweeps the deleted and spam
// tickets out. Then it tells the subscribers what the feed changed. An
// incomplete sync says why in Err; what it read is applied all the same.
func (f *Feed) Sync(ctx context.Context, opts ...SyncOption) *Synced {
	var sc syncConfig
	for _, o := range opts {
		if o != nil {
			o(&sc)
		}
	}
	res := f.syncAll(ctx, &sc)
	f.m.mirrorTickets.Set(float64(res.Tickets))
	if subs := append(slices.Clip(f.cfg.subscribers), sc.notify...); len(subs) > 0 {
		c := Changes{Tickets: live(res.ChangedTickets), Complete: res.Complete, Gone: gone(res),
			Observed: live(res.observed)}
		for _, sub := range subs {
			sub.FeedChanged(ctx, c)
		}
	}
	return res
}

// live are the tickets of ts that are neither deleted nor spam: what the
// subscribers are told changed.
func live(ts []*sdclient.Ticket) []*sdclient.Ticket {
	out := make([]*sdclient.Ticket, 0, len(ts))
	for _, t := range ts {
		if t != nil && !t.Deleted && !t.Spam {
			out = append(out, t)
		}
	}
	return out
}

// gone are the tickets res took out of the mirror as deleted or spam.
func gone(res *Synced) []*sdclient.Ticket {
	var out []*sdclient.Ticket
	for _, t := range slices.Concat(res.ChangedTickets, res.observed) {
		if t != nil && (t.Deleted || t.Spam) {
			out = append(out, t)
		}
	}
	return append(out, res.trashed...)
}

// syncAll is Sync before the subscribers.
func (f *Feed) syncAll(ctx context.Context, sc *syncConfig) *Synced {
	res := &Synced{Complete: true}
	// A ticket showed an open status the cache does not know: re-read
	// them now (they make the full sync's query; the periodic refresh
	// comes with the full sync, so quiet cycles spend nothing on it).
	if f.statusesStale() {
		sent := func() {
			if sc.count != nil {
				sc.count(nil, nil)
			}
		}
		if _, err := f.openStatuses(ctx, false, sent); err != nil {
			res.Complete, res.Err = false, err
			return res
		}
	}
	states, err := f.ms.MirrorStates(ctx)
	if err != nil {
		res.Complete, res.Err = false, fmt.Errorf("read the mirror state: %w", err)
		return res
	}
	for _, m := range f.mirrors {
		if err := f.syncWS(ctx, sc, m, states[m.ws].Version, res); err != nil {
			res.Complete = false
			res.Err = errors.Join(res.Err, err)
		}
		m.mu.Lock()
		res.observed = append(res.observed, m.observed...)
		m.observed = nil
		res.Tickets += len(m.tickets)
		if !m.state.Complete {
			res.Complete = false
		}
		if p := m.full; p != nil {
			res.Syncing = append(res.Syncing, FullSyncProgress{Workspace: m.name(), Seen: p.seen, Total: p.total})
		}
		m.mu.Unlock()
	}
	return res
}

// syncWS brings one workspace's mirror up to date: it reloads the mirror
// when another replica wrote it, runs a full sync when one is due (inline,
// or in the background), then follows the change feed and sweeps the trash.
func (f *Feed) syncWS(ctx context.Context, sc *syncConfig, m *wsMirror, stored int64, res *Synced) error {
	now := f.cfg.clock.Now()
	due, err := f.prepareMirror(ctx, m, stored, now)
	if err != nil {
		return err
	}
	if due {
		if err := f.startFullSync(ctx, m, sc.inline, res); err != nil {
			return err
		}
	}
	m.mu.Lock()
	started := !m.state.Cursor.IsZero()
	m.mu.Unlock()
	if !started {
		return fmt.Errorf("the %s: the first full sync has not read its first page yet", m.name())
	}
	return f.followFeed(ctx, sc, m, now, res)
}

// prepareMirror (re)loads m from the store when needed, and reports
// whether a full sync is due at now (then marked under way).
func (f *Feed) prepareMirror(ctx context.Context, m *wsMirror, stored int64, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Versions only grow: a stored one above ours, or one skipped by our
	// own last write (see persist), means another replica wrote.
	if !m.loaded || m.stale || stored > m.state.Version {
		if m.loaded {
			f.cfg.logger.Info("the mirror changed in the store (another replica led); reloading it", slog.String("workspace", m.name()))
		}
		if err := m.load(ctx, f.ms); err != nil {
			return false, err
		}
		if m.nextFull.IsZero() && !m.state.FullSyncAt.IsZero() {
			m.nextFull = m.state.FullSyncAt.Add(f.cfg.fullSyncEvery)
		}
	}
	due := m.full == nil && (!m.state.Complete || (!m.nextFull.IsZero() && !now.Before(m.nextFull))) &&
		(m.fullFailed.IsZero() || now.Sub(m.fullFailed) >= fullSyncRetry)
	if due {
		m.full = &fullProgress{started: now, total: -1}
		m.nextTrash = now.Add(f.cfg.trashEvery) // the full sync drops them
	}
	return due, nil
}

// startFullSync runs a due full sync of m: inline, or in the background,
// calling WithFirstSynced's function when a first full sync finishes. A first
// full sync in the background makes the cycle's sync incomplete.
func (f *Feed) startFullSync(ctx context.Context, m *wsMirror, inline bool, res *Synced) error {
	if inline {
		n, err := f.fullSync(ctx, m)
		res.FullSyncRequests += n
		return err
	}
	first := !m.state.Complete && m.state.Cursor.IsZero()
	f.cfg.background(func(ctx context.Context) {
		if _, err := f.fullSync(ctx, m); err == nil && first && f.cfg.firstSynced != nil {
			// Run every rule on the whole mirror now rather than
			// at the next tick.
			f.cfg.firstSynced(ctx)
		}
	})
	if first {
		return fmt.Errorf("the %s: %w", m.name(), ErrFirstSync)
	}
	return nil
}

// followFeed reads the change feed into m, sweeps the trash when due, and
// saves what changed.
func (f *Feed) followFeed(ctx context.Context, sc *syncConfig, m *wsMirror, now time.Time, res *Synced) error {
	err := f.follow(ctx, sc, m, res)
	if err == nil && !now.Before(m.nextTrash) {
		if err = f.sweepTrash(ctx, sc, m, res); err == nil {
			m.nextTrash = now.Add(f.cfg.trashEvery)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if perr := m.persist(ctx, f.ms); perr != nil {
		err = errors.Join(err, perr)
	}
	return err
}

// follow follows GET /tickets?updated_since=CURSOR ordered by updated_at
// ascending, a page of 100 at a time, until a short page. After each full
// page it asks again from the page's newest updated_at (keyset paging:
// tickets updated meanwhile move to the end instead of shifting an unread
// one onto a page already read); when a whole page shares one second it
// turns to the next page number instead. A desk that ignores order_by is
// paged by number to the end. The cursor becomes the newest updated_at the
// desk returned, or its Date at the first request if later (its clock,
// never ours), less the overlap; duplicates are dropped by (id,
// updated_at).
func (f *Feed) follow(ctx context.Context, sc *syncConfig, m *wsMirror, res *Synced) error {
	m.mu.Lock()
	since := m.state.Cursor
	m.mu.Unlock()
	var newest, asked time.Time
	ordered := true
	page := 1
	for n := 1; ; n++ {
		list, resp, err := f.listChanged(ctx, sc, m, res, "", since, page)
		if err != nil {
			// What arrived is applied; the cursor stays, so it is asked again.
			return fmt.Errorf("follow the change feed of the %s: %w", m.name(), err)
		}
		if n == 1 {
			asked = deskDate(resp)
		}
		f.m.feedDecoded.Add(float64(len(list)))
		m.mu.Lock()
		for i, t := range list {
			if t == nil {
				continue
			}
			if i > 0 && list[i-1] != nil && t.UpdatedAt.Before(list[i-1].UpdatedAt) {
				ordered = false
			}
			newest = maxTime(newest, t.UpdatedAt)
			if f.NoticeStatus(t) {
				f.cfg.logger.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", t.ID), slog.Int("status", t.Status))
			}
			if m.put(t) {
				res.Changed++
				res.ChangedTickets = append(res.ChangedTickets, t)
			}
		}
		m.mu.Unlock()
		if len(list) < feedPageSize {
			break
		}
		if n >= maxFeedPages {
			f.cfg.logger.Warn("change feed backlog longer than one sync reads; continuing next cycle",
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
		f.m.feedUnordered.Inc()
	}
	// Every change the desk had made by the time of the first request
	// (its Date header) was in the answer, less what committed late with
	// an earlier timestamp, which the overlap covers: on a quiet desk the
	// cursor follows the desk's clock instead of re-reading the last busy
	// second's tickets for ever.
	newest = maxTime(newest, asked)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := newest.Add(-f.cfg.overlap); !newest.IsZero() && c.After(m.state.Cursor) {
		m.state.Cursor = c
	}
	f.m.feedLag.Set(f.cfg.clock.Now().Sub(m.state.Cursor).Seconds())
	return nil
}

// listChanged reads one page of m's tickets updated since, oldest first:
// the change feed (preset "") or a trash preset (deleted, spam). It counts
// the requests and the tickets decoded.
func (f *Feed) listChanged(ctx context.Context, sc *syncConfig, m *wsMirror, res *Synced, preset string, since time.Time, page int) ([]*sdclient.Ticket, *sdclient.Response, error) {
	opts := &sdclient.TicketListOptions{Filter: preset, UpdatedSince: &since, OrderBy: "updated_at", OrderType: "asc",
		WorkspaceID: m.param, ListOptions: sdclient.ListOptions{Page: page, PerPage: feedPageSize}}
	list, resp, err := f.desk.ListTickets(ctx, opts)
	if sc.count != nil {
		sc.count(resp, err)
	}
	res.Requests += Attempts(resp, err)
	if err == nil {
		res.Decoded += len(list)
	}
	return list, resp, err
}

// sweepTrash removes the tickets the desk soft-deleted or marked as spam
// since the last sweep: they vanish from the change feed without a trace.
func (f *Feed) sweepTrash(ctx context.Context, sc *syncConfig, m *wsMirror, res *Synced) error {
	m.mu.Lock()
	since := m.state.TrashCursor
	m.mu.Unlock()
	var newest, asked time.Time
	for _, preset := range []string{"deleted", "spam"} {
		for page := 1; page <= maxFeedPages; page++ {
			list, resp, err := f.listChanged(ctx, sc, m, res, preset, since, page)
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
					res.RemovedIDs = append(res.RemovedIDs, t.ID)
					res.trashed = append(res.trashed, t)
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
	if c := newest.Add(-f.cfg.overlap); !newest.IsZero() && c.After(m.state.TrashCursor) {
		m.state.TrashCursor = c
	}
	return nil
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

// Attempts is how many requests one desk call sent (retries included):
// resp's count, else one when the call succeeded without a response.
func Attempts(resp *sdclient.Response, err error) int {
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

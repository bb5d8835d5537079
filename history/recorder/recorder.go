// Package recorder records the ticket history (package history) as the
// change feed applies changes to the mirror: a feed.Subscriber (registered
// with scheduler.WithSubscriber) that appends each sync's changes in one
// transaction, records the starting state from the full syncs (tickets the
// history does not hold yet), and prunes what is older than the retention
// as it goes (DESKBOT_HISTORY). It spends no desk request: it keeps what the
// feed read anyway.
package recorder

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/sdclient"
)

// Store is what the recorder needs of the state store (*store.Store).
type Store interface {
	AppendHistory(ctx context.Context, recs []history.Record) error
	HistoryLive(ctx context.Context, ids []int64) (map[int64]bool, error)
	PruneHistory(ctx context.Context, horizon time.Time, limit int) (int, error)
	ClearHistory(ctx context.Context, limit int) (int, error)
	Start(ctx context.Context) (time.Time, error)
}

// DefaultRetention is how long the history is kept without WithRetention
// (DESKBOT_HISTORY's default): 30 days.
const DefaultRetention = 720 * time.Hour

type config struct {
	retention  time.Duration
	now        func() time.Time
	logger     *slog.Logger
	pruneEvery time.Duration
	pruneBatch int
	pruneSteps int
}

// Option configures a Recorder.
type Option func(*config)

// WithRetention keeps the history for d (default DefaultRetention); 0
// keeps none: nothing is recorded and what was is removed.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithClock sets the clock that decides when to prune and the horizon
// (default time.Now); recorded times are the desk's (updated_at) or the
// feed's (a full sync's).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithLogger logs through l (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithPrune prunes every interval (default an hour), batch rows per
// statement (default 1000), at most steps statements per sync (default 20;
// a longer prune carries on at the next sync), so that no sync waits long.
func WithPrune(every time.Duration, batch, steps int) Option {
	return func(c *config) { c.pruneEvery, c.pruneBatch, c.pruneSteps = every, max(batch, 1), max(steps, 1) }
}

// Recorder records the history; see the package doc.
type Recorder struct {
	st  Store
	cfg config

	mu        sync.Mutex // serialises the sync's and the full sync's writes, and the prune state
	nextPrune time.Time  // zero: at the first sync
	// started: the history holds a starting state (a full sync recorded
	// it, in this process or an earlier one). Until then a sync's changes
	// are not recorded: the first full sync's starting state holds them,
	// and a history that began with a few changes before it would be
	// replayed as a desk of those few tickets.
	started bool
	// starts are the times of the tickets' starting states recorded in
	// the last hour (startsKeep). The desk stamps changes in whole
	// seconds and the feed reads them with a lag, so a change the mirror
	// did not hold yet when a full sync's starting state was taken can
	// carry an updated_at before that state's time; it is recorded just
	// after it instead, so that the replay does not put the older state
	// back over it.
	starts     map[int64]time.Time
	startsTook time.Time
}

// startsKeep is how long the starting states' times are kept for
// FeedChanged: far longer than the feed's lag behind the desk.
const startsKeep = time.Hour

var _ feed.FullSyncSubscriber = (*Recorder)(nil)

// New returns a Recorder writing to st.
func New(st Store, opts ...Option) *Recorder {
	cfg := config{retention: DefaultRetention, now: time.Now, logger: slog.Default(), pruneEvery: time.Hour,
		pruneBatch: 1000, pruneSteps: 20}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return &Recorder{st: st, cfg: cfg}
}

// FeedChanged records what one sync changed (one transaction), then prunes
// when due. A failed write is logged: the history misses those changes
// (the backtest says history is approximate where it has gaps), the feed
// carries on.
func (r *Recorder) FeedChanged(ctx context.Context, c feed.Changes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.retention > 0 && r.startedLocked(ctx) {
		recs := make([]history.Record, 0, len(c.Tickets)+len(c.Observed)+len(c.Gone))
		recs = r.appendRecords(recs, c.Tickets, false)
		recs = r.appendRecords(recs, c.Observed, false)
		recs = r.appendRecords(recs, c.Gone, true)
		if len(recs) > 0 {
			if err := r.st.AppendHistory(ctx, recs); err != nil {
				r.cfg.logger.Warn("could not record the ticket history of this sync", slog.Int("records", len(recs)), slog.Any("error", err))
			}
		}
	}
	r.pruneLocked(ctx)
}

// appendRecords appends the records of ts, each at its updated_at, or
// just after its ticket's starting state when that came later (starts).
// Caller holds mu.
func (r *Recorder) appendRecords(recs []history.Record, ts []*sdclient.Ticket, gone bool) []history.Record {
	if len(r.starts) > 0 && r.cfg.now().Sub(r.startsTook) > startsKeep {
		r.starts = nil
	}
	for _, t := range ts {
		if t == nil || t.ID <= 0 || t.UpdatedAt.IsZero() {
			continue
		}
		at := t.UpdatedAt
		if s, ok := r.starts[t.ID]; ok {
			if at.After(s) {
				delete(r.starts, t.ID) // later changes come in order
			} else {
				at = s.Add(time.Microsecond) // the store keeps microseconds
			}
		}
		recs = append(recs, history.Record{At: at, Ticket: history.Trim(t), Gone: gone})
	}
	return recs
}

// FeedFullSynced records the starting state: each ticket of a complete full
// sync that the history does not hold (never recorded, or last recorded as
// gone), as of at (or its updated_at, if later).
func (r *Recorder) FeedFullSynced(ctx context.Context, at time.Time, tickets []*sdclient.Ticket) {
	if r.cfg.retention <= 0 || len(tickets) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int64, 0, len(tickets))
	for _, t := range tickets {
		if t != nil {
			ids = append(ids, t.ID)
		}
	}
	live, err := r.st.HistoryLive(ctx, ids)
	if err != nil {
		r.cfg.logger.Warn("could not record the tickets' starting state", slog.Any("error", err))
		return
	}
	var recs []history.Record
	for _, t := range tickets {
		if t == nil || t.ID <= 0 || live[t.ID] {
			continue
		}
		recs = append(recs, history.Record{At: maxTime(at, t.UpdatedAt), Ticket: history.Trim(t)})
	}
	if len(recs) == 0 {
		r.started = true
		return
	}
	if err := r.st.AppendHistory(ctx, recs); err != nil {
		r.cfg.logger.Warn("could not record the tickets' starting state", slog.Int("records", len(recs)), slog.Any("error", err))
		return
	}
	r.started = true
	if r.starts == nil {
		r.starts = make(map[int64]time.Time, len(recs))
	}
	for _, rec := range recs {
		r.starts[rec.Ticket.ID] = rec.At
	}
	r.startsTook = r.cfg.now()
	r.cfg.logger.Info("recorded the tickets' starting state in the history", slog.Int("tickets", len(recs)))
}

// startedLocked reports whether the history holds a starting state,
// asking the store until it does. Caller holds mu.
func (r *Recorder) startedLocked(ctx context.Context) bool {
	if !r.started {
		at, err := r.st.Start(ctx)
		r.started = err == nil && !at.IsZero()
	}
	return r.started
}

// pruneLocked prunes when due, at most pruneSteps statements; what is left
// is pruned at the next sync. Caller holds mu.
func (r *Recorder) pruneLocked(ctx context.Context) {
	now := r.cfg.now()
	if now.Before(r.nextPrune) {
		return
	}
	step := func() (int, error) {
		if r.cfg.retention <= 0 {
			return r.st.ClearHistory(ctx, r.cfg.pruneBatch)
		}
		return r.st.PruneHistory(ctx, now.Add(-r.cfg.retention), r.cfg.pruneBatch)
	}
	total := 0
	for range r.cfg.pruneSteps {
		n, err := step()
		total += n
		if err != nil {
			r.cfg.logger.Warn("could not prune the ticket history; retrying at the next sync", slog.Any("error", err))
			return
		}
		if n == 0 {
			r.nextPrune = now.Add(r.cfg.pruneEvery)
			if total > 0 {
				r.cfg.logger.Debug("pruned the ticket history", slog.Int("rows", total), slog.Duration("retention", r.cfg.retention))
			}
			return
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

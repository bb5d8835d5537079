package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/sdclient"
)

// Defaults of New, the scheduler's defaults too.
const (
	// DefaultOverlap is how far before the newest updated_at it saw the
	// change feed asks again.
	DefaultOverlap = 30 * time.Second
	// DefaultFullSyncEvery is how often the mirror is rebuilt.
	DefaultFullSyncEvery = 24 * time.Hour
	// DefaultTrashEvery is how often deleted and spam tickets are swept.
	DefaultTrashEvery = 10 * time.Minute
	// DefaultClosedRetention is how long a closed ticket stays mirrored.
	DefaultClosedRetention = 30 * 24 * time.Hour
	// DefaultStatusRefresh is how often the open statuses are re-read.
	DefaultStatusRefresh = 10 * time.Minute
)

// Desk is the part of the desk API the feed reads. Every method returns
// the sdclient Response (nil when nothing was sent), so that the feed can
// count requests and read the desk's clock.
type Desk interface {
	// OpenStatuses returns every open status id, custom ones included.
	OpenStatuses(ctx context.Context) ([]int, error)
	// FilterTickets reads one page of a filter search (the full sync).
	FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error)
	// ListTickets reads one page of GET /tickets (the change feed).
	ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error)
	// GetTicket re-reads one ticket.
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
}

// Clock is the feed's now (the scheduler's clock; tests pass a fake).
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Option configures New.
type Option func(*config)

type config struct {
	logger        *slog.Logger
	clock         Clock
	workspaces    []int64
	store         MirrorStore
	reg           prometheus.Registerer
	overlap       time.Duration
	fullSyncEvery time.Duration
	trashEvery    time.Duration
	closedKeep    time.Duration
	statusRefresh time.Duration
	background    func(run func(ctx context.Context))
	firstSynced   func(ctx context.Context)
	leads         func() bool
	subscribers   []Subscriber
}

// WithLogger logs through l (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithClock sets the feed's clock (default: the real one).
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// WithWorkspaces mirrors these workspaces; without it, the account's
// default workspace.
func WithWorkspaces(ids ...int64) Option {
	return func(c *config) { c.workspaces = append([]int64(nil), ids...) }
}

// WithMirrorStore keeps the mirror in ms (default: memory).
func WithMirrorStore(ms MirrorStore) Option { return func(c *config) { c.store = ms } }

// WithRegistry registers the feed's metrics on reg.
func WithRegistry(reg prometheus.Registerer) Option { return func(c *config) { c.reg = reg } }

// WithOverlap sets how far before the newest updated_at it saw the feed
// asks again (default DefaultOverlap).
func WithOverlap(d time.Duration) Option { return func(c *config) { c.overlap = d } }

// WithFullSyncEvery sets how often the mirror is rebuilt by a full sync.
func WithFullSyncEvery(d time.Duration) Option { return func(c *config) { c.fullSyncEvery = d } }

// WithTrashEvery sets how often deleted and spam tickets are swept out.
func WithTrashEvery(d time.Duration) Option { return func(c *config) { c.trashEvery = d } }

// WithClosedRetention sets how long a resolved or closed ticket stays in
// the mirror after its last change.
func WithClosedRetention(d time.Duration) Option { return func(c *config) { c.closedKeep = d } }

// WithStatusRefresh sets how often the open statuses are re-read.
func WithStatusRefresh(d time.Duration) Option { return func(c *config) { c.statusRefresh = d } }

// WithBackground runs full syncs that Sync does not wait for through
// spawn, which runs run away from the caller with the context of its
// runs (the scheduler tracks them for Stop). Default: a goroutine on
// context.Background().
func WithBackground(spawn func(run func(ctx context.Context))) Option {
	return func(c *config) { c.background = spawn }
}

// WithFirstSynced calls fn, from the background full sync's goroutine,
// when a first full sync in the background finished (the scheduler runs
// every rule on the whole mirror at once).
func WithFirstSynced(fn func(ctx context.Context)) Option {
	return func(c *config) { c.firstSynced = fn }
}

// WithLeads tells the feed, without asking anyone, whether this replica
// leads: LiveMirror answers from memory only then (default: it does).
func WithLeads(fn func() bool) Option { return func(c *config) { c.leads = fn } }

// WithSubscriber makes the feed call sub after every sync.
func WithSubscriber(sub Subscriber) Option {
	return func(c *config) { c.subscribers = append(c.subscribers, sub) }
}

// Feed is the change feed and the mirror of every polled workspace: one
// Feed over them all, since a cycle evaluates the rules on all of them
// at once and /readyz reports them together.
type Feed struct {
	cfg      config
	desk     Desk
	ms       MirrorStore
	m        *metrics
	statuses statusCache
	mirrors  []*wsMirror // one per polled workspace
}

// New returns the feed of desk. Nothing is read before the first Sync.
func New(desk Desk, opts ...Option) (*Feed, error) {
	if desk == nil {
		return nil, errors.New("new feed: desk is nil")
	}
	cfg := config{clock: realClock{}, overlap: DefaultOverlap, fullSyncEvery: DefaultFullSyncEvery,
		trashEvery: DefaultTrashEvery, closedKeep: DefaultClosedRetention, statusRefresh: DefaultStatusRefresh}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("new feed: nil option")
		}
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	if cfg.clock == nil {
		cfg.clock = realClock{}
	}
	if cfg.overlap < 0 || cfg.fullSyncEvery <= 0 || cfg.trashEvery <= 0 || cfg.closedKeep <= 0 || cfg.statusRefresh <= 0 {
		return nil, fmt.Errorf("new feed: overlap %v must not be negative, the intervals (full sync %v, trash %v, closed retention %v, status refresh %v) positive",
			cfg.overlap, cfg.fullSyncEvery, cfg.trashEvery, cfg.closedKeep, cfg.statusRefresh)
	}
	if cfg.background == nil {
		cfg.background = func(run func(context.Context)) { go run(context.Background()) }
	}
	f := &Feed{cfg: cfg, desk: desk, ms: cfg.store, m: newMetrics(cfg.reg)}
	if f.ms == nil {
		f.ms = NewMemStore()
	}
	if len(cfg.workspaces) == 0 {
		f.mirrors = []*wsMirror{newWSMirror(nil)}
	}
	for _, ws := range cfg.workspaces {
		f.mirrors = append(f.mirrors, newWSMirror(&ws))
	}
	return f, nil
}

// leads reports whether this replica leads (WithLeads).
func (f *Feed) leads() bool { return f.cfg.leads == nil || f.cfg.leads() }

// Snapshot returns the tickets of every workspace's mirror, by id, with
// the tickets people's requests changed meanwhile (the rules see them
// too). They are shared with the mirror: never change them.
func (f *Feed) Snapshot() []*sdclient.Ticket {
	var out []*sdclient.Ticket
	for _, m := range f.mirrors {
		out = append(out, m.snapshot()...)
	}
	if len(f.mirrors) > 1 {
		slices.SortFunc(out, byID)
	}
	return out
}

// Observe puts a ticket deskbot read from the desk (a re-read, a firing's
// update) into the mirror and publishes it at once (read your own
// writes); Persist saves it.
func (f *Feed) Observe(t *sdclient.Ticket) {
	if t == nil {
		return
	}
	m := f.mirrorFor(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putOwn(t)
	m.publishOne(t)
}

// Forget removes a ticket the desk no longer has from the mirror.
func (f *Feed) Forget(id int64) {
	for _, m := range f.mirrors {
		m.mu.Lock()
		m.remove(id)
		m.publishGone(id)
		m.mu.Unlock()
	}
}

// mirrorFor is the mirror of t's workspace: the configured one it names,
// else the one that holds it, else the first.
func (f *Feed) mirrorFor(t *sdclient.Ticket) *wsMirror {
	for _, m := range f.mirrors {
		if m.param != nil && t.WorkspaceID != nil && *m.param == *t.WorkspaceID {
			return m
		}
	}
	for _, m := range f.mirrors {
		m.mu.Lock()
		_, ok := m.tickets[t.ID]
		m.mu.Unlock()
		if ok {
			return m
		}
	}
	return f.mirrors[0]
}

// Persist saves what Observe and Forget changed in the mirrors.
func (f *Feed) Persist(ctx context.Context) error {
	var errs []error
	for _, m := range f.mirrors {
		m.mu.Lock()
		if len(m.pendingPut)+len(m.pendingDel) > 0 {
			errs = append(errs, m.persist(ctx, f.ms))
		}
		m.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Gone reports whether the mirror dropped ticket id because the desk
// deleted it, marked it as spam or no longer has it.
func (f *Feed) Gone(id int64) bool {
	for _, m := range f.mirrors {
		m.mu.Lock()
		g := m.gone[id]
		m.mu.Unlock()
		if g {
			return true
		}
	}
	return false
}

// Complete reports whether every mirror holds all open tickets (a full
// sync finished).
func (f *Feed) Complete() bool {
	for _, m := range f.mirrors {
		m.mu.Lock()
		ok := m.state.Complete
		m.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
}

// Tickets returns the mirrored tickets of ids, by id (absent: not
// mirrored). They are shared with the mirror: never change them.
func (f *Feed) Tickets(ids []int64) map[int64]*sdclient.Ticket {
	out := make(map[int64]*sdclient.Ticket, len(ids))
	for _, m := range f.mirrors {
		m.mu.Lock()
		for _, id := range ids {
			if t, ok := m.tickets[id]; ok {
				out[id] = t
			}
		}
		m.mu.Unlock()
	}
	return out
}

// Workspaces is how many workspaces the feed mirrors.
func (f *Feed) Workspaces() int { return len(f.mirrors) }

// Status is the state of one workspace's ticket mirror.
type Status struct {
	Workspace string // the workspace's name in logs
	Tickets   int    // tickets mirrored
	// Complete is true once a full sync finished.
	Complete bool
	// Cursor is the change feed's cursor (the desk's clock).
	Cursor time.Time
	// FullSyncAt is when the last full sync finished.
	FullSyncAt time.Time
	// Syncing is true while a full sync runs; Seen of Total (-1: not
	// known yet) is how far it came.
	Syncing     bool
	Seen, Total int // see Syncing
}

// Status reports each workspace's mirror, from memory.
func (f *Feed) Status() []Status {
	out := make([]Status, 0, len(f.mirrors))
	for _, m := range f.mirrors {
		m.mu.Lock()
		st := Status{Workspace: m.name(), Tickets: len(m.tickets), Complete: m.state.Complete,
			Cursor: m.state.Cursor, FullSyncAt: m.state.FullSyncAt, Syncing: m.full != nil}
		if m.full != nil {
			st.Seen, st.Total = m.full.seen, m.full.total
		}
		m.mu.Unlock()
		out = append(out, st)
	}
	return out
}

func wsName(ws *int64) string {
	if ws == nil {
		return "default workspace"
	}
	return fmt.Sprintf("workspace %d", *ws)
}

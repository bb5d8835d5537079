package oncall

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Escalator drives the pages of a PageStore: Tick (called by the
// scheduler) takes every due step exactly once across replicas; Ack, Take,
// Resolve and EscalateNow are the buttons and commands.
type Escalator struct {
	config
	cfg   atomic.Pointer[Config]
	store PageStore
	pager Pager
	desk  Desk
	m     *metrics
}

// config holds what the options of NewEscalator set.
type config struct {
	log   *slog.Logger
	now   func() time.Time
	lease time.Duration
	retry time.Duration
	batch int
	group int
	reg   *prometheus.Registry
}

// Option tunes NewEscalator.
type Option func(*config)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithClock sets the clock used only for the /metrics view of who is on
// call; every decision uses the times passed in. Default time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithLease sets how long a claimed step may stay unconfirmed before
// another replica takes it over (default 2m).
func WithLease(d time.Duration) Option { return func(c *config) { c.lease = d } }

// WithRetry sets how long after a refused page the step is tried again
// (default 30s).
func WithRetry(d time.Duration) Option { return func(c *config) { c.retry = d } }

// WithBatch sets how many due pages one store read returns (default 100).
func WithBatch(n int) Option { return func(c *config) { c.batch = n } }

// WithGroupOver sets the escalator's group_over (default
// DefaultGroupOver): when one Tick pages one person for more pages than n,
// and the Pager is a PageGrouper, the person gets one direct message naming
// them all.
func WithGroupOver(n int) Option { return func(c *config) { c.group = n } }

// WithRegistry registers the on-call metrics on reg: pages, escalations,
// acknowledgements, failures, exhausted pages, time to acknowledge, and
// who is on call now and next per schedule.
func WithRegistry(reg *prometheus.Registry) Option {
	return func(c *config) { c.reg = reg }
}

// NewEscalator returns an Escalator over cfg (replaced later with
// SetConfig, e.g. on SIGHUP) and st. desk may be nil (no notes, no
// resolution check).
func NewEscalator(cfg *Config, st PageStore, pager Pager, desk Desk, opts ...Option) (*Escalator, error) {
	e := &Escalator{store: st, pager: pager, desk: desk,
		config: config{now: time.Now, lease: 2 * time.Minute, retry: 30 * time.Second, batch: 100, group: DefaultGroupOver}}
	for _, o := range opts {
		o(&e.config)
	}
	switch {
	case st == nil:
		return nil, errors.New("new escalator: nil page store")
	case pager == nil:
		return nil, errors.New("new escalator: nil pager")
	case e.lease <= 0 || e.retry <= 0 || e.batch <= 0 || e.group <= 0:
		return nil, fmt.Errorf("new escalator: lease %v, retry %v, batch %d, group_over %d: want positive values", e.lease, e.retry, e.batch, e.group)
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.m = newMetrics(e, e.reg)
	if e.m.err != nil {
		return nil, fmt.Errorf("new escalator: register metrics: %w", e.m.err)
	}
	e.SetConfig(cfg)
	return e, nil
}

// SetConfig replaces the schedules and policies (a reloaded rules file).
// Pages under way continue under the policy of the same name; one whose
// policy is gone stops at its next step, with the note that nobody
// acknowledged it.
func (e *Escalator) SetConfig(c *Config) {
	if c == nil {
		c = &Config{}
	}
	e.cfg.Store(c)
	for _, p := range c.Policies {
		e.m.zero(p.Name)
	}
}

// Config returns the current schedules and policies.
func (e *Escalator) Config() *Config { return e.cfg.Load() }

// WhoIsOnCall reports who is on call now and next in every schedule.
func (e *Escalator) WhoIsOnCall(now time.Time) []Status { return e.Config().WhoIsOnCall(now) }

// Start begins paging for spec at now (the rules executor's page action)
// and takes the first step at once, or leaves it to the next Tick when
// spec.Defer. A page with the same key (same rule,
// ticket and episode) is never started twice: created is false then.
func (e *Escalator) Start(ctx context.Context, spec PageSpec, now time.Time) (p Page, created bool, err error) {
	if e.Config().Policy(spec.Policy) == nil {
		return Page{}, false, fmt.Errorf("start page for ticket %d: unknown escalation policy %q", spec.TicketID, spec.Policy)
	}
	p = NewPage(spec, now)
	created, err = e.store.CreatePage(ctx, p)
	if err != nil {
		return Page{}, false, fmt.Errorf("start page %s: %w", p.Key, err)
	}
	if !created {
		cur, _, err := e.store.Page(ctx, p.Key)
		if err != nil {
			return Page{}, false, fmt.Errorf("start page %s: %w", p.Key, err)
		}
		return cur, false, nil
	}
	p.Version = 1
	e.m.started.WithLabelValues(p.Policy).Inc()
	if spec.Defer {
		return p, true, nil
	}
	err = e.process(ctx, p, now)
	if cur, ok, gerr := e.store.Page(ctx, p.Key); gerr == nil && ok {
		p = cur
	}
	return p, true, err
}

// tickGrace is how early Tick takes a step. Steps fall due a whole number
// of the rule's and the level's periods after the tick that took the step
// before, so ticks meet them on the very millisecond; a tick a hair early
// would leave the next level one whole tick late (20s by default).
const tickGrace = 500 * time.Millisecond

// TickStats says what one Tick did.
type TickStats struct {
	Due       int // due pages read
	Paged     int // steps delivered
	Failed    int // steps the chat refused
	Exhausted int // pages that ran out of levels
	Noted     int // acknowledgement notes written
	Lost      int // steps another replica claimed first
}

// Tick takes every step due at now (or within half a second of it): pages the next level of each
// unacknowledged page whose wait ran out, retries refused or abandoned
// steps, and writes pending acknowledgement notes. Each step is claimed
// with an atomic swap, so replicas ticking together never page twice.
func (e *Escalator) Tick(ctx context.Context, now time.Time) (TickStats, error) {
	var st TickStats
	var errs []error
	var held []pending
	for round := 0; round < 10; round++ {
		due, err := e.store.DuePages(ctx, now.Add(tickGrace), e.batch)
		if err != nil {
			errs = append(errs, fmt.Errorf("oncall tick: read due pages: %w", err))
			break
		}
		st.Due += len(due)
		for _, p := range due {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				break
			}
			if err := e.processStats(ctx, p, now, &st, &held); err != nil {
				errs = append(errs, err)
			}
		}
		if len(due) < e.batch || ctx.Err() != nil {
			break
		}
	}
	// The steps claimed above are delivered now, those to one person
	// together when there are more than group_over of them. A claimed step
	// is always delivered (or its claim runs out and it is retried).
	if err := e.deliver(ctx, held, now, &st); err != nil {
		errs = append(errs, err)
	}
	return st, errors.Join(errs...)
}

// pending is a step claimed by a Tick and not yet delivered.
type pending struct {
	p    Page // the page as read before the claim
	step Step
	req  PageRequest
}

// deliver sends the claimed steps held: grouped by person when the Pager
// can (PageGrouper) and one person has more than group_over of them (the
// smallest group_over of their pages, each its rule's or else the
// escalator's), one by one otherwise; then it records each outcome.
func (e *Escalator) deliver(ctx context.Context, held []pending, now time.Time, st *TickStats) error {
	var errs []error
	byPerson := map[string][]int{}
	var order []string
	for i, h := range held {
		if h.step.Target.Kind != TargetPerson {
			continue
		}
		id := strings.ToLower(h.step.Target.ID)
		if _, ok := byPerson[id]; !ok {
			order = append(order, id)
		}
		byPerson[id] = append(byPerson[id], i)
	}
	results := make([]error, len(held))
	done := make([]bool, len(held))
	if g, ok := e.pager.(PageGrouper); ok {
		for _, id := range order {
			idx := byPerson[id]
			over := 0
			for _, i := range idx {
				g := cmp.Or(held[i].p.GroupOver, e.group)
				if over == 0 || g < over {
					over = g
				}
			}
			if len(idx) <= over {
				continue
			}
			rs := make([]PageRequest, len(idx))
			for j, i := range idx {
				rs[j] = held[i].req
			}
			out := g.PageGroup(ctx, rs)
			if len(out) != len(rs) {
				err := fmt.Errorf("page group to %s: the chat answered %d results for %d pages", id, len(out), len(rs))
				out = make([]error, len(rs))
				for j := range out {
					out[j] = err
				}
			}
			e.log.Info("on-call: one direct message for several pages", "target", held[idx[0]].step.Target.ID, "pages", len(idx), "group_over", over)
			for j, i := range idx {
				results[i], done[i] = out[j], true
			}
		}
	}
	for i, h := range held {
		if !done[i] {
			results[i] = e.pager.Page(ctx, h.req)
		}
		if err := e.finish(ctx, h, results[i], now, st); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Escalator) process(ctx context.Context, p Page, now time.Time) error {
	var st TickStats
	return e.processStats(ctx, p, now, &st, nil)
}

// processStats does the work of one due page. With held non-nil, a step
// claimed for a person is appended to it, for Tick to deliver with the
// others of the tick; otherwise it is delivered at once.
func (e *Escalator) processStats(ctx context.Context, p Page, now time.Time, st *TickStats, held *[]pending) error {
	if p.NoteDue() || p.ExhaustNoteDue() {
		return e.note(ctx, p, now, st)
	}
	if p.Stopped() {
		return e.close(ctx, p)
	}
	pol := e.Config().Policy(p.Policy)
	if pol == nil {
		return e.policyGone(ctx, p, now, st)
	}
	if e.desk != nil && !p.Sending {
		if closed, err := e.ticketClosed(ctx, p, now); closed {
			return err
		}
	}
	q := p.Clone()
	step, ok := q.Advance(pol, now)
	if !ok {
		won, err := e.swap(ctx, q)
		if !won || err != nil || !q.Exhausted {
			return err
		}
		return e.exhausted(ctx, q, now, st, "on-call page exhausted: nobody acknowledged")
	}
	q.Claim(now.Add(e.lease))
	won, err := e.swap(ctx, q)
	if err != nil {
		return err
	}
	if !won {
		st.Lost++
		return nil
	}
	q.Version++
	if !step.Retry && (step.Level > 0 || step.Round > 0) {
		e.m.escalations.WithLabelValues(p.Policy).Inc()
	}
	req := PageRequest{Page: q, Target: step.Target, Step: step.Number, Level: step.Level, Round: step.Round,
		Attempt: step.Attempt, Retry: step.Retry, TicketID: q.TicketID, Channel: q.Channel, Text: q.Text}
	h := pending{p: p, step: step, req: req}
	if held != nil && step.Target.Kind == TargetPerson {
		*held = append(*held, h)
		return nil
	}
	return e.finish(ctx, h, e.pager.Page(ctx, req), now, st)
}

// close marks done a page resolved or exhausted without pending work.
func (e *Escalator) close(ctx context.Context, p Page) error {
	_, _, err := e.update(ctx, p.Key, func(q *Page) bool {
		if q.Done || q.NoteDue() {
			return false
		}
		q.Done = true
		return true
	})
	return err
}

// policyGone stops page p whose policy left the rules file (a reload)
// while it was escalating: there is nobody left to page. It says so on
// the ticket and the card, rather than wait for it for ever.
func (e *Escalator) policyGone(ctx context.Context, p Page, now time.Time, st *TickStats) error {
	q := p.Clone()
	if !q.Exhaust(fmt.Sprintf("escalation policy %s is no longer in the rules file: nobody left to page", p.Policy), now) {
		return nil
	}
	won, err := e.swap(ctx, q)
	if !won || err != nil {
		return err
	}
	return e.exhausted(ctx, q, now, st, "on-call page stopped: its escalation policy is no longer in the rules file")
}

// ticketClosed checks the ticket of page p before paging: when it is
// resolved, closed or gone, it resolves the page and reports true. The
// desk never stops a page: when it cannot answer, the page goes on.
func (e *Escalator) ticketClosed(ctx context.Context, p Page, now time.Time) (bool, error) {
	closed, err := e.desk.TicketClosed(ctx, p.TicketID)
	if err != nil {
		e.log.Warn("on-call: cannot check the ticket before paging; paging anyway", "page", p.Key, "ticket", p.TicketID, "err", err)
		return false, nil
	}
	if !closed {
		return false, nil
	}
	q := p.Clone()
	q.Resolve(now)
	won, err := e.swap(ctx, q)
	if won {
		q.Version++
		e.stopped(ctx, q)
	}
	return true, err
}

// finish records the outcome perr of delivering the claimed step h.
func (e *Escalator) finish(ctx context.Context, h pending, perr error, now time.Time, st *TickStats) error {
	p, step := h.p, h.step
	if perr != nil {
		st.Failed++
		e.m.failures.WithLabelValues(p.Policy).Inc()
		if errors.Is(perr, ErrUnreachable) {
			// No retry can reach this target: page the next level now,
			// rather than leave the ticket with nobody paged.
			e.log.Warn("on-call target cannot be paged; paging the next level", "page", p.Key, "step", step.Number, "target", step.Target.ID, "err", perr)
			cur, won, err := e.update(ctx, p.Key, func(x *Page) bool { return x.Unreachable(step.Number, perr.Error(), now) })
			if err != nil || !won {
				return err
			}
			return e.processStats(ctx, cur, now, st, nil)
		}
		e.log.Warn("on-call page failed", "page", p.Key, "step", step.Number, "target", step.Target.ID, "attempt", step.Attempt, "err", perr)
		_, _, err := e.update(ctx, p.Key, func(x *Page) bool { return x.Failed(step.Number, perr.Error(), e.retry, now) })
		return errors.Join(fmt.Errorf("page %s step %d to %s: %w", p.Key, step.Number, step.Target.ID, perr), err)
	}
	st.Paged++
	e.m.pages.WithLabelValues(p.Policy).Inc()
	e.log.Info("on-call paged", "page", p.Key, "ticket", p.TicketID, "step", step.Number, "level", step.Level+1, "round", step.Round+1, "target", step.Target.ID)
	_, _, err := e.update(ctx, p.Key, func(x *Page) bool { return x.Sent(step.Number, step.After, now) })
	return err
}

func (e *Escalator) swap(ctx context.Context, p Page) (bool, error) {
	won, err := e.store.SwapPage(ctx, p)
	if err != nil {
		return false, fmt.Errorf("update page %s: %w", p.Key, err)
	}
	return won, nil
}

// update reads page key, applies fn and swaps it in, again on a concurrent
// change; fn returns false to leave the page as it is.
func (e *Escalator) update(ctx context.Context, key string, fn func(*Page) bool) (Page, bool, error) {
	for attempt := 0; attempt < 20; attempt++ {
		p, ok, err := e.store.Page(ctx, key)
		if err != nil {
			return Page{}, false, fmt.Errorf("read page %s: %w", key, err)
		}
		if !ok {
			return Page{}, false, fmt.Errorf("read page %s: %w", key, ErrNoPage)
		}
		q := p.Clone()
		if !fn(&q) {
			return p, false, nil
		}
		won, err := e.swap(ctx, q)
		if err != nil {
			return Page{}, false, err
		}
		if won {
			q.Version++
			return q, true, nil
		}
	}
	return Page{}, false, fmt.Errorf("update page %s: too much contention", key)
}

package backtest

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Option configures Run.
type Option func(*config)

type config struct {
	cycleCap   int
	supervisor bool
}

// WithCycleCap bounds the firings per cycle across rules, as
// DESKBOT_MAX_FIRINGS_PER_CYCLE does for the scheduler (0: none).
func WithCycleCap(n int) Option { return func(c *config) { c.cycleCap = n } }

// WithSupervisor also replays each rule as the desk's hourly supervisor
// would run it, and reports how much later its firings came.
func WithSupervisor(on bool) Option { return func(c *config) { c.supervisor = on } }

// window is Run's configuration and the replay's window: from, the
// history's start at the earliest, up to to; an error when there is no
// history or nothing in the window.
func window(ctx context.Context, h history.Reader, from, to time.Time, opts []Option) (cfg config, start, at time.Time, err error) {
	for _, o := range opts {
		o(&cfg)
	}
	if start, err = h.Start(ctx); err != nil {
		return cfg, start, from, fmt.Errorf("backtest: read the history's start: %w", err)
	}
	if start.IsZero() {
		return cfg, start, from, ErrNoHistory
	}
	from = plan.Later(from, start)
	if !from.Before(to) {
		return cfg, start, from, fmt.Errorf("backtest: nothing to replay between %s and %s (the history starts at %s)", plan.Stamp(from), plan.Stamp(to), plan.Stamp(start))
	}
	return cfg, start, from, nil
}

// Run replays set over the history h from from (the history's start at
// the earliest) to to, and reports what the rules would have done.
func Run(ctx context.Context, set *rules.Set, h history.Reader, from, to time.Time, opts ...Option) (*Report, error) {
	cfg, start, from, err := window(ctx, h, from, to, opts)
	if err != nil {
		return nil, err
	}
	main := newReplay(set, cfg, false, from)
	var sup *replay
	var feed chan []change
	var supDone chan error
	if cfg.supervisor {
		// The supervisor's replay runs beside the main one, on another
		// core, fed the same records in batches.
		sup = newReplay(set, cfg, true, from)
		feed, supDone = make(chan []change, 8), make(chan error, 1)
		go func() { supDone <- sup.consume(ctx, feed, to) }()
	}
	var batch []change
	records := 0
	err = h.Scan(ctx, start, to, func(rec history.Record) error {
		if rec.Ticket == nil {
			return nil
		}
		if err := main.until(ctx, seenAfter(rec.At, from)); err != nil {
			return err
		}
		mask := main.changeOf(rec)
		main.apply(rec, mask)
		if feed != nil {
			if batch = append(batch, change{rec, mask}); len(batch) == feedBatch {
				feed <- batch
				batch = make([]change, 0, feedBatch)
			}
		}
		if !rec.At.Before(from) {
			records++
		}
		return nil
	})
	if err == nil {
		err = main.until(ctx, to)
	}
	if feed != nil {
		if err == nil {
			feed <- batch
			feed <- nil // the history is complete: replay up to to
		}
		close(feed)
		if serr := <-supDone; err == nil {
			err = serr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("backtest: replay the history: %w", err)
	}
	tickets := len(main.slots)
	var supRules []*Supervisor
	if sup != nil { // compared, and gone, before the main replay's firings are built
		supFired := sup.sup
		supFired.slots = sup.slots
		sup.drop()
		supRules = compareSupervisor(main.fired, main.ids, supFired, sup.lastRun)
	}
	main.finish()
	rep := main.report(start, to)
	rep.Records, rep.Tickets = records, tickets
	if supRules != nil {
		for i := range rep.Rules {
			rep.Rules[i].Supervisor = supRules[i]
		}
		rep.Limits = append(rep.Limits, supervisorLimit)
	}
	return rep, nil
}

// feedBatch is how many records go to the supervisor's replay at once.
const feedBatch = 1024

// change is a record with the classes of fields it changed (changeOf),
// found once for both replays.
// seenAfter is when a record stamped at becomes visible: cycles before
// the returned time run first. A desk stamps changes in whole seconds and
// a cycle at T reads the desk just after T, so a change stamped T is
// first seen by the next cycle; above all deskbot's own writes, which
// the cycle at T makes (a reminder's reply stamped T must not stop that
// very reminder). The starting state, stamped at or before from, is what
// the first cycle sees.
func seenAfter(at, from time.Time) time.Time {
	if at.After(from) {
		return at.Add(time.Nanosecond)
	}
	return at
}

type change struct {
	rec  history.Record
	mask fieldClass
}

// consume replays the batches of records fed to it until feed is closed,
// and up to to when a nil batch said the history is complete. It reads
// feed to its end whatever happens, so that the feeder never blocks.
func (r *replay) consume(ctx context.Context, feed <-chan []change, to time.Time) error {
	var err error
	complete := false
	for batch := range feed {
		if batch == nil {
			complete = true
		}
		for _, c := range batch {
			if err == nil {
				if err = r.until(ctx, seenAfter(c.rec.At, r.from)); err == nil {
					r.apply(c.rec, c.mask)
				}
			}
		}
	}
	if err != nil || !complete {
		return err
	}
	return r.until(ctx, to)
}

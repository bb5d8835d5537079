package scheduler

import (
	"log/slog"
	"sync"
	"time"
)

// historyLen is how many recent cycles of a job the planner averages.
const historyLen = 5

// planner keeps polling within the background request budget: from the
// request counts of recent cycles it computes the requests per minute the
// cycle would send at its tick and, when that exceeds the budget, stretches
// the tick by a factor (a scheduled cycle is skipped until its next
// eligible time, which advances by tick*factor from run to run, so that the
// runs average exactly one per tick*factor even though gocron ticks only
// every tick). It plans the one cycle: the jobs share its sync.
type planner struct {
	budget     float64 // requests per minute; 0: no planning
	listBudget float64 // ticket lists per minute; 0: not planned apart
	m          *metrics

	mu      sync.Mutex
	every   time.Duration // the tick, 0 before the first replan
	history []int         // recent request counts
	lists   []int         // recent ticket list counts
	next    time.Time     // earliest stretched run; zero: none yet
	factor  float64
	logged  float64
}

func newPlanner(budget int, m *metrics) *planner {
	return &planner{budget: float64(budget), m: m, factor: 1}
}

// replan takes a new tick (start, reload) and recomputes the factor.
func (p *planner) replan(every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.every = every
	p.recompute()
}

// record adds the request count of a cycle ticking every iv that started
// at now, lists of them ticket lists, recomputes the factor and sets the
// next eligible run.
func (p *planner) record(iv time.Duration, requests, lists int, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.history = appendRecent(p.history, requests)
	p.lists = appendRecent(p.lists, lists)
	p.recompute()
	// The next run is due interval*factor after the previous due time, not
	// after this run: a run that waited for a tick past its due time is
	// paid back by the next one, so that a factor of 1.5 runs two ticks of
	// three and a factor of 1.04 twenty-five of twenty-six. A due time
	// further back than one interval (a first run, a pause, a factor that
	// was 1) starts over from now.
	base := p.next
	if base.IsZero() || base.After(now) || now.Sub(base) > iv {
		base = now
	}
	p.next = base.Add(time.Duration(float64(iv) * p.factor))
}

func appendRecent(h []int, n int) []int {
	h = append(h, n)
	if len(h) > historyLen {
		h = h[len(h)-historyLen:]
	}
	return h
}

// perMinute is what the cycle would send a minute at its tick, by the
// average of its recent counts in h.
func (p *planner) perMinute(h []int) float64 {
	if len(h) == 0 || p.every <= 0 {
		return 0
	}
	sum := 0
	for _, n := range h {
		sum += n
	}
	return float64(sum) / float64(len(h)) * float64(time.Minute) / float64(p.every)
}

func (p *planner) recompute() {
	rpm := p.perMinute(p.history)
	f := 1.0
	if p.budget > 0 && rpm > p.budget {
		f = rpm / p.budget
	}
	if lpm := p.perMinute(p.lists); p.listBudget > 0 && lpm > p.listBudget*f {
		f = lpm / p.listBudget
	}
	p.factor = f
	p.m.plannedRPM.Set(rpm)
	p.m.stretch.Set(f)
}

// due reports whether a scheduled cycle ticking every iv may go ahead at
// now.
func (p *planner) due(iv time.Duration, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.factor <= 1 || p.next.IsZero() {
		return true
	}
	// Ticks come every interval, a little late under load: tolerate the
	// lateness of the previous run, well below any interval*(factor-1)
	// that matters.
	tol := min(iv/100, time.Second)
	return !now.Before(p.next.Add(-tol))
}

func (p *planner) stretch() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.factor
}

// logChange reports a changed stretch once.
func (p *planner) logChange(l *slog.Logger) {
	p.mu.Lock()
	f, last := p.factor, p.logged
	p.logged = f
	p.mu.Unlock()
	if f != last && (f > 1 || last > 1) {
		l.Warn("poll intervals stretched to stay within the request budget", slog.Float64("stretch", f), slog.Float64("budget_per_minute", p.budget))
	}
}

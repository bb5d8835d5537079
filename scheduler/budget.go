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
// jobs would send at their nominal intervals and, when that exceeds the
// budget, stretches every interval by the same factor (a scheduled run is
// skipped until the job's next eligible time, which advances by
// interval*factor from run to run, so that the runs average exactly one
// per interval*factor even though gocron ticks only every interval).
type planner struct {
	budget     float64 // requests per minute; 0: no planning
	listBudget float64 // ticket lists per minute; 0: not planned apart
	m          *metrics

	mu      sync.Mutex
	jobs    []*job
	history map[string][]int     // job key -> recent request counts
	lists   map[string][]int     // job key -> recent ticket list counts
	next    map[string]time.Time // job key -> earliest stretched run
	factor  float64
	logged  float64
}

func newPlanner(budget int, m *metrics) *planner {
	return &planner{budget: float64(budget), m: m, history: map[string][]int{}, lists: map[string][]int{},
		next: map[string]time.Time{}, factor: 1}
}

// interval is the nominal time between two runs of j.
func interval(j *job, now time.Time) time.Duration {
	if j.cron == "" {
		return j.Every
	}
	if j.Cron == nil {
		return time.Minute
	}
	a := j.Cron.Next(now)
	return j.Cron.Next(a).Sub(a)
}

// replan takes a new job list (start, reload) and recomputes the factor.
func (p *planner) replan(jobs []*job, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jobs = jobs
	p.recompute(now)
}

// record adds the request count of a cycle that started at now, lists of
// them ticket lists, recomputes the factor and sets the job's next
// eligible run.
func (p *planner) record(j *job, requests, lists int, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.history[j.key] = appendRecent(p.history[j.key], requests)
	p.lists[j.key] = appendRecent(p.lists[j.key], lists)
	p.recompute(now)
	// The next run is due interval*factor after the previous due time, not
	// after this run: a run that waited for a tick past its due time is
	// paid back by the next one, so that a factor of 1.5 runs two ticks of
	// three and a factor of 1.04 twenty-five of twenty-six. A due time
	// further back than one interval (a first run, a pause, a factor that
	// was 1) starts over from now.
	iv := interval(j, now)
	base, ok := p.next[j.key]
	if !ok || base.After(now) || now.Sub(base) > iv {
		base = now
	}
	p.next[j.key] = base.Add(time.Duration(float64(iv) * p.factor))
}

func appendRecent(h []int, n int) []int {
	h = append(h, n)
	if len(h) > historyLen {
		h = h[len(h)-historyLen:]
	}
	return h
}

// perMinute is what the jobs would send a minute at their nominal
// intervals, by the averages of their recent counts in hist.
func (p *planner) perMinute(hist map[string][]int, now time.Time) float64 {
	rpm := 0.0
	for _, j := range p.jobs {
		h := hist[j.key]
		if len(h) == 0 {
			continue
		}
		sum := 0
		for _, n := range h {
			sum += n
		}
		avg := float64(sum) / float64(len(h))
		if iv := interval(j, now); iv > 0 {
			rpm += avg * float64(time.Minute) / float64(iv)
		}
	}
	return rpm
}

func (p *planner) recompute(now time.Time) {
	rpm := p.perMinute(p.history, now)
	f := 1.0
	if p.budget > 0 && rpm > p.budget {
		f = rpm / p.budget
	}
	if lpm := p.perMinute(p.lists, now); p.listBudget > 0 && lpm > p.listBudget*f {
		f = lpm / p.listBudget
	}
	p.factor = f
	p.m.plannedRPM.Set(rpm)
	p.m.stretch.Set(f)
}

// due reports whether a scheduled run of j may go ahead at now.
func (p *planner) due(j *job, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.factor <= 1 {
		return true
	}
	next, ok := p.next[j.key]
	if !ok {
		return true
	}
	// Ticks come every interval, a little late under load: tolerate the
	// lateness of the previous run, well below any interval*(factor-1)
	// that matters.
	tol := min(interval(j, now)/100, time.Second)
	return !now.Before(next.Add(-tol))
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

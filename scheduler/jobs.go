package scheduler

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// job is the rules that share one (query, schedule): they are evaluated
// in the same cycles and reported together (metrics, /readyz, rules why).
type job struct {
	plan.Schedule // its rules, and when they run (Cron: cron parsed once)
	name          string
	key           string
	cron          string

	stat   sync.Mutex // guards status
	status JobStatus  // its last cycles (the Last fields; Ready fills in the rest)
}

// buildJobs groups the rules of set by (query, schedule) and checks that
// every query fits the desk's limit once expanded with open.
func buildJobs(set *rules.Set, open []int) ([]*job, error) {
	byKey := map[string]*job{}
	var jobs []*job
	var errs []error
	for _, r := range set.Rules() {
		if _, err := r.ExpandQuery(open); err != nil {
			errs = append(errs, err)
			continue
		}
		q := r.QueryExpr().String()
		sched := "every " + r.Every.String()
		if r.Cron != "" {
			sched = "cron " + r.Cron
		}
		key := q + "|" + sched
		j := byKey[key]
		if j == nil {
			j = &job{key: key, cron: r.Cron, Schedule: plan.Schedule{Every: r.Every}}
			byKey[key] = j
			jobs = append(jobs, j)
		}
		j.Rules = append(j.Rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, j := range jobs {
		j.name = j.Rules[0].Name
		if len(j.Rules) > 1 {
			j.name += fmt.Sprintf("+%d", len(j.Rules)-1)
		}
		if j.Every <= 0 && j.cron == "" {
			j.Every = rules.DefaultEvery
		}
		if j.cron != "" {
			j.Cron, _ = cron.ParseStandard(j.cron) // checked when the rules loaded
		}
	}
	return jobs, nil
}

func (j *job) ruleNames() []string {
	names := make([]string, len(j.Rules))
	for i, r := range j.Rules {
		names[i] = r.Name
	}
	return names
}

// tickFor is how often the cycle ticks for jobs: the greatest common
// divisor of their intervals in whole seconds (at least a second), taken
// with a minute when a job has a cron schedule.
func tickFor(jobs []*job) time.Duration {
	g := int64(0)
	for _, j := range jobs {
		iv := int64(time.Minute / time.Second)
		if j.cron == "" {
			iv = max(int64(j.Every/time.Second), 1)
		}
		g = gcd(g, iv)
	}
	if g == 0 {
		return rules.DefaultEvery
	}
	return time.Duration(g) * time.Second
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// reloadStatus remembers how the last SIGHUP reload of the rules file went,
// for /metrics (deskbot_rules_reload_failures_total,
// deskbot_rules_last_reload_success) and the "rules" check of /readyz,
// which says "last reload failed at HH:MM: <first error>" while the old
// rules run on.
type reloadStatus struct {
	now      func() time.Time
	failures prometheus.Counter
	success  prometheus.Gauge

	mu       sync.Mutex
	failedAt time.Time // zero: the last reload (if any) succeeded
	first    string    // the first error of the failed reload
}

func newReloadStatus(reg prometheus.Registerer, now func() time.Time) *reloadStatus {
	r := &reloadStatus{
		now: now,
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "deskbot_rules_reload_failures_total",
			Help: "SIGHUP reloads of the rules file that failed (the old rules kept running).",
		}),
		success: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "deskbot_rules_last_reload_success",
			Help: "1 if the last reload of the rules file (or the start-up load) succeeded, 0 if it failed and the old rules run.",
		}),
	}
	r.success.Set(1)
	reg.MustRegister(r.failures, r.success)
	return r
}

// failed records a failed reload and its first error.
func (r *reloadStatus) failed(first string) {
	if r == nil {
		return
	}
	r.failures.Inc()
	r.success.Set(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedAt = r.now()
	r.first = firstLine(first)
}

// succeeded records a reload that swapped the new rules in.
func (r *reloadStatus) succeeded() {
	if r == nil {
		return
	}
	r.success.Set(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedAt, r.first = time.Time{}, ""
}

// check is the /readyz finding of a failed reload: degraded, since the old
// rules keep running; nil after a good one.
func (r *reloadStatus) check(context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failedAt.IsZero() {
		return nil
	}
	return degraded{fmt.Errorf("last reload failed at %s: %s; the old rules run", r.failedAt.Format("15:04"), r.first)}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// isTerminal reports whether r is a terminal: a character device other
// than the null device (which is what a container without -i, or a
// service manager, gives as stdin).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/internal/prom"
)

// metrics are the scheduler's Prometheus collectors.
type metrics struct {
	cycle.Metrics                             // the cycle's steps' (package cycle)
	cycles           *prometheus.CounterVec   // job, outcome
	cycleDuration    *prometheus.HistogramVec // job
	cycleRequests    *prometheus.GaugeVec     // job
	lastComplete     *prometheus.GaugeVec     // job
	cycleRequestsAll prometheus.Gauge
	skipped          *prometheus.CounterVec // job, reason
	ticks            prometheus.Counter
	pruned           prometheus.Counter
	rateRemaining    prometheus.Gauge
	stretch          prometheus.Gauge
	plannedRPM       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		cycles: prom.CounterVec("deskbot_scheduler_cycles_total",
			"Poll cycles by job and outcome (complete: every page of every workspace arrived; incomplete: cut short).", "job", "outcome"),
		cycleDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "deskbot_scheduler_cycle_duration_seconds",
			Help: "Duration of poll cycles, polling and executing decisions.", Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"job"}),
		cycleRequests: prom.GaugeVec("deskbot_scheduler_cycle_requests",
			"Desk requests the last cycle of a job sent (retries included).", "job"),
		lastComplete: prom.GaugeVec("deskbot_scheduler_last_complete_cycle_timestamp_seconds",
			"When a job last finished a complete poll (Unix seconds).", "job"),
		cycleRequestsAll: prom.Gauge("deskbot_scheduler_last_cycle_requests",
			"Desk requests the last cycle sent: the change feed, re-reads before actions and the actions (retries included)."),
		skipped: prom.CounterVec("deskbot_scheduler_skipped_runs_total",
			"Job runs skipped: stretched by the request budget, or still running.", "job", "reason"),
		ticks: prom.Counter("deskbot_scheduler_oncall_ticks_total",
			"Runs of the on-call escalator's tick (due escalation steps taken)."),
		pruned: prom.Counter("deskbot_scheduler_ledger_pruned_total",
			"Finished firings older than the ledger retention deleted from the ledger (current firings are kept)."),
		rateRemaining: prom.Gauge("deskbot_desk_rate_limit_remaining",
			"X-Ratelimit-Remaining of the last desk response the scheduler saw."),
		stretch: prom.Gauge("deskbot_scheduler_interval_stretch_ratio",
			"Factor by which poll intervals are stretched to stay within the background request budget (1: not stretched)."),
		plannedRPM: prom.Gauge("deskbot_scheduler_planned_requests_per_minute",
			"Requests per minute the jobs would send at their nominal intervals, from recent cycles."),
	}
	m.Metrics = cycle.NewMetrics()
	m.stretch.Set(1)
	m.rateRemaining.Set(-1)
	if reg != nil {
		reg.MustRegister(append(m.Collectors(), m.cycles, m.cycleDuration, m.cycleRequests, m.lastComplete, m.cycleRequestsAll,
			m.skipped, m.ticks, m.pruned, m.rateRemaining, m.stretch, m.plannedRPM)...)
	}
	return m
}

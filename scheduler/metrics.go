package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/cycle"
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
	var all []prometheus.Collector
	m := &metrics{
		cycles: counterVec(&all, "deskbot_scheduler_cycles_total",
			"Poll cycles by job and outcome (complete: every page of every workspace arrived; incomplete: cut short).", "job", "outcome"),
		cycleDuration: histogramVec(&all, "deskbot_scheduler_cycle_duration_seconds",
			"Duration of poll cycles, polling and executing decisions.", []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}, "job"),
		cycleRequests: gaugeVec(&all, "deskbot_scheduler_cycle_requests",
			"Desk requests the last cycle of a job sent (retries included).", "job"),
		lastComplete: gaugeVec(&all, "deskbot_scheduler_last_complete_cycle_timestamp_seconds",
			"When a job last finished a complete poll (Unix seconds).", "job"),
		cycleRequestsAll: gauge(&all, "deskbot_scheduler_last_cycle_requests",
			"Desk requests the last cycle sent: the change feed, re-reads before actions and the actions (retries included)."),
		skipped: counterVec(&all, "deskbot_scheduler_skipped_runs_total",
			"Job runs skipped: stretched by the request budget, or still running.", "job", "reason"),
		ticks: counter(&all, "deskbot_scheduler_oncall_ticks_total",
			"Runs of the on-call escalator's tick (due escalation steps taken)."),
		pruned: counter(&all, "deskbot_scheduler_ledger_pruned_total",
			"Finished firings older than the ledger retention deleted from the ledger (current firings are kept)."),
		rateRemaining: gauge(&all, "deskbot_desk_rate_limit_remaining",
			"X-Ratelimit-Remaining of the last desk response the scheduler saw."),
		stretch: gauge(&all, "deskbot_scheduler_interval_stretch_ratio",
			"Factor by which poll intervals are stretched to stay within the background request budget (1: not stretched)."),
		plannedRPM: gauge(&all, "deskbot_scheduler_planned_requests_per_minute",
			"Requests per minute the jobs would send at their nominal intervals, from recent cycles."),
	}
	m.Metrics = cycle.NewMetrics()
	all = append(all, m.Collectors()...)
	m.stretch.Set(1)
	m.rateRemaining.Set(-1)
	if reg != nil {
		reg.MustRegister(all...)
	}
	return m
}

// The constructors of newMetrics: each makes one collector and adds it to
// *all, the collectors to register.

func counter(all *[]prometheus.Collector, name, help string) prometheus.Counter {
	return collect(all, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

func gauge(all *[]prometheus.Collector, name, help string) prometheus.Gauge {
	return collect(all, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

func counterVec(all *[]prometheus.Collector, name, help string, labels ...string) *prometheus.CounterVec {
	return collect(all, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
}

func gaugeVec(all *[]prometheus.Collector, name, help string, labels ...string) *prometheus.GaugeVec {
	return collect(all, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
}

func histogramVec(all *[]prometheus.Collector, name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return collect(all, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels))
}

func collect[C prometheus.Collector](all *[]prometheus.Collector, c C) C {
	*all = append(*all, c)
	return c
}

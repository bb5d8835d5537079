package oncall

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	started     *prometheus.CounterVec
	pages       *prometheus.CounterVec
	escalations *prometheus.CounterVec
	failures    *prometheus.CounterVec
	acks        *prometheus.CounterVec
	exhausted   *prometheus.CounterVec
	timeToAck   *prometheus.HistogramVec
	who         *whoCollector
	err         error
}

// newMetrics builds the metrics and registers them on reg (if not nil).
func newMetrics(e *Escalator, reg *prometheus.Registry) *metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "deskbot", Subsystem: "oncall", Name: name, Help: help}, []string{"policy"})
	}
	m := &metrics{
		started:     counter("pages_started_total", "On-call pages started (one per rule, ticket and episode)."),
		pages:       counter("pages_total", "Escalation steps delivered to the chat (people or groups paged)."),
		escalations: counter("escalations_total", "Steps beyond a page's first level: nobody acknowledged in time, or someone pressed Escalate now."),
		failures:    counter("page_failures_total", "Escalation steps the chat refused (retried, then skipped)."),
		acks:        counter("acks_total", "Pages acknowledged."),
		exhausted:   counter("exhausted_total", "Pages that ran through every level and round unacknowledged."),
		timeToAck: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "deskbot", Subsystem: "oncall", Name: "time_to_ack_seconds",
			Help:    "Time from the start of a page to its acknowledgement.",
			Buckets: []float64{30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400},
		}, []string{"policy"}),
		who: &whoCollector{
			esc:    e,
			onCall: prometheus.NewDesc("deskbot_oncall_on_call", "1 for the member on call now in each schedule (override: the shift is an override).", []string{"schedule", "member", "override"}, nil),
			next:   prometheus.NewDesc("deskbot_oncall_next", "1 for the member on call next in each schedule.", []string{"schedule", "member"}, nil),
			ends:   prometheus.NewDesc("deskbot_oncall_shift_end_timestamp_seconds", "When the current shift of each schedule ends (Unix time).", []string{"schedule"}, nil),
		},
	}
	if reg == nil {
		return m
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.started, m.pages, m.escalations, m.failures, m.acks, m.exhausted, m.timeToAck, m.who} {
		errs = append(errs, reg.Register(c))
	}
	m.err = errors.Join(errs...)
	return m
}

// zero makes every series of policy exist at 0, so that /metrics shows
// "no acknowledgement yet" as 0 and rates and alerts work from the first
// scrape rather than from the first event.
func (m *metrics) zero(policy string) {
	for _, c := range []*prometheus.CounterVec{m.started, m.pages, m.escalations, m.failures, m.acks, m.exhausted} {
		c.WithLabelValues(policy)
	}
	m.timeToAck.WithLabelValues(policy)
}

// whoCollector exposes who is on call, computed at scrape time.
type whoCollector struct {
	esc    *Escalator
	onCall *prometheus.Desc
	next   *prometheus.Desc
	ends   *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *whoCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.onCall
	ch <- c.next
	ch <- c.ends
}

// Collect implements prometheus.Collector: who is on call now and next
// in every schedule, read when scraped.
func (c *whoCollector) Collect(ch chan<- prometheus.Metric) {
	if c.esc == nil {
		return
	}
	for _, s := range c.esc.WhoIsOnCall(c.esc.now()) {
		over := "false"
		if s.Now.Override {
			over = "true"
		}
		ch <- prometheus.MustNewConstMetric(c.onCall, prometheus.GaugeValue, 1, s.Schedule, s.Now.Member, over)
		ch <- prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, 1, s.Schedule, s.Next.Member)
		ch <- prometheus.MustNewConstMetric(c.ends, prometheus.GaugeValue, float64(s.Now.End.Unix()), s.Schedule)
	}
}

package feed

import "github.com/prometheus/client_golang/prometheus"

// metrics are the feed's Prometheus collectors (their names predate the
// package: deskbot_mirror_*).
type metrics struct {
	mirrorTickets    prometheus.Gauge
	feedDecoded      prometheus.Counter
	feedUnordered    prometheus.Counter
	feedLag          prometheus.Gauge
	fullSyncs        *prometheus.CounterVec // outcome
	fullSyncRequests prometheus.Counter
	fullSyncProgress *prometheus.GaugeVec // workspace
	fullSyncTotal    *prometheus.GaugeVec // workspace
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		mirrorTickets: prometheus.NewGauge(prometheus.GaugeOpts{Name: "deskbot_mirror_tickets",
			Help: "Tickets in the local mirror the rules are evaluated on."}),
		feedDecoded: prometheus.NewCounter(prometheus.CounterOpts{Name: "deskbot_mirror_feed_tickets_total",
			Help: "Tickets the change feed returned (the overlap's duplicates included)."}),
		feedUnordered: prometheus.NewCounter(prometheus.CounterOpts{Name: "deskbot_mirror_feed_unordered_total",
			Help: "Change feed syncs whose answer ignored order_by=updated_at (paged by number instead)."}),
		feedLag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "deskbot_mirror_feed_cursor_age_seconds",
			Help: "How far the change feed's cursor lies behind deskbot's clock (the overlap included)."}),
		fullSyncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "deskbot_mirror_full_syncs_total",
			Help: "Full syncs of the mirror by outcome (complete, failed)."}, []string{"outcome"}),
		fullSyncRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: "deskbot_mirror_full_sync_requests_total",
			Help: "Desk requests spent on full syncs."}),
		fullSyncProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deskbot_mirror_full_sync_seen_tickets",
			Help: "Tickets the current or last full sync has read, by workspace."}, []string{"workspace"}),
		fullSyncTotal: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deskbot_mirror_full_sync_total_tickets",
			Help: "Open tickets the desk reported to the current or last full sync, by workspace."}, []string{"workspace"}),
	}
	if reg != nil {
		reg.MustRegister(m.mirrorTickets, m.feedDecoded, m.feedUnordered, m.feedLag,
			m.fullSyncs, m.fullSyncRequests, m.fullSyncProgress, m.fullSyncTotal)
	}
	return m
}

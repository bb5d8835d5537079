package feed

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/internal/prom"
)

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
		mirrorTickets: prom.Gauge("deskbot_mirror_tickets",
			"Tickets in the local mirror the rules are evaluated on."),
		feedDecoded: prom.Counter("deskbot_mirror_feed_tickets_total",
			"Tickets the change feed returned (the overlap's duplicates included)."),
		feedUnordered: prom.Counter("deskbot_mirror_feed_unordered_total",
			"Change feed syncs whose answer ignored order_by=updated_at (paged by number instead)."),
		feedLag: prom.Gauge("deskbot_mirror_feed_cursor_age_seconds",
			"How far the change feed's cursor lies behind deskbot's clock (the overlap included)."),
		fullSyncs: prom.CounterVec("deskbot_mirror_full_syncs_total",
			"Full syncs of the mirror by outcome (complete, failed).", "outcome"),
		fullSyncRequests: prom.Counter("deskbot_mirror_full_sync_requests_total",
			"Desk requests spent on full syncs."),
		fullSyncProgress: prom.GaugeVec("deskbot_mirror_full_sync_seen_tickets",
			"Tickets the current or last full sync has read, by workspace.", "workspace"),
		fullSyncTotal: prom.GaugeVec("deskbot_mirror_full_sync_total_tickets",
			"Open tickets the desk reported to the current or last full sync, by workspace.", "workspace"),
	}
	if reg != nil {
		reg.MustRegister(m.mirrorTickets, m.feedDecoded, m.feedUnordered, m.feedLag,
			m.fullSyncs, m.fullSyncRequests, m.fullSyncProgress, m.fullSyncTotal)
	}
	return m
}

package statuspage

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// sample is the desk's request counters at one moment.
type sample struct {
	at               time.Time
	total, throttled float64
}

// Run samples the desk's request counters once a minute until ctx ends,
// for the overview's requests-per-minute chart (the metrics count since
// start; the chart needs their history). Without a gatherer it only waits.
func (h *Handler) Run(ctx context.Context) error {
	h.sample(h.cfg.now())
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			h.sample(h.cfg.now())
		}
	}
}

// sample records the counters now, keeping the last hour.
func (h *Handler) sample(now time.Time) {
	if h.cfg.gatherer == nil {
		return
	}
	s := h.deskStats()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, sample{at: now, total: s.Requests, throttled: s.Throttled})
	for len(h.samples) > 0 && now.Sub(h.samples[0].at) > time.Hour+time.Minute {
		h.samples = h.samples[1:]
	}
}

// requestChart draws the desk requests of each sampled minute of the last
// hour, the 429s among them in their own colour.
func (h *Handler) requestChart() (template.HTML, int) {
	h.mu.Lock()
	samples := append([]sample(nil), h.samples...)
	h.mu.Unlock()
	if len(samples) < 2 {
		return "", 0
	}
	type minute struct{ n, throttled int }
	var mins []minute
	total, peak := 0, 1
	for i := 1; i < len(samples); i++ {
		m := minute{n: int(samples[i].total - samples[i-1].total), throttled: int(samples[i].throttled - samples[i-1].throttled)}
		mins = append(mins, m)
		total += m.n
		peak = max(peak, m.n)
	}
	const w, hgt, bar = 480, 80, 8
	var b strings.Builder
	title := html.EscapeString(fmt.Sprintf("%d desk requests in the last %d minutes (per minute, oldest left; peak %d a minute; 429s in red)", total, len(mins), peak))
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>`, w, hgt+14, w, hgt+14, title)
	for i, m := range mins {
		x := w - (len(mins)-i)*bar
		bh := m.n * hgt / peak
		th := min(bh, m.throttled*hgt/peak)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d"><title>%d</title></rect>`, x, hgt-bh, bar-1, bh, m.n)
		if th > 0 {
			fmt.Fprintf(&b, `<rect class="throttled" x="%d" y="%d" width="%d" height="%d"><title>%d answered 429</title></rect>`, x, hgt-th, bar-1, th, m.throttled)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">now</text><text x="%d" y="10" text-anchor="end">%d/min</text></svg>`, w, hgt+12, w, peak)
	return template.HTML(b.String()), total //nolint:gosec // numbers and an escaped title
}

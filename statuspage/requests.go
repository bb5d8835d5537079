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
	at                       time.Time
	total, throttled, people float64
}

// Run samples the desk's request counters once a minute until ctx ends,
// for the overview's requests-per-minute chart (the metrics count since
// start; the chart needs their history), and names the on-call people
// (WithPersonNames) as often. Without either it only waits.
func (h *Handler) Run(ctx context.Context) error {
	h.sample(h.cfg.now())
	h.refreshNames(ctx)
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			h.sample(h.cfg.now())
			h.refreshNames(ctx)
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
	h.samples = append(h.samples, sample{at: now, total: s.Requests, throttled: s.Throttled, people: s.People})
	for len(h.samples) > 0 && now.Sub(h.samples[0].at) > time.Hour+time.Minute {
		h.samples = h.samples[1:]
	}
}

// requestChart draws the desk requests of each sampled minute of the last
// hour, people's share (commands, buttons) and the 429s among them each in
// their own colour; people is how many of total were people's.
func (h *Handler) requestChart() (chart template.HTML, total, people int) {
	h.mu.Lock()
	samples := append([]sample(nil), h.samples...)
	h.mu.Unlock()
	if len(samples) < 2 {
		return "", 0, 0
	}
	type minute struct{ n, throttled, people int }
	var mins []minute
	peak := 1
	for i := 1; i < len(samples); i++ {
		m := minute{
			n:         int(samples[i].total - samples[i-1].total),
			throttled: int(samples[i].throttled - samples[i-1].throttled),
			people:    int(samples[i].people - samples[i-1].people),
		}
		mins = append(mins, m)
		total += m.n
		people += m.people
		peak = max(peak, m.n)
	}
	const w, hgt, bar = 480, 80, 8
	var b strings.Builder
	title := html.EscapeString(fmt.Sprintf("%d desk requests in the last %d minutes, %d of them people's (per minute, oldest left; peak %d a minute; people's in blue at the foot of each bar, 429s in red at its top)", total, len(mins), people, peak))
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>`, w, hgt+14, w, hgt+14, title)
	for i, m := range mins {
		x := w - (len(mins)-i)*bar
		bh := m.n * hgt / peak
		th := min(bh, m.throttled*hgt/peak)
		ph := min(bh, m.people*hgt/peak)
		if m.people > 0 && ph == 0 {
			ph = 1
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d"><title>%d</title></rect>`, x, hgt-bh, bar-1, bh, m.n)
		if ph > 0 {
			fmt.Fprintf(&b, `<rect class="people" x="%d" y="%d" width="%d" height="%d"><title>%d people&#39;s</title></rect>`, x, hgt-ph, bar-1, ph, m.people)
		}
		if th > 0 {
			fmt.Fprintf(&b, `<rect class="throttled" x="%d" y="%d" width="%d" height="%d"><title>%d answered 429</title></rect>`, x, hgt-th, bar-1, th, m.throttled)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">now</text><text x="%d" y="10" text-anchor="end">%d/min</text></svg>`, w, hgt+12, w, peak)
	return template.HTML(b.String()), total, people //nolint:gosec // numbers and an escaped title
}

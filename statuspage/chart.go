package statuspage

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/deskbot/deskbot/store"
)

const hours = 24

// perHour is a day of firings, oldest hour first.
type perHour [hours]int

// add counts c (hours since the day's start) into the day.
func (p *perHour) add(c store.HourCount) {
	p[min(max(c.Hour, 0), hours-1)] += c.N
}

// hourChart draws the firings per hour of the 24 hours up to now as an
// inline SVG bar chart (big: with axis labels; else a sparkline).
func hourChart(counts perHour, big bool) template.HTML {
	total, peak := 0, 0
	for _, c := range counts {
		total += c
		peak = max(peak, c)
	}
	title := fmt.Sprintf("%d firings in the last 24 hours (per hour, oldest left; peak %d an hour)", total, peak)
	return barChart(counts[:], title, "-24h", "now", "/h", big)
}

// barChart draws counts as an inline SVG bar chart, first left (big: with
// the axis labels left and right and the peak with unit; else a
// sparkline). It is built from numbers only; the texts are escaped.
func barChart(counts []int, title, left, right, unit string, big bool) template.HTML {
	peak := 0
	for _, c := range counts {
		peak = max(peak, c)
	}
	scale := max(peak, 1)
	bar := 5
	if big {
		// At least 160 px wide: a chart of a few bars (a backtest of a
		// day or two) would draw its two axis labels over each other.
		bar = max(20, 160/max(len(counts), 1))
	}
	w, h, pad := len(counts)*bar, 20, 0
	if big {
		h, pad = 120, 16
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>`, w, h+pad, w, h+pad, html.EscapeString(title))
	for i, c := range counts {
		bh := c * h / scale
		if c > 0 && bh == 0 {
			bh = 1
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d"><title>%d</title></rect>`, i*bar, h-bh, bar-1, bh, c)
	}
	if big {
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text><text x="%d" y="%d" text-anchor="end">%s</text><text x="%d" y="10" text-anchor="end">%d%s</text>`,
			h+pad-2, html.EscapeString(left), w, h+pad-2, html.EscapeString(right), w, peak, html.EscapeString(unit))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and escaped texts
}

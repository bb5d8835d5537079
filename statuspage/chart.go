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
// inline SVG bar chart (big: with axis labels; else a sparkline). It is
// built from numbers only; the one text, the title, is escaped.
func hourChart(counts perHour, big bool) template.HTML {
	peak := 0
	total := 0
	for _, c := range counts {
		peak = max(peak, c)
		total += c
	}
	scale := max(peak, 1)
	w, h, bar, pad := 120, 20, 5, 0
	if big {
		w, h, bar, pad = 480, 120, 20, 16
	}
	var b strings.Builder
	title := html.EscapeString(fmt.Sprintf("%d firings in the last 24 hours (per hour, oldest left; peak %d an hour)", total, peak))
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>`, w, h+pad, w, h+pad, title)
	for i, c := range counts {
		bh := c * h / scale
		if c > 0 && bh == 0 {
			bh = 1
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d"><title>%d</title></rect>`, i*bar, h-bh, bar-1, bh, c)
	}
	if big {
		fmt.Fprintf(&b, `<text x="0" y="%d">-24h</text><text x="%d" y="%d" text-anchor="end">now</text><text x="%d" y="10" text-anchor="end">%d/h</text>`, h+pad-2, w, h+pad-2, w, peak)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and an escaped title
}

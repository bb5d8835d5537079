package statuspage

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// hourChart draws the firings per hour of the 24 hours up to now as an
// inline SVG bar chart (big: with axis labels; else a sparkline). It is
// built from numbers only; the one text, the title, is escaped.
func hourChart(times []time.Time, now time.Time, big bool) template.HTML {
	const hours = 24
	var counts [hours]int
	for _, t := range times {
		age := now.Sub(t)
		if age < 0 || age >= hours*time.Hour {
			continue
		}
		counts[hours-1-int(age/time.Hour)]++
	}
	peak := 1
	total := 0
	for _, c := range counts {
		peak = max(peak, c)
		total += c
	}
	w, h, bar, pad := 120, 20, 5, 0
	if big {
		w, h, bar, pad = 480, 120, 20, 16
	}
	var b strings.Builder
	title := html.EscapeString(fmt.Sprintf("%d firings in the last 24 hours (per hour, oldest left; peak %d an hour)", total, peak))
	fmt.Fprintf(&b, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>`, w, h+pad, w, h+pad, title)
	for i, c := range counts {
		bh := c * h / peak
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

package statuspage

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/store"
)

// backtestTmpl is `deskbot rules backtest --format html` ("backtestfile"):
// one file that stands alone (the status pages' stylesheet inline, charts
// as inline SVG, no JavaScript). /backtest renders the same body
// ("backtestbody") inside the site's header.
var backtestTmpl = template.Must(template.New("").Funcs(funcs(nil)).ParseFS(assets, "templates/backtest.html"))

// backtestBody is what "backtestbody" renders.
type backtestBody struct {
	R     *backtest.Report
	CSS   template.CSS // the stand-alone file's stylesheet
	Daily template.HTML
	Rules []backtestRule
}

// backtestRule is one rule's row, its sentences as the text report says
// them.
type backtestRule struct {
	R                      backtest.RuleReport
	Held, Wait, Supervisor string
	Hours                  template.HTML
}

// newBacktestBody draws rep's charts. The firings per day come from the
// rules' days, not the per-firing list, which a kept report may lack.
func newBacktestBody(rep *backtest.Report) backtestBody {
	data := backtestBody{R: rep}
	first := rep.From.UTC().Truncate(24 * time.Hour)
	days := int(rep.To.Sub(first)/(24*time.Hour)) + 1
	daily := make([]int, max(days, 1))
	for _, r := range rep.Rules {
		for _, d := range r.Days {
			at, err := time.Parse(time.DateOnly, d.Date)
			if i := int(at.Sub(first) / (24 * time.Hour)); err == nil && i >= 0 && i < len(daily) {
				daily[i] += d.Firings
			}
		}
	}
	data.Daily = barChart(daily, fmt.Sprintf("%d firings, per day from %s", rep.Totals.Firings, first.Format(time.DateOnly)),
		first.Format("Jan 2"), rep.To.UTC().Format("Jan 2"), "/day", true)
	for _, r := range rep.Rules {
		row := backtestRule{R: r, Held: backtest.HeldText(r), Wait: backtest.WaitText(r), Hours: barChart(r.HourOfDay[:],
			fmt.Sprintf("%d firings of %s by hour of the day (UTC)", r.Firings, r.Name), "0h", "24h", "", false)}
		if r.Supervisor != nil {
			row.Supervisor = backtest.SupervisorText(r)
		}
		data.Rules = append(data.Rules, row)
	}
	return data
}

// WriteBacktest writes rep as one stand-alone HTML page in the status
// pages' style.
func WriteBacktest(w io.Writer, rep *backtest.Report) error {
	css, err := assets.ReadFile("templates/style.css")
	if err != nil {
		return err
	}
	data := newBacktestBody(rep)
	data.CSS = template.CSS(css) //nolint:gosec // our own embedded stylesheet
	return backtestTmpl.ExecuteTemplate(w, "backtestfile", data)
}

type backtestData struct {
	base
	Kept *store.Backtest // nil: no backtest kept yet
	Body backtestBody
}

// backtestPage is the last backtest's report, as the command kept it in
// the state store.
func (h *Handler) backtestPage(r *http.Request) (any, error) {
	ctx := r.Context()
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	d := backtestData{base: h.base("/backtest", v, noRule)}
	kept, ok, err := h.ledger.LastBacktest(ctx)
	if err != nil || !ok {
		return d, err
	}
	var rep backtest.Report
	if err := json.Unmarshal(kept.Report, &rep); err != nil {
		return nil, fmt.Errorf("the backtest report kept in the state store: %w", err)
	}
	d.Kept, d.Body = &kept, newBacktestBody(&rep)
	return d, nil
}

// join is xs joined with ", ".
func join(xs []string) string { return strings.Join(xs, ", ") }

// ids are ticket ids, "#1, #2", the first 20 of them.
func ids(xs []int64) string {
	var b strings.Builder
	for i, x := range xs {
		if i == 20 {
			fmt.Fprintf(&b, " and %d more", len(xs)-20)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d", x)
	}
	return b.String()
}

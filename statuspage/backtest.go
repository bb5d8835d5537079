package statuspage

import (
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// backtestPage is `deskbot rules backtest --format html`: one file that
// stands alone (the status pages' stylesheet inline, charts as inline SVG,
// no JavaScript).
const backtestPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backtest of {{.R.File}} · deskbot</title><style>{{.CSS}}</style><link rel="icon" href="data:,"></head><body>
<header><nav><a class="cur">Backtest</a></nav></header><main>
<h1>Backtest of {{.R.File}}</h1>
<p>From {{stamp .R.From}} to {{stamp .R.To}}: {{.R.Records}} changes of {{.R.Tickets}} tickets replayed in {{.R.Cycles}} cycles with the scheduler's planning step. Nothing was sent or written.</p>
{{with .R.Totals}}<dl><dt>firings</dt><dd>{{.Firings}}</dd><dt>chat messages</dt><dd>{{.Messages}}</dd><dt>pages</dt><dd>{{.Pages}}</dd><dt>public replies (e-mails to requesters)</dt><dd>{{.Replies}}</dd><dt>notes</dt><dd>{{.Notes}}</dd><dt>updates</dt><dd>{{.Updates}}</dd></dl>{{end}}
<p>Firings per day:</p>{{.Daily}}
<table><tr><th>rule</th><th>firings</th><th>tickets</th><th>messages</th><th>pages</th><th>replies</th><th>busiest hour</th><th>matching to firing</th><th>the desk's hourly supervisor</th><th>by hour of day (UTC)</th></tr>
{{range .Rules}}<tr><td>{{.R.Name}}<br><span class="muted">{{.R.Schedule}}; {{.R.Class}} first</span>{{if .R.Approximate}}<br><span class="bad">approximate: reads {{join .R.Unrecorded}}</span>{{end}}{{if .R.HeldBack}}<br><span class="muted">held back by caps {{.R.HeldBack}} times</span>{{end}}</td>
<td>{{.R.Firings}}</td><td>{{.R.Tickets}}</td><td>{{.R.Messages}}</td><td>{{.R.Pages}}</td><td>{{.R.Replies}}</td>
<td>{{with .R.BusiestHour}}{{stamp .Start}} ({{.Firings}}){{else}}-{{end}}</td>
<td>{{if .R.TimeToFire.N}}median {{dur .R.TimeToFire.Median}}, p90 {{dur .R.TimeToFire.P90}}{{else}}-{{end}}</td>
<td>{{with .R.Supervisor}}{{.Firings}} firings{{if .Compared}}; median {{dur .Later.Median}}, p90 {{dur .Later.P90}} later{{end}}{{if .Missed}}; {{.Missed}} never{{end}}{{if .Unreached}}; {{.Unreached}} after its last run{{end}}{{else}}-{{end}}</td>
<td>{{.Hours}}</td></tr>{{end}}</table>
{{with .R.Against}}<h2>Against {{.OldFile}}</h2>
<p>{{.OldTotals.Firings}} firings with the old file, {{$.R.Totals.Firings}} with this one.{{if .AddedRules}} Rules added: {{join .AddedRules}}.{{end}}{{if .RemovedRules}} Rules removed: {{join .RemovedRules}}.{{end}}</p>
<table><tr><th>rule</th><th>change</th><th>firings</th><th>tickets added</th><th>tickets removed</th><th>first at another time</th></tr>
{{range .Rules}}<tr><td>{{.Name}}</td><td>{{.Change}}</td><td>{{.OldFirings}} → {{.NewFirings}}</td><td>{{ids .AddedTickets}}</td><td>{{ids .RemovedTickets}}</td><td>{{len .Moved}}</td></tr>{{else}}<tr><td colspan="6">Every rule fires on the same tickets at the same times.</td></tr>{{end}}</table>{{end}}
<h2>Limits</h2><ul>{{range .R.Limits}}<li>{{.}}</li>{{end}}</ul>
<p class="muted">deskbot rules backtest; history from {{stamp .R.HistoryStart}}.</p></main></body></html>
`

var backtestTmpl = template.Must(template.New("backtest").Funcs(template.FuncMap{
	"stamp": func(t time.Time) string { return plan.Stamp(t) },
	"dur":   func(d time.Duration) string { return rules.ShortDuration(d.Round(time.Second)) },
	"join": func(xs []string) string {
		out := ""
		for i, x := range xs {
			if i > 0 {
				out += ", "
			}
			out += x
		}
		return out
	},
	"ids": func(xs []int64) string {
		out := ""
		for i, x := range xs {
			if i == 20 {
				return out + fmt.Sprintf(" and %d more", len(xs)-20)
			}
			if i > 0 {
				out += ", "
			}
			out += fmt.Sprintf("#%d", x)
		}
		return out
	},
}).Parse(backtestPage))

// WriteBacktest writes rep as one stand-alone HTML page in the status
// pages' style.
func WriteBacktest(w io.Writer, rep *backtest.Report) error {
	css, err := assets.ReadFile("templates/style.css")
	if err != nil {
		return err
	}
	type ruleRow struct {
		R     backtest.RuleReport
		Hours template.HTML
	}
	data := struct {
		R     *backtest.Report
		CSS   template.CSS
		Daily template.HTML
		Rules []ruleRow
	}{R: rep, CSS: template.CSS(css)} //nolint:gosec // our own embedded stylesheet
	days := int(rep.To.Sub(rep.From.UTC().Truncate(24*time.Hour))/(24*time.Hour)) + 1
	daily := make([]int, max(days, 1))
	first := rep.From.UTC().Truncate(24 * time.Hour)
	for _, f := range rep.Firings {
		if i := int(f.At.Sub(first) / (24 * time.Hour)); i >= 0 && i < len(daily) {
			daily[i]++
		}
	}
	data.Daily = barChart(daily, fmt.Sprintf("%d firings, per day from %s", rep.Totals.Firings, first.Format(time.DateOnly)),
		first.Format("Jan 2"), rep.To.UTC().Format("Jan 2"), "/day", true)
	for _, r := range rep.Rules {
		data.Rules = append(data.Rules, ruleRow{R: r, Hours: barChart(r.HourOfDay[:],
			fmt.Sprintf("%d firings of %s by hour of the day (UTC)", r.Firings, r.Name), "0h", "24h", "", false)})
	}
	return backtestTmpl.Execute(w, data)
}

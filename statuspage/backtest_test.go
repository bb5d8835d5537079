package statuspage

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

func TestWriteBacktest(t *testing.T) {
	t0 := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	set, err := rules.Load("<rules>.yaml", []byte(`version: 1
channels: {desk: "#desk"}
rules:
  - name: urgent
    query: "status:open AND priority:4"
    actions:
      - alert: {channel: desk, text: "{{ ticket.subject }}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := &history.Memory{}
	for i := range int64(3) {
		at := t0.Add(time.Duration(i) * 26 * time.Hour)
		m.Add(history.Record{At: at, Ticket: &sdclient.Ticket{ID: 1 + i, Subject: "<b>down</b>", Status: 2, Priority: 4, CreatedAt: at, UpdatedAt: at}})
	}
	rep, err := backtest.Run(context.Background(), set, m, t0, t0.Add(4*24*time.Hour), backtest.WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	backtest.Compare(rep, rep)
	var b strings.Builder
	if err := WriteBacktest(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Backtest of &lt;rules&gt;.yaml", `<svg class="chart"`, "<title>3 firings, per day from 2026-11-16</title>",
		`<rect x="0" y="0" width="31" height="120"><title>1</title>`, "body{font:14px", "<h2>Against", "Every rule fires on the same tickets"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the page:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script") || strings.Contains(out, "<rules>") {
		t.Error("the page has a script or an unescaped name")
	}
}

// /backtest shows the report the command kept, in the site's frame, and
// the overview links it; before any, both say how to make one; a report
// kept without its firings says so and still charts them per day.
func TestBacktestPage(t *testing.T) {
	w := newWorld(t, testRules)
	h := w.handler(t)
	for _, p := range []string{"/backtest", "/"} {
		code, body := get(t, h, p)
		if code != http.StatusOK || !strings.Contains(body, "No backtest yet: run <code>deskbot rules backtest FILE</code>") {
			t.Errorf("GET %s before any backtest: %d, no hint to run one:\n%.2000s", p, code, body)
		}
	}

	t0 := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	m := &history.Memory{}
	for i := range int64(5) {
		at := t0.Add(time.Duration(i) * 26 * time.Hour)
		m.Add(history.Record{At: at, Ticket: &sdclient.Ticket{ID: 1 + i, Subject: "printer", Status: 2, Priority: 4, CreatedAt: at, UpdatedAt: at}})
	}
	rep, err := backtest.Run(t.Context(), w.set, m, t0, t0.Add(6*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Firings != 10 { // urgent-note and printer-alert on each ticket
		t.Fatalf("the replay fired %d times, want 10", rep.Totals.Firings)
	}
	trimmed := *rep
	trimmed.Firings = []backtest.Firing{}
	body, err := json.Marshal(&trimmed)
	if err != nil {
		t.Fatal(err)
	}
	ranAt := t0.Add(7 * 24 * time.Hour)
	if err := w.st.KeepBacktest(t.Context(), store.Backtest{File: "rules <new>.yaml", RanAt: ranAt, From: rep.From, To: rep.To,
		Firings: rep.Totals.Firings, Trimmed: true, Report: body}); err != nil {
		t.Fatal(err)
	}
	code, page := get(t, h, "/backtest")
	if code != http.StatusOK {
		t.Fatalf("GET /backtest: %d %.500s", code, page)
	}
	for _, want := range []string{
		`<a href="/backtest" class="cur">Backtest</a>`, `<link rel="stylesheet" href="/static/style.css">`,
		"run at 2026-11-23 00:00:00Z (", "and kept in the state store", "without its list of the 10 firings one by one",
		"<dt>firings</dt><dd>10</dd>", "<dt>notes</dt><dd>5</dd>",
		"<td>urgent-note<br>", "<td>printer-alert<br>",
		"<title>10 firings, per day from 2026-11-16</title>", `<rect x="0" y="0" width="21" height="120"><title>2</title>`,
		"history exists from",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/backtest lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<style>") || strings.Contains(page, "rules <new>") {
		t.Error("/backtest inlines a stylesheet (the site's CSP forbids it) or does not escape the file's name")
	}
	_, overview := get(t, h, "/")
	if want := `Last backtest: <a href="/backtest">rules &lt;new&gt;.yaml</a>, ran 2026-11-23 00:00:00Z`; !strings.Contains(overview, want) {
		t.Errorf("the overview lacks %q:\n%s", want, overview)
	}
	if !strings.Contains(overview, "10 firings from 2026-11-16 00:00:00Z to 2026-11-22 00:00:00Z") {
		t.Errorf("the overview does not give the last backtest's firings and window:\n%s", overview)
	}
}

// A big chart of few bars (a backtest of one day) is wide enough for its
// two axis labels; one of many bars keeps 20 px a bar.
func TestBarChartWidth(t *testing.T) {
	for _, tc := range []struct {
		bars  int
		width string
	}{{1, `<svg class="chart" role="img" width="160" `}, {2, `<svg class="chart" role="img" width="160" `}, {24, `<svg class="chart" role="img" width="480" `}} {
		if got := string(barChart(make([]int, tc.bars), "t", "Nov 27", "Nov 28", "/day", true)); !strings.HasPrefix(got, tc.width) {
			t.Errorf("%d bars: %.80s, want it to begin %q", tc.bars, got, tc.width)
		}
	}
}

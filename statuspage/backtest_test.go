package statuspage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
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
		`<rect x="0" y="0" width="19" height="120"><title>1</title>`, "body{font:14px", "<h2>Against", "Every rule fires on the same tickets"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the page:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script") || strings.Contains(out, "<rules>") {
		t.Error("the page has a script or an unescaped name")
	}
}

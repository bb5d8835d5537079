package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// Both rules read recorded fields only (status, priority), so the replay
// must fire exactly where the live run did.
const backtestE2ERules = historyRules + `  - name: waiting
    query: "status:3"
    every: 1s
    actions:
      - alert: {channel: oncall, text: "Waiting #{{ ticket.id }}"}
`

// rules backtest end to end: deskbot runs over sdsim with a SQLite state
// file, records the starting state and two changes while its scheduler
// fires; then `rules backtest` over that file reports the rules, the
// history's start and the same (rule, ticket) firings as the live ledger,
// and keeps its report (not with --keep=false): deskbot started again on
// that state shows it on /backtest and links it from the overview.
func TestRulesBacktestEndToEnd(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	urgent := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Server room flooding", Status: 2, Priority: 4})
	later := sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN slow", Status: 2, Priority: 1})
	parked := sim.Desk.AddTicket(sdsim.Ticket{Subject: "New laptop", Status: 2, Priority: 2})
	fake := slackfake.New(slackfake.WithChannels(slackfake.Channel{ID: "C0ONCALL", Name: "it-oncall"}))
	defer fake.Close()
	dir := t.TempDir()
	statePath := filepath.Join(dir, "state.db")
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(backtestE2ERules), 0o600); err != nil {
		t.Fatal(err)
	}

	st, err := store.Open(t.Context(), statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fired := func() []string { // "rule #ticket", done firings of the live ledger
		rows, err := st.RecentFirings(t.Context(), store.FiringFilter{State: "done"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s #%d", r.Rule, r.TicketID))
		}
		slices.Sort(out)
		return out
	}
	recorded := func(id int64, ok func(status, priority int) bool) bool {
		found := false
		err := st.Scan(t.Context(), time.Time{}, time.Now().Add(time.Hour), func(r history.Record) error {
			if r.Ticket.ID == id && ok(r.Ticket.Status, r.Ticket.Priority) {
				found = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the ledger holds %v", what, fired())
			}
		}
	}

	stop := runInProcess(t, sim, fake, backtestE2ERules, "DESKBOT_STATE", statePath)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitFor("the starting state fires urgent", func() bool { return slices.Contains(fired(), fmt.Sprintf("urgent #%d", urgent.ID)) })
	sim.Desk.UpdateTicket(later.ID, func(x *sdsim.Ticket) { x.Priority = 4 })
	sim.Desk.UpdateTicket(parked.ID, func(x *sdsim.Ticket) { x.Status = 3 })
	waitFor("the changes fire and are recorded", func() bool {
		return len(fired()) == 3 &&
			recorded(later.ID, func(_, p int) bool { return p == 4 }) &&
			recorded(parked.ID, func(s, _ int) bool { return s == 3 })
	})
	stop()
	stopped = true
	if t.Failed() {
		return
	}
	live := fired()
	start, err := st.Start(t.Context())
	if err != nil || start.IsZero() {
		t.Fatalf("the history's start: %v, %v", start, err)
	}
	// The replay runs up to the second the command runs in: wait until it
	// holds a cycle of the 1s rules after the last change recorded.
	var last time.Time
	if err := st.Scan(t.Context(), start, time.Now().Add(time.Hour), func(r history.Record) error { last = r.At; return nil }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(last.Add(2 * time.Second)))

	env := map[string]string{"DESKBOT_STATE": statePath}
	code, out, stderr := runRules(t, env, "rules", "backtest", rulesFile, "--since", "1h")
	if code != 0 {
		t.Fatalf("rules backtest: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"\nrule urgent (every 1s;", "\nrule waiting (every 1s;",
		"history exists from " + start.UTC().Format("2006-01-02"),
		"  firings: 2 on 2 tickets;", "  firings: 1 on 1 ticket;",
		"nothing was sent to the desk or the chat",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	// No ticket stopped matching: the hourly supervisor missed none.
	for _, bad := range []string{"APPROXIMATE", "never ("} {
		if strings.Contains(out, bad) {
			t.Errorf("the report says %q:\n%s", bad, out)
		}
	}

	code, out, stderr = runRules(t, env, "rules", "backtest", rulesFile, "--since", "1h", "--format", "json")
	if code != 0 {
		t.Fatalf("rules backtest --format json: exit %d\n%s", code, stderr)
	}
	var rep backtest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out)
	}
	if !rep.HistoryStart.Equal(start) {
		t.Errorf("history_start %v, the store's %v", rep.HistoryStart, start)
	}
	var replayed []string
	for _, f := range rep.Firings {
		replayed = append(replayed, fmt.Sprintf("%s #%d", f.Rule, f.TicketID))
	}
	slices.Sort(replayed)
	if !slices.Equal(replayed, live) {
		t.Errorf("the backtest fired %v; the live run %v", replayed, live)
		_ = st.Scan(t.Context(), time.Time{}, time.Now().Add(time.Hour), func(r history.Record) error {
			t.Logf("history: at %s #%d status %d priority %d updated %s", r.At.Format("15:04:05.000000"), r.Ticket.ID, r.Ticket.Status, r.Ticket.Priority, r.Ticket.UpdatedAt.Format("15:04:05.000"))
			return nil
		})
		t.Logf("replayed from %s to %s (history from %s) in %d cycles: %+v", rep.From.Format("15:04:05.000000"), rep.To.Format("15:04:05.000000"), start.Format("15:04:05.000000"), rep.Cycles, rep.Firings)
	}
	if rep.Tickets != 3 || len(rep.Rules) != 2 {
		t.Fatalf("the report holds %d tickets and %d rules, want 3 and 2", rep.Tickets, len(rep.Rules))
	}
	for _, r := range rep.Rules {
		if s := r.Supervisor; s == nil || s.Missed != 0 || s.Compared+s.Unreached != r.Firings {
			t.Errorf("rule %s: %d firings, supervisor %+v", r.Name, r.Firings, s)
		}
	}
	if !strings.Contains(stderr, "The report is kept in the state store for the status pages' /backtest") {
		t.Errorf("rules backtest does not say it kept its report: %q", stderr)
	}
	// --keep=false leaves the report kept before in place.
	if code, _, stderr := runRules(t, env, "rules", "backtest", rulesFile, "--since", "1h", "--supervisor=false", "--keep=false"); code != 0 || stderr != "" {
		t.Fatalf("rules backtest --keep=false: exit %d, stderr %q", code, stderr)
	}
	kept, ok, err := st.LastBacktest(t.Context())
	if err != nil || !ok || kept.File != rulesFile || kept.Firings != 3 || !kept.To.Equal(rep.To) {
		t.Fatalf("the kept report: %s, %d firings, to %v (%v, %v); want the JSON run's (%s, 3 firings, to %v)",
			kept.File, kept.Firings, kept.To, ok, err, rulesFile, rep.To)
	}

	addr := freeAddr(t)
	stop = runInProcess(t, sim, fake, backtestE2ERules, "DESKBOT_STATE", statePath, "DESKBOT_HTTP_ADDR", addr)
	defer stop()
	pages := map[string]string{}
	for _, p := range []string{"/backtest", "/"} {
		pages[p] = getWhenUp(t, "http://"+addr+p)
	}
	var perRule []string
	for _, r := range rep.Rules {
		perRule = append(perRule, fmt.Sprintf("<td>%s<br>", r.Name), fmt.Sprintf("</td>\n<td>%d</td><td>%d</td>", r.Firings, r.Tickets))
	}
	for _, want := range append([]string{
		"<h1>Backtest of " + rulesFile + "</h1>", `<a href="/backtest" class="cur">Backtest</a>`,
		fmt.Sprintf("%d changes of 3 tickets replayed in %d cycles", rep.Records, rep.Cycles),
		"<dt>firings</dt><dd>3</dd>", fmt.Sprintf("<dt>chat messages</dt><dd>%d</dd>", rep.Totals.Messages),
		"history exists from " + start.UTC().Format("2006-01-02"),
	}, perRule...) {
		if !strings.Contains(pages["/backtest"], want) {
			t.Errorf("/backtest lacks %q:\n%s", want, pages["/backtest"])
		}
	}
	if want := `Last backtest: <a href="/backtest">` + rulesFile + `</a>, ran `; !strings.Contains(pages["/"], want) ||
		!strings.Contains(pages["/"], "3 firings from ") {
		t.Errorf("the overview does not link the last backtest (%q, 3 firings):\n%s", want, pages["/"])
	}
}

// getWhenUp GETs url once the server answers (deskbot starting), and
// returns the page, which must be 200.
func getWhenUp(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := client.Get(url)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v", url, err)
			}
			continue
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, body)
		}
		return string(body)
	}
}

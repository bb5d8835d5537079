package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/store"
)

// rules backtest: its flags, and the clear error before any history
// exists (the store file is not created).
func TestRulesBacktestErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(customFieldRules), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nrules:\n  - name: x\n    query: \"priority:\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no history yet", []string{"rules.yaml", "--custom-field", "location:text"}, "no history recorded yet"},
		{"bad since", []string{"rules.yaml", "--since", "7w"}, `--since: "7w": want whole days such as 7d`},
		{"bad format", []string{"rules.yaml", "--format", "pdf"}, `--format: "pdf": want text, json or html`},
		{"bad file", []string{"bad.yaml"}, "bad.yaml:4:"},
		{"missing file", nil, "missing FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"rules", "backtest"}
			for _, a := range tc.args {
				if strings.HasSuffix(a, ".yaml") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			code, _, stderr := runRules(t, map[string]string{"DESKBOT_STATE": state}, args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(state); err == nil {
				t.Error("the backtest created the state store")
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseSince(in); err != nil || got != want {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0d", "-1h", "d", "1.5d"} {
		if _, err := parseSince(in); err == nil {
			t.Errorf("parseSince(%q): no error", in)
		}
	}
}

// A report is kept whole, or without its per-firing list when that makes
// it larger than keptReportMax: the figures stay, and the kept row says
// it was trimmed.
func TestKeepReportTrimsLargeReports(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	report := func(n int) *backtest.Report {
		rep := &backtest.Report{File: "rules.yaml", From: t0, To: t0.Add(7 * 24 * time.Hour), Firings: []backtest.Firing{},
			Rules: []backtest.RuleReport{{Name: "r", Totals: backtest.Totals{Firings: n, Notes: n}}}}
		rep.Totals = rep.Rules[0].Totals
		for i := range n {
			at := t0.Add(time.Duration(i) * time.Minute)
			rep.Firings = append(rep.Firings, backtest.Firing{Rule: "r", TicketID: int64(i), At: at, MatchingSince: at, Episode: 1})
		}
		return rep
	}
	for _, tc := range []struct {
		firings int
		trimmed bool
	}{{10, false}, {5000, true}} {
		rep := report(tc.firings)
		ranAt := t0.Add(8*24*time.Hour + time.Duration(tc.firings)*time.Second)
		if err := keepReport(t.Context(), st, rep, ranAt); err != nil {
			t.Fatal(err)
		}
		kept, ok, err := st.LastBacktest(t.Context())
		if err != nil || !ok {
			t.Fatalf("LastBacktest: %v, %v", ok, err)
		}
		var back backtest.Report
		if err := json.Unmarshal(kept.Report, &back); err != nil {
			t.Fatal(err)
		}
		switch {
		case kept.Trimmed != tc.trimmed || len(kept.Report) > keptReportMax && tc.trimmed:
			t.Errorf("%d firings: trimmed %v, %d bytes; want trimmed %v", tc.firings, kept.Trimmed, len(kept.Report), tc.trimmed)
		case !kept.RanAt.Equal(ranAt) || kept.Firings != tc.firings || back.Totals.Firings != tc.firings || back.Rules[0].Notes != tc.firings:
			t.Errorf("%d firings: kept %+v, report totals %+v", tc.firings, kept, back.Totals)
		case tc.trimmed != (len(back.Firings) == 0):
			t.Errorf("%d firings: the kept report lists %d of them", tc.firings, len(back.Firings))
		}
		if len(rep.Firings) != tc.firings {
			t.Errorf("keepReport changed the printed report's firings: %d left", len(rep.Firings))
		}
	}
}

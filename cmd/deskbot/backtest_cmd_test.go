package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// MirrorSource: an explanation trusts the mirror only when it is built
// and its cursor is at most MirrorMaxLag behind, and says so.
func TestMirrorSource(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		cursor time.Time
		trust  bool
		says   string
	}{
		{"not built", time.Time{}, false, "the mirror is not built yet"},
		{"fresh", now.Add(-time.Minute), true, "From deskbot's mirror, as of 09:59:00 UTC"},
		{"at the limit", now.Add(-MirrorMaxLag), true, "the desk was not asked"},
		{"too old", now.Add(-MirrorMaxLag - time.Second), false, "too old to trust (as of 09:44:59 UTC, more than 15 minutes ago)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			source, trust := MirrorSource(store.MirrorState{Cursor: c.cursor}, now)
			if trust != c.trust || !strings.Contains(source, c.says) {
				t.Errorf("MirrorSource = %q, %v; want trust %v and %q", source, trust, c.trust, c.says)
			}
		})
	}
}

// Why.Text says what the ledger holds only when it is known, and adds
// what a cap held back to the rule's ledger line.
func TestWhyText(t *testing.T) {
	set, err := rules.Load("rules.yaml", []byte(makeRules))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	tk := &sdclient.Ticket{ID: 7, Subject: "down", Priority: 4, Status: sdclient.StatusOpen}
	w := Why{Ticket: tk, Set: set, Now: now}
	out, err := w.Text()
	if err != nil || !strings.Contains(out, `Ticket #7 "down"`) || !strings.Contains(out, "Next runs:") || strings.Contains(out, "Ledger:") {
		t.Fatalf("without a ledger: %v\n%s", err, out)
	}
	w.Ledger = true
	w.Held = map[string]Held{"urgent": {At: now, Cap: CapRule, Limit: 3}}
	out, err = w.Text()
	if err != nil || !strings.Contains(out, "urgent: never fired") || !strings.Contains(out, "note: never fired") {
		t.Fatalf("with a ledger: %v\n%s", err, out)
	}
	if line := lineWith(out[strings.Index(out, "Ledger:"):], "  urgent: "); !strings.Contains(line, "; "+w.Held["urgent"].String()) {
		t.Errorf("urgent's ledger line does not say it was held back: %q", line)
	}
	if out, _ := (Why{Ticket: tk, Now: now}).Text(); out != NoRules {
		t.Errorf("without rules: %q", out)
	}
}

func lineWith(s, prefix string) string {
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

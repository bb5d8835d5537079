package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// TestRenderErrsWith holds RenderErrsWith to what EvaluateRules says of
// the same rules and tickets: the decision's error, same text, for those
// whose actions fail to render; nil for those that render.
func TestRenderErrsWith(t *testing.T) {
	src := "version: 1\nchannels: {desk: \"#desk\"}\nrules:\n" +
		verdictRule("literal", "status:open", "", "no template") +
		verdictRule("subject", "status:open", "", "{{ ticket.subject }}") +
		verdictRule("seats", "status:open", "", "seats {{ ticket.custom_fields.seats + 1 }}") +
		verdictRule("clock", "status:open", "", "{{ now().Hour() > 30 ? int(ticket.subject) : 0 }}") +
		`  - name: alert-mention
    query: "status:open"
    actions:
      - alert: {channel: desk, text: "{{ ticket.id }}", mention: "{{ int(ticket.subject) > 0 ? '@here' : '' }}"}
  - name: set-category
    query: "status:open"
    actions:
      - note: "fine"
      - set: {category: "{{ ticket.custom_fields.seats * 2 }}"}
`
	s, err := Load("render.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tickets := []struct {
		name string
		tk   *sdclient.Ticket
		// fail are the rules whose rendering fails on it
		fail []string
	}{
		{"no custom fields, a title", ticket(1, func(tk *sdclient.Ticket) { tk.Subject = "printer" }),
			[]string{"seats", "alert-mention", "set-category"}},
		{"custom fields, a number as title", ticket(2, func(tk *sdclient.Ticket) {
			tk.Subject, tk.CustomFields = "7", map[string]any{"seats": 3, "site": "Zurich"}
		}), nil},
	}
	var buf VerdictBuf
	for _, tc := range tickets {
		t.Run(tc.name, func(t *testing.T) {
			got := s.RenderErrsWith(&buf, s.Rules(), tc.tk, now, nil)
			if len(got) != len(s.Rules()) {
				t.Fatalf("%d answers for %d rules", len(got), len(s.Rules()))
			}
			for k, r := range s.Rules() {
				ds := s.EvaluateRules([]*Rule{r}, []*sdclient.Ticket{tc.tk}, now)
				if len(ds) != 1 {
					t.Fatalf("rule %s: %d decisions, want 1", r.Name, len(ds))
				}
				if g, w := errText(got[k]), errText(ds[0].Err); g != w {
					t.Errorf("rule %s: got %q, want EvaluateRules' %q", r.Name, g, w)
				}
				wantFail := strings.Contains(" "+strings.Join(tc.fail, " ")+" ", " "+r.Name+" ")
				if (got[k] != nil) != wantFail {
					t.Errorf("rule %s: error %v, want a failure: %v", r.Name, got[k], wantFail)
				}
			}
		})
	}
}

package rules

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

func TestLoadDMErrors(t *testing.T) {
	runLoadCases(t, []loadCase{
		{"dm scalar", ruleFile(ruleHead("a"), "    actions: [{dm: hi}]"), []string{
			`f.yaml:6:20: rule "a": dm: want a mapping such as {to: assignee, text: "..."}, got the string "hi"`}},
		{"dm missing to and text", ruleFile(ruleHead("a"), "    actions: [{dm: {channel: oncall}}]"), []string{
			`f.yaml:6:20: rule "a": dm: missing to: (assignee, requester, an e-mail or a Slack user id)`,
			`f.yaml:6:20: rule "a": dm: missing text`}},
		{"dm bad to", ruleFile(ruleHead("a"), "    actions: [{dm: {to: boss, text: hi, channel: oncall}}]"), []string{
			`f.yaml:6:25: rule "a": dm: to: "boss": want assignee, requester, an e-mail or a Slack user id (U...)`}},
		{"dm bad e-mail", ruleFile(ruleHead("a"), "    actions: [{dm: {to: \"a@@b\", text: hi, channel: oncall}}]"), []string{
			`f.yaml:6:25: rule "a": dm: to: "a@@b" is not a plain e-mail address such as alice@example.com`}},
		{"dm unknown key", ruleFile(ruleHead("a"), "    actions: [{dm: {to: assignee, text: hi, channel: oncall, mention: x}}]"), []string{
			`f.yaml:6:62: rule "a": unknown key "mention" in dm (want one of to, text, channel)`}},
		{"dm no fallback channel", ruleFile(ruleHead("a"), "    actions: [{dm: {to: assignee, text: hi}}]"), []string{
			`f.yaml:6:20: rule "a": dm: missing channel: name one, add an alert to the rule, or define the desk alias under channels: (where the message goes when the person has no chat account or the ticket no assignee)`}},
	})
}

// A dm: renders its text for the ticket; without channel: it falls back
// to the rule's alert channel, else the desk alias.
func TestDMRenderAndFallback(t *testing.T) {
	s := mustLoad(t, `version: 1
channels: {desk: "#it-desk", oncall: "#it-oncall"}
rules:
  - name: nudge
    query: status:open
    if: 'ticket.due_by - now() < duration("30m")'
    actions:
      - dm: {to: assignee, text: "#{{ ticket.id }} is due at {{ ticket.due_by }}"}
  - name: nudge-alerting
    query: status:open
    actions:
      - dm: {to: requester, text: "hi"}
      - alert: {channel: oncall, text: "x"}
  - name: nudge-named
    query: status:open
    actions:
      - dm: {to: "alice@example.com", text: "hi", channel: "#elsewhere"}
`)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	due := now.Add(20 * time.Minute)
	tk := &sdclient.Ticket{ID: 42, Status: 2, Priority: 2, DueBy: &due}
	cases := []struct{ rule, to, channel, text string }{
		{"nudge", DMAssignee, "#it-desk", "#42 is due at 2026-11-25T12:20:00Z"},
		{"nudge-alerting", DMRequester, "#it-oncall", "hi"},
		{"nudge-named", "alice@example.com", "#elsewhere", "hi"},
	}
	for _, c := range cases {
		acts, err := s.RenderActions(s.Rule(c.rule), tk, now)
		if err != nil {
			t.Fatal(err)
		}
		a := acts[0]
		if a.Kind != ActionDM || a.To != c.to || a.Channel != c.channel || a.Text != c.text {
			t.Errorf("%s: got %+v, want dm to %s else %s: %q", c.rule, a, c.to, c.channel, c.text)
		}
	}
}

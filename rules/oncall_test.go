package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// oncallFile is a valid file with an oncall: section
// (testdata/oncall.yaml, ending in rules:); rule lines start at line 20.
func oncallFile(ruleLines ...string) string {
	head, err := os.ReadFile(filepath.Join("testdata", "oncall.yaml"))
	if err != nil {
		panic(err)
	}
	return string(head) + strings.Join(ruleLines, "\n") + "\n"
}

func TestLoadPageAction(t *testing.T) {
	s, err := Load("f.yaml", []byte(oncallFile(
		"  - name: page-urgent",
		"    query: status:open AND priority:4",
		"    actions:",
		"      - page: {policy: it-urgent}",
		"      - page: {policy: quiet, channel: desk, text: 'Quiet page for #{{ ticket.id }}'}",
		"      - note: paged",
	)))
	if err != nil {
		t.Fatal(err)
	}
	oc := s.OnCall()
	if oc == nil || oc.Policy("it-urgent") == nil || oc.Schedule("it-primary") == nil || len(oc.Policies) != 2 {
		t.Fatalf("OnCall() = %+v", oc)
	}
	r := s.Rule("page-urgent")
	if got := r.ActionKinds(); len(got) != 3 || got[0] != ActionPage || got[1] != ActionPage || got[2] != ActionNote {
		t.Fatalf("kinds %v", got)
	}
	tk := &sdclient.Ticket{ID: 7, Subject: "Core switch down", Status: 2, Priority: 4}
	ds := s.Evaluate([]*sdclient.Ticket{tk}, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	if len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("decisions %+v", ds)
	}
	a := ds[0].Actions
	if a[0].Kind != ActionPage || a[0].Policy != "it-urgent" || a[0].Channel != "#it-oncall" || a[0].Text != "Ticket #7 needs the on-call: Core switch down" {
		t.Errorf("default page %+v", a[0])
	}
	if a[1].Policy != "quiet" || a[1].Channel != "#it-desk" || a[1].Text != "Quiet page for #7" {
		t.Errorf("page with channel and text %+v", a[1])
	}
	if got := describeAction(a[0]); got != "page it-urgent in #it-oncall: Ticket #7 needs the on-call: Core switch down" {
		t.Errorf("describe %q", got)
	}
}

func TestLoadWithoutOnCall(t *testing.T) {
	s, err := Load("f.yaml", []byte(ruleFile("  - name: a", "    query: status:open", "    actions: [{note: hi}]")))
	if err != nil {
		t.Fatal(err)
	}
	if s.OnCall() != nil {
		t.Fatalf("OnCall() = %+v, want nil without an oncall: section", s.OnCall())
	}
	// oncall: with nothing under it is no on-call either.
	s, err = Load("f.yaml", []byte("version: 1\noncall:\nrules: []\n"))
	if err != nil || s.OnCall() != nil {
		t.Fatalf("empty oncall: %v, %+v", err, s)
	}
}

func TestLoadOnCallErrors(t *testing.T) {
	tests := []loadCase{
		{"unknown policy", oncallFile(
			ruleHead("a"),
			"    actions:",
			"      - page: {policy: it-urgnet}"), []string{
			`f.yaml:23:24: rule "a": page: unknown escalation policy "it-urgnet" (known: it-urgent, quiet)`}},
		{"page without oncall section", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - page: {policy: it-urgent}"), []string{
			`f.yaml:7:24: rule "a": page: unknown escalation policy "it-urgent": the file has no oncall: section defining policies`}},
		{"page missing policy and unknown key", oncallFile(
			ruleHead("a"),
			"    actions:",
			"      - page: {channel: oncall, polcy: x}"), []string{
			`f.yaml:23:15: rule "a": page: missing policy (the name of an escalation policy under oncall: policies:)`,
			`f.yaml:23:33: rule "a": unknown key "polcy" in page (want one of policy, channel, text)`}},
		{"page shorthand", oncallFile(
			ruleHead("a"),
			"    actions:",
			"      - page: it-urgent"), []string{
			`f.yaml:23:15: rule "a": page: want a mapping such as {policy: it-urgent}, got the string "it-urgent"`}},
		{"page unknown channel and bad text", oncallFile(
			ruleHead("a"),
			"    actions:",
			"      - page: {policy: quiet, channel: nowhere, text: '{{ ticket.nope }}'}"), []string{
			`f.yaml:23:40: rule "a": page: unknown channel "nowhere": not an alias under channels: and not #name or a channel id`,
			`f.yaml:23:66: rule "a": page text: template: type ticket has no field nope`}},
		{"page without a channel", "version: 1\n" + strings.SplitN(oncallFile(
			ruleHead("a"),
			"    actions:",
			"      - page: {policy: quiet}"), "\n", 3)[2], []string{
			`f.yaml:22:15: rule "a": page: missing channel: name one, or define the oncall alias under channels: (where the page card goes)`}},
		{"oncall section errors are positioned", `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - name: it-primary
      time_zone: Europe/Zurich
      rotation: 0d
      start: 2026-01-05
      members: [alice@example.com]
      overrides:
        - {member: carol@example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
        - {member: dave@example.com, from: "2026-03-29T08:00", to: "2026-03-29T20:00"}
  policies:
    - name: it-urgent
      levels:
        - {schedule: it-secondary, after: 10m}
  extra: 1
rules:
  - name: a
    query: status:open
    actions:
      - page: {policy: it-urgent}
`, []string{
			`f.yaml:7:17: oncall schedule "it-primary": rotation: 0d is zero: want a positive length such as 12h, 1d or 1w`,
			`f.yaml:16:22: oncall policy "it-urgent": level 1: unknown schedule "it-secondary" (known: it-primary)`,
			`f.yaml:17:3: oncall: unknown key "extra" in the oncall section (want one of schedules, policies)`}},
		{"overlapping overrides", `version: 1
oncall:
  schedules:
    - name: it-primary
      time_zone: UTC
      rotation: 1w
      start: 2026-01-05
      members: [alice@example.com]
      overrides:
        - {member: carol@example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
        - {member: dave@example.com, from: "2026-03-29T08:00", to: "2026-03-29T20:00"}
rules: []
`, []string{
			`f.yaml:11:11: oncall schedule "it-primary": override 2 (dave@example.com, 2026-03-29T08:00 to 2026-03-29T20:00) overlaps the override at line 10 (carol@example.com, 2026-03-28T18:00 to 2026-03-30T09:00)`}},
		{"oncall not a mapping", "version: 1\noncall: [a]\nrules: []\n", []string{
			`f.yaml:2:9: oncall: the oncall section: want a mapping, got a list`}},
	}
	runLoadCases(t, tests)
}

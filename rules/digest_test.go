package rules

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

func TestLoadDigest(t *testing.T) {
	s := mustLoad(t, `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: morning
    cron: "0 8 * * 1-5"
    digest: {}
  - name: network
    query: "status:open AND tag:'network'"
    every: 1h
    digest: {channel: "#net", breaching_within: 2h, list: 3}
  - name: a
    query: status:open
    actions: [{note: hi}]
`)
	ds := s.Digests()
	if len(ds) != 2 || len(s.Rules()) != 1 {
		t.Fatalf("digests %d, rules %d; want 2 and 1", len(ds), len(s.Rules()))
	}
	m, n := ds[0], ds[1]
	if m.Name != "morning" || m.Cron != "0 8 * * 1-5" || m.Channel != "#it-desk" || m.Within != DefaultDigestWithin || m.List != DefaultDigestList || m.Query != "" {
		t.Errorf("morning: %+v", m)
	}
	if n.Every != time.Hour || n.Channel != "#net" || n.Within != 2*time.Hour || n.List != 3 {
		t.Errorf("network: %+v", n)
	}
	tagged := &sdclient.Ticket{ID: 1, Status: 2, Tags: []string{"network"}}
	plain := &sdclient.Ticket{ID: 2, Status: 2}
	if !m.Matches(plain) || !n.Matches(tagged) || n.Matches(plain) {
		t.Error("Matches: the query decides, and no query matches every ticket")
	}
}

func TestLoadDigestErrors(t *testing.T) {
	runLoadCases(t, []loadCase{
		{"digest with actions", ruleFile("  - name: d", "    cron: \"0 8 * * *\"", "    digest: {channel: oncall}", "    actions: [{note: hi}]"), []string{
			`f.yaml:7:5: rule "d": actions: a digest rule takes only name, query, cron or every, and digest:`}},
		{"digest without channel", ruleFile("  - name: d", "    digest: {}"), []string{
			`f.yaml:5:13: rule "d": digest: missing channel: name one, or define the desk alias under channels:`}},
		{"digest unknown key", ruleFile("  - name: d", "    digest: {channel: oncall, when: 8}"), []string{
			`f.yaml:5:31: rule "d": unknown key "when" in digest (want one of channel, breaching_within, list)`}},
		{"digest bad list", ruleFile("  - name: d", "    digest: {channel: oncall, list: 500}"), []string{
			`f.yaml:5:37: rule "d": digest: list: 500: want at most 50`}},
	})
}

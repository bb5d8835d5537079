package oncall_test

import "testing"

const involvesConfig = `version: 1
oncall:
  schedules:
    - name: it-primary
      time_zone: Europe/Zurich
      rotation: 1w
      start: 2026-01-05
      members: [alice@example.com, U0123ABC]
      overrides:
        - {member: Carol@Example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
    - name: net
      time_zone: UTC
      rotation: 1d
      start: 2026-01-05
      members: [nina@example.com]
  policies:
    - name: it-urgent
      levels:
        - {schedule: it-primary, after: 10m}
        - {user: boss@example.com, after: 15m}
        - {user: U0BOSS, after: 15m}
        - {group: S0GROUP, after: 15m}
    - name: groups-only
      levels:
        - {group: "@it-oncall", after: 1h}
`

func TestPolicyInvolves(t *testing.T) {
	cfg := mustParse(t, involvesConfig)
	for _, tc := range []struct {
		name, policy, email, slackID string
		want                         bool
	}{
		{"schedule member by e-mail", "it-urgent", "alice@example.com", "UALICE", true},
		{"e-mail matches whatever the case", "it-urgent", "ALICE@example.COM", "", true},
		{"e-mail with stray spaces", "it-urgent", " alice@example.com ", "", true},
		{"schedule member by Slack id", "it-urgent", "someone@example.com", "U0123ABC", true},
		{"Slack id alone", "it-urgent", "", "U0123ABC", true},
		{"Slack ids match exactly", "it-urgent", "", "u0123abc", false},
		{"override member", "it-urgent", "carol@example.com", "UCAROL", true},
		{"user: level by e-mail", "it-urgent", "boss@example.com", "", true},
		{"user: level by Slack id", "it-urgent", "", "U0BOSS", true},
		{"member of a schedule the policy does not name", "it-urgent", "nina@example.com", "UNINA", false},
		{"outsider", "it-urgent", "mallory@example.com", "UMALLORY", false},
		{"a Slack id is not an e-mail", "it-urgent", "U0123ABC", "", false},
		{"an e-mail is not a Slack id", "it-urgent", "", "alice@example.com", false},
		{"nobody", "it-urgent", "", "", false},
		{"group levels involve nobody", "groups-only", "alice@example.com", "U0123ABC", false},
		{"unknown policy", "gone", "alice@example.com", "U0123ABC", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cfg.Policy(tc.policy).Involves(tc.email, tc.slackID); got != tc.want {
				t.Errorf("policy %s Involves(%q, %q) = %v, want %v", tc.policy, tc.email, tc.slackID, got, tc.want)
			}
		})
	}
}

package testkit

// OncallRules is the rules file of the tests that show who is on call:
// the weekly schedule "primary" (handoff 09:00 UTC from 2025-01-06) of
// member, a Slack user id, then bob@example.com, the policy "urgent" that
// pages it, and one hourly rule, so that a scheduler runs and leads.
func OncallRules(member string) string {
	return `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - name: primary
      time_zone: UTC
      rotation: 1w
      handoff: "09:00"
      start: 2025-01-06
      members: [` + member + `, bob@example.com]
  policies:
    - name: urgent
      levels:
        - {schedule: primary, after: 10m}
rules:
  - name: closed-low
    query: "priority:1 AND status:5"
    every: 1h
    actions:
      - note: "x"
`
}

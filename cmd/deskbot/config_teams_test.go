package main

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigSlackAllowedTeams(t *testing.T) {
	for v, want := range map[string][]string{
		"":                    nil,
		"T0PARTNER":           {"T0PARTNER"},
		" T0AB12 , ,E0ORG9 ,": {"T0AB12", "E0ORG9"},
	} {
		cfg, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_SLACK_ALLOWED_TEAMS": v}))
		if err != nil || !slices.Equal(cfg.SlackAllowedTeams, want) && !(len(want) == 0 && len(cfg.SlackAllowedTeams) == 0) {
			t.Errorf("DESKBOT_SLACK_ALLOWED_TEAMS=%q: %v, %v; want %q", v, cfg.SlackAllowedTeams, err, want)
		}
	}
	for _, v := range []string{"partner.slack.com", "t0lower", "U0USER"} {
		_, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_SLACK_ALLOWED_TEAMS": v}))
		if err == nil || !strings.HasPrefix(err.Error(), "DESKBOT_SLACK_ALLOWED_TEAMS: want Slack team ids") {
			t.Errorf("DESKBOT_SLACK_ALLOWED_TEAMS=%q: %v; want a refusal", v, err)
		}
	}
}

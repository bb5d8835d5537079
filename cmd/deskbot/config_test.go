package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := loadConfig(t.Context(), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DeskURL != "" || cfg.RatePerMin != 60 || cfg.State != ":memory:" || !cfg.stateInMemory || cfg.HTTPAddr != "127.0.0.1:9717" ||
		cfg.SlackAPIURL != "https://slack.com/api/" || cfg.DryRun || cfg.LogLevel != slog.LevelInfo || cfg.LogFormat != "text" || cfg.slackEnabled() ||
		cfg.MaxFiringsPerCycle != 50 {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
}

func TestConfigMaxFiringsPerCycle(t *testing.T) {
	for v, want := range map[string]int{"0": 0, "7": 7, "": 50} {
		cfg, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_MAX_FIRINGS_PER_CYCLE": v}))
		if err != nil || cfg.MaxFiringsPerCycle != want {
			t.Errorf("DESKBOT_MAX_FIRINGS_PER_CYCLE=%q: %v, %v; want %d", v, cfg, err, want)
		}
	}
}

func TestConfigHistory(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 720 * time.Hour, "0": 0, "168h": 168 * time.Hour, "90m": 90 * time.Minute} {
		cfg, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_HISTORY": v}))
		if err != nil || cfg.History != want {
			t.Errorf("DESKBOT_HISTORY=%q: %v, %v; want %v", v, cfg, err, want)
		}
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DESKBOT_DESK_URL": "https://acme.example"}, "DESKBOT_DESK_API_KEY: required"},
		{map[string]string{"DESKBOT_DESK_URL": "https://acme.example", "DESKBOT_DESK_API_KEY": ""}, "DESKBOT_DESK_API_KEY: required"},
		{map[string]string{"DESKBOT_DESK_API_KEY": "k"}, "DESKBOT_DESK_URL: required"},
		{map[string]string{"DESKBOT_DESK_URL": "acme.example", "DESKBOT_DESK_API_KEY": "k"}, "DESKBOT_DESK_URL: must be an http(s) URL"},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "many"}, `DESKBOT_DESK_RATE_PER_MIN: want a whole number of requests per minute such as 60, got "many"`},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "99999999999999999999"}, "DESKBOT_DESK_RATE_PER_MIN: want a whole number"},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "-5"}, "DESKBOT_DESK_RATE_PER_MIN: must be at least 2, got -5"},
		{map[string]string{"DESKBOT_DESK_LIST_RATE_PER_MIN": "lots"}, `DESKBOT_DESK_LIST_RATE_PER_MIN: want a whole number of ticket lists per minute`},
		{map[string]string{"DESKBOT_DESK_LIST_RATE_PER_MIN": "1"}, "DESKBOT_DESK_LIST_RATE_PER_MIN: must be 0 (two fifths of DESKBOT_DESK_RATE_PER_MIN) or at least 2, got 1"},
		{map[string]string{"DESKBOT_DESK_LIST_RATE_PER_MIN": "61"}, "DESKBOT_DESK_LIST_RATE_PER_MIN: 61 is more than DESKBOT_DESK_RATE_PER_MIN (60)"},
		{map[string]string{"DESKBOT_WORKSPACE_IDS": "2, 7,2"}, `DESKBOT_WORKSPACE_IDS: workspace 2 is listed twice`},
		{map[string]string{"DESKBOT_WORKSPACE_IDS": " , "}, `DESKBOT_WORKSPACE_IDS: no workspace id in " , "`},
		{map[string]string{"DESKBOT_WORKSPACE_IDS": "1;2"}, `DESKBOT_WORKSPACE_IDS: "1;2" is not a positive workspace id`},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "0"}, "DESKBOT_DESK_RATE_PER_MIN: must be at least 2"},
		{map[string]string{"DESKBOT_WORKSPACE_IDS": "1,x"}, "DESKBOT_WORKSPACE_IDS:"},
		{map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN: required"},
		{map[string]string{"SLACK_APP_TOKEN": "xapp-1"}, "SLACK_BOT_TOKEN: required"},
		{map[string]string{"SLACK_BOT_TOKEN": "xapp-1", "SLACK_APP_TOKEN": "xapp-2"}, "SLACK_BOT_TOKEN: must be a bot token"},
		{map[string]string{"DESKBOT_DRY_RUN": "perhaps"}, `DESKBOT_DRY_RUN: want true or false, got "perhaps"`},
		{map[string]string{"DESKBOT_LOG_LEVEL": "loud"}, `DESKBOT_LOG_LEVEL: want debug, info, warn or error, got "loud"`},
		{map[string]string{"DESKBOT_LOG_FORMAT": "xml"}, "DESKBOT_LOG_FORMAT: must be text or json"},
		{map[string]string{"DESKBOT_MAX_FIRINGS_PER_CYCLE": "lots"}, `DESKBOT_MAX_FIRINGS_PER_CYCLE: want a whole number of firings per poll such as 50, or 0 for no bound across rules, got "lots"`},
		{map[string]string{"DESKBOT_MAX_FIRINGS_PER_CYCLE": "-1"}, "DESKBOT_MAX_FIRINGS_PER_CYCLE: must be 0 (no bound across rules) or more, got -1"},
		{map[string]string{"DESKBOT_HISTORY": "30d"}, `DESKBOT_HISTORY: want a duration such as 720h (30 days) or 168h, or 0 to keep no history, got "30d"`},
		{map[string]string{"DESKBOT_HISTORY": "-1h"}, "DESKBOT_HISTORY: must be 0 (keep no history) or more, got -1h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, err := loadConfig(t.Context(), envOf(tc.env))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want prefix %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			if strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "invalid syntax") {
				t.Fatalf("error shows Go internals: %q", err)
			}
		})
	}
}

// The state defaults to deskbot.db for a real desk and to memory for the
// embedded simulator, whose desk is new on every start.
func TestStateDefaults(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		want     string
		inMemory bool
	}{
		{nil, ":memory:", true},
		{map[string]string{"DESKBOT_STATE": "demo.db"}, "demo.db", false},
		{map[string]string{"DESKBOT_DESK_URL": "https://acme.example", "DESKBOT_DESK_API_KEY": "k"}, "deskbot.db", false},
		{map[string]string{"DESKBOT_DESK_URL": "https://acme.example", "DESKBOT_DESK_API_KEY": "k", "DESKBOT_STATE": "postgres://db/x"}, "postgres://db/x", false},
	} {
		cfg, err := loadConfig(t.Context(), envOf(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.State != tc.want || cfg.stateInMemory != tc.inMemory {
			t.Errorf("%v: state %q (in memory %v), want %q (%v)", tc.env, cfg.State, cfg.stateInMemory, tc.want, tc.inMemory)
		}
	}
}

func TestListRateDefaultsToTwoFifths(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int
	}{
		{nil, 24},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "200"}, 80},
		{map[string]string{"DESKBOT_DESK_RATE_PER_MIN": "3"}, 2},
		{map[string]string{"DESKBOT_DESK_LIST_RATE_PER_MIN": "40"}, 40},
	} {
		cfg, err := loadConfig(t.Context(), envOf(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.listRate(); got != tc.want {
			t.Errorf("%v: list rate %d, want %d", tc.env, got, tc.want)
		}
	}
}

func TestConfigParsesValues(t *testing.T) {
	cfg, err := loadConfig(t.Context(), envOf(map[string]string{
		"DESKBOT_DESK_URL": "https://acme.example", "DESKBOT_DESK_API_KEY": "sekrit-key",
		"DESKBOT_WORKSPACE_IDS": "2, 7", "DESKBOT_SLACK_API_URL": "http://127.0.0.1:1/api",
		"SLACK_BOT_TOKEN": "xoxb-a", "SLACK_APP_TOKEN": "xapp-b", "DESKBOT_LOG_LEVEL": "debug",
		"DESKBOT_UI_TOKEN": "ui-tok-3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UIToken.reveal() != "ui-tok-3" {
		t.Fatalf("DESKBOT_UI_TOKEN not read")
	}
	if len(cfg.WorkspaceIDs) != 2 || cfg.WorkspaceIDs[1] != 7 || cfg.SlackAPIURL != "http://127.0.0.1:1/api/" || !cfg.slackEnabled() || cfg.LogLevel != slog.LevelDebug {
		t.Fatalf("unexpected config: %+v", cfg)
	}
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v %s %q %v", cfg.DeskAPIKey, cfg.SlackBotToken, cfg.SlackAppToken, cfg.UIToken)} {
		for _, s := range []string{"sekrit-key", "xoxb-a", "xapp-b", "ui-tok-3"} {
			if strings.Contains(out, s) {
				t.Fatalf("secret %q printed in %q", s, out)
			}
		}
	}
}

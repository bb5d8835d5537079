package main

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/bot/slackchat"
)

// slackManifest is the part of slack-app-manifest.yaml that deskbot's
// features depend on.
type slackManifest struct {
	DisplayInformation map[string]any `yaml:"display_information"`
	Features           struct {
		BotUser map[string]any `yaml:"bot_user"`
		AppHome struct {
			HomeTab     bool `yaml:"home_tab_enabled"`
			MessagesTab bool `yaml:"messages_tab_enabled"`
		} `yaml:"app_home"`
		SlashCommands []map[string]any   `yaml:"slash_commands"`
		Shortcuts     []manifestShortcut `yaml:"shortcuts"`
		UnfurlDomains []string           `yaml:"unfurl_domains"`
	} `yaml:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		Interactivity struct {
			IsEnabled bool `yaml:"is_enabled"`
		} `yaml:"interactivity"`
		EventSubscriptions struct {
			BotEvents []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		SocketModeEnabled    bool `yaml:"socket_mode_enabled"`
		OrgDeployEnabled     bool `yaml:"org_deploy_enabled"`
		TokenRotationEnabled bool `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
}

// manifestShortcut is one shortcut of the manifest.
type manifestShortcut struct {
	Name        string `yaml:"name"`
	Type        string `yaml:"type"`
	CallbackID  string `yaml:"callback_id"`
	Description string `yaml:"description"`
}

// TestSlackManifestTicketsFromMessages: the manifest declares what tickets
// from messages and link unfurls need (issue 13): the message shortcut
// under the callback id the transport answers, the events, and their
// scopes.
func TestSlackManifestTicketsFromMessages(t *testing.T) {
	b, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m slackManifest
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("slack-app-manifest.yaml: %v", err)
	}
	i := slices.IndexFunc(m.Features.Shortcuts, func(s manifestShortcut) bool {
		return s.CallbackID == slackchat.ShortcutCallbackID
	})
	if i < 0 || m.Features.Shortcuts[i].Type != "message" || m.Features.Shortcuts[i].Name == "" || m.Features.Shortcuts[i].Description == "" {
		t.Errorf("shortcuts %+v; want a message shortcut %q with name and description", m.Features.Shortcuts, slackchat.ShortcutCallbackID)
	}
	if n := len(m.Features.UnfurlDomains); n == 0 || n > 5 {
		t.Errorf("unfurl_domains %v; want 1 to 5 (Slack's limit)", m.Features.UnfurlDomains)
	}
	if !m.Features.AppHome.HomeTab || !m.Features.AppHome.MessagesTab {
		t.Errorf("app_home %+v; want the Home tab and the Messages tab (on-call DMs) on", m.Features.AppHome)
	}
	for _, ev := range []string{"reaction_added", "link_shared", "app_home_opened"} {
		if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, ev) {
			t.Errorf("bot_events %v lack %s", m.Settings.EventSubscriptions.BotEvents, ev)
		}
	}
	for _, sc := range []string{"commands", "chat:write", "users:read", "users:read.email", "channels:history", "groups:history", "reactions:read", "links:read", "links:write"} {
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, sc) {
			t.Errorf("bot scopes %v lack %s", m.OAuthConfig.Scopes.Bot, sc)
		}
	}
	if !m.Settings.Interactivity.IsEnabled || !m.Settings.SocketModeEnabled {
		t.Error("interactivity and socket mode must be on")
	}
}

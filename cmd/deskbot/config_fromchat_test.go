package main

import (
	"strings"
	"testing"
)

func TestConfigTicketReaction(t *testing.T) {
	for v, want := range map[string]string{"": "ticket", "ticket": "ticket", ":ticket:": "ticket", " :admission_tickets: ": "admission_tickets", "+1": "+1", "off": ""} {
		cfg, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_TICKET_REACTION": v}))
		if err != nil || cfg.ticketReaction() != want {
			t.Errorf("DESKBOT_TICKET_REACTION=%q: %v, %v; want %q", v, cfg, err, want)
		}
	}
	for _, v := range []string{"Ticket", "two words", "::", "tick:et", strings.Repeat("a", 101)} {
		_, err := loadConfig(t.Context(), envOf(map[string]string{"DESKBOT_TICKET_REACTION": v}))
		if err == nil || !strings.HasPrefix(err.Error(), "DESKBOT_TICKET_REACTION: want an emoji name") {
			t.Errorf("DESKBOT_TICKET_REACTION=%q: %v; want an error naming it", v, err)
		}
	}
}

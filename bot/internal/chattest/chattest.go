package chattest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// Users is a chat.Directory over a map of user id to e-mail.
type Users map[string]string

// Email implements chat.Directory; an unknown id is an error.
func (m Users) Email(_ context.Context, id string) (string, error) {
	e, ok := m[id]
	if !ok {
		return "", fmt.Errorf("user %s: not found", id)
	}
	return e, nil
}

// Page is a page of ticket 42 at level 2 (bob@example.com) of policy
// it-urgent, after level 1 (alice@example.com) and a failed first attempt.
func Page() oncall.Page {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	alice := &oncall.Target{Kind: oncall.TargetPerson, ID: "alice@example.com", Schedule: "it-primary"}
	bob := &oncall.Target{Kind: oncall.TargetPerson, ID: "bob@example.com"}
	p := oncall.NewPage(oncall.PageSpec{Rule: "page-urgent", TicketID: 42, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall",
		Text: "Urgent #42 unassigned: Printer on fire <now>"}, t0)
	p.Step, p.Level, p.Target = 2, 1, bob
	p.History = []oncall.Event{
		{At: t0, Kind: oncall.EventPaged, Position: oncall.Position{Step: 1, Level: 0, Target: alice}},
		{At: t0, Kind: oncall.EventSent, Position: oncall.Position{Step: 1, Level: 0, Target: alice}},
		{At: t0.Add(10 * time.Minute), Kind: oncall.EventPaged, Position: oncall.Position{Step: 2, Level: 1, Target: bob}},
		{At: t0.Add(10 * time.Minute), Kind: oncall.EventFailed, Position: oncall.Position{Step: 2, Level: 1, Target: bob}, Detail: "ratelimited"},
		{At: t0.Add(10*time.Minute + 30*time.Second), Kind: oncall.EventPaged, Position: oncall.Position{Step: 2, Level: 1, Target: bob}, Detail: "attempt 2"},
	}
	return p
}

// AlertGroup is the alerts of rule overdue on n tickets from first on, in
// #it-oncall, each mentioning UALICE.
func AlertGroup(first, n int) chat.AlertGroupMessage {
	g := chat.AlertGroupMessage{Channel: "#it-oncall", Rule: "overdue"}
	for i := range n {
		id := int64(first + i)
		tk := &sdclient.Ticket{ID: id, Subject: fmt.Sprintf("Printer <%d> & co", id)}
		g.Alerts = append(g.Alerts, chat.AlertMessage{Channel: "#it-oncall", Rule: "overdue", Ticket: tk, Mention: "UALICE",
			Text: fmt.Sprintf("Ticket #%d is overdue: %s", id, tk.Subject), Key: fmt.Sprintf("deskbot:f=overdue/%d/1.1/2", id)})
	}
	return g
}

// Contains reports, as errors of t, each of wants that got lacks; what
// names got in the message (e.g. "console output").
func Contains(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

// Tail is the end of a long string (its last 60 characters), for error
// messages.
func Tail(s string) string {
	if len(s) <= 60 {
		return s
	}
	return "…" + s[len(s)-60:]
}

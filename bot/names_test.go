package bot

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// statusOnly is an OnCall that only says who is on call.
type statusOnly struct {
	OnCall
	st []oncall.Status
}

func (s statusOnly) WhoIsOnCall(time.Time) []oncall.Status { return s.st }

// Issue 23, 6: /oncall names people, not ids: a desk agent's e-mail by
// the agent's name, a Slack id the chat cannot look up as a Slack user.
func TestOnCallNamesPeople(t *testing.T) {
	_, c, _ := fakedesk.Sim(t) // Alice Agent is alice@example.com
	end := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	st := []oncall.Status{{Schedule: "it-primary", TimeZone: "UTC",
		Now:  oncall.Shift{Member: "alice@example.com", End: end},
		Next: oncall.Shift{Member: "U0CAROL01", End: end.Add(24 * time.Hour)}}}
	r := newTestRouter(t, NewDeskAdapter(c), WithOnCall(statusOnly{st: st}))
	resp := handle(r, "UALICE", "/oncall", "")
	if want := "it-primary: Alice Agent until Mon 2026-11-30 09:00 UTC, then Slack user U0CAROL01 until Tue 2026-12-01 09:00 UTC"; resp.Text != want {
		t.Errorf("/oncall = %q, want %q", resp.Text, want)
	}
}

// Issue 23, 6: a card names the assigned agent by the name deskbot knew
// when the desk cannot be asked, however old that name is.
func TestCardKeepsAgentNamesWhileTheDeskIsDown(t *testing.T) {
	d, id := newTroubledDesk(t)
	var alice int64
	for _, a := range d.sim.Agents() {
		if a.Email == "alice@example.com" {
			alice = a.ID
		}
	}
	d.sim.UpdateTicket(id, func(x *sdsim.Ticket) { x.ResponderID = alice })
	now := time.Now()
	r := deskRouter(t, d.url, []sdclient.Option{sdclient.WithBackoff(time.Millisecond, time.Millisecond)},
		WithAgentCacheTTL(time.Minute), WithClock(func() time.Time { return now }))
	c, err := sdclient.New(d.url, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := NewDeskAdapter(c).Ticket(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if card := r.ticketCard(context.Background(), tk); !strings.Contains(card.Text(), "Agent:              Alice Agent") {
		t.Fatalf("card with the desk up:\n%s", card.Text())
	}
	d.status.Store(http.StatusServiceUnavailable)
	now = now.Add(time.Hour) // the cached name is stale
	card := r.AlertCard(context.Background(), chat.AlertMessage{Ticket: tk, Rule: "r", Key: "k"})
	if text := card.Text(); !strings.Contains(text, "Agent:              Alice Agent") || strings.Contains(text, "agent #") {
		t.Fatalf("alert card with the desk down:\n%s", text)
	}
}

// A workspace the desk does not list is named by its id.
func TestWorkspaceNameFallsBackToTheID(t *testing.T) {
	_, c, _ := fakedesk.Sim(t)
	r := newTestRouter(t, NewDeskAdapter(c))
	if got := r.workspaceName(context.Background(), 999); got != "workspace 999" {
		t.Errorf("an unknown workspace: %q", got)
	}
}

package slackchat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"

	"github.com/slack-go/slack"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func blocksJSON(t *testing.T, bs []slack.Block) []byte {
	t.Helper()
	b, err := json.MarshalIndent(bs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func goldenCard(t *testing.T) *bot.Card {
	t.Helper()
	d := fakedesk.New()
	r := routertest.New(t, d)
	tk := d.Snapshot(42)
	tk.Subject = "Printer on fire <b>&</b>"
	card := r.AlertCard(context.Background(), chat.AlertMessage{Ticket: &tk})
	card.Buttons = bot.TicketButtons(&tk, false)
	return card
}

func TestGoldenTicketCard(t *testing.T) {
	c := goldenCard(t)
	golden(t, "ticket_card", blocksJSON(t, slackchat.CardBlocks(c)))
	golden(t, "ticket_card_text", []byte(c.Text()+"\n"))
}

func TestGoldenAlertCard(t *testing.T) {
	d := fakedesk.New()
	r := routertest.New(t, d)
	tk := d.Snapshot(42)
	card := r.AlertCard(context.Background(), chat.AlertMessage{Ticket: &tk, Rule: "page-urgent", Key: "page-urgent/42/1"})
	v := slackchat.AlertView{Headline: "<!subteam^S0ONCALL> Urgent #42 unassigned: Printer on fire", Rule: "page-urgent", Key: "page-urgent/42/1", Card: card}
	golden(t, "alert_card", blocksJSON(t, slackchat.AlertBlocks(v)))

	// After Bob assigned and Alice resolved: the card rebuilt from the old
	// message's blocks keeps headline and activity and loses its buttons.
	old := slackchat.AlertBlocks(v)
	raw := blocksJSON(t, old)
	var back slack.Blocks
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	headline, activity, isAlert := slackchat.OldAlert(back.BlockSet)
	if !isAlert || headline != v.Headline || len(activity) != 0 {
		t.Fatalf("oldAlert = %q, %q, %v", headline, activity, isAlert)
	}
	tk.ResponderID = new(int64)
	*tk.ResponderID = 8
	tk.Status = 4
	card = r.AlertCard(context.Background(), chat.AlertMessage{Ticket: &tk, Rule: "page-urgent", Key: "page-urgent/42/1"})
	updated := slackchat.AlertView{Headline: headline, Rule: "page-urgent", Key: "page-urgent/42/1", Card: card,
		Activity: []string{"Bob Builder assigned the ticket to themself · 09:41 UTC", "Alice Agent resolved the ticket · 09:45 UTC"}}
	out := blocksJSON(t, slackchat.AlertBlocks(updated))
	if strings.Contains(string(out), `"type": "actions"`) {
		t.Fatal("a resolved alert still has buttons")
	}
	golden(t, "alert_card_updated", out)
}

func TestGoldenModal(t *testing.T) {
	m := slackchat.TicketModal(&chat.TicketForm{Groups: fakedesk.New().GroupList}, `{"channel":"C1"}`)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "new_ticket_modal", append(b, '\n'))
}

func TestMarkerBlockIDBounded(t *testing.T) {
	long := strings.Repeat("k", 400)
	id := slackchat.MarkerBlockID(long)
	if len(id) > 255 || id != slackchat.MarkerBlockID(long) || id == slackchat.MarkerBlockID(long+"x") {
		t.Fatalf("marker id %q", id)
	}
	if slackchat.MarkerBlockID("a/1") != "deskbot_alert:a/1" {
		t.Fatalf("short key changed: %q", slackchat.MarkerBlockID("a/1"))
	}
}

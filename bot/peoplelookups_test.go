package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
)

// TestDeskWithoutPeopleLookups (issue 26, 3): the people look-ups of the
// Desk (Requester, Agents, RequesterByEmail) are abilities some desks
// lack. With each, the answer a person sees uses it; a desk that answers
// errors.ErrUnsupported instead gets the answer the bot gives without it,
// never an error.
func TestDeskWithoutPeopleLookups(t *testing.T) {
	ctx := context.Background()
	// ticket 43 is read without its requester embedded (as alerts and
	// pages read tickets); its requester is Carol, 501.
	showCard := func(r *Router) string {
		resp := handle(r, "UALICE", "/ticket", "show 43")
		if resp.Card == nil {
			return "no card: " + resp.Text
		}
		return resp.Card.Text()
	}
	for _, tc := range []struct {
		name      string
		lacks     string
		answer    func(r *Router) string
		want, not string
	}{
		{"card names the requester", "", showCard, "Carol Requester", "requester #501"},
		{"card without requester look-up shows the id", "requester", showCard, "requester #501", "Carol"},

		{"agents listed", "", func(r *Router) string { return handle(r, "UALICE", "/assign", "list").Card.Text() },
			"Bob Builder — bob@example.com", "no agent found"},
		{"without an agent list, groups only", "agents", func(r *Router) string { return handle(r, "UALICE", "/assign", "list").Card.Text() },
			"Hardware, Network", "Bob Builder"},

		{"requester's thread reply copied", "", func(r *Router) string {
			return r.ThreadReply(ctx, Caller{UserID: "UCAROL", Users: testUsers}, 42, "it is still on fire").Text
		}, "Copied to ticket #42.", "not copied"},
		{"without requester look-up the thread reply is refused", "requester", func(r *Router) string {
			return r.ThreadReply(ctx, Caller{UserID: "UCAROL", Users: testUsers}, 42, "it is still on fire").Text
		}, "this desk cannot tell who asked for ticket #42; your message was not copied", "Copied"},

		{"requester's home lists her requests", "", func(r *Router) string {
			h := r.Home(ctx, Caller{UserID: "UCAROL", Users: testUsers})
			return fmt.Sprintf("requested %d; %s", h.Requested.Total, h.NoAccount)
		}, "requested 2; ", "no account"}, // 42 and 43
		{"without requester search a requester's home says it has no account", "requesterByEmail", func(r *Router) string {
			h := r.Home(ctx, Caller{UserID: "UCAROL", Users: testUsers})
			return fmt.Sprintf("requested %d; %s", h.Requested.Total, h.NoAccount)
		}, "requested 0; The desk has no account for carol@example.com", ""},
		{"without requester search an agent's requests are under her agent id", "requesterByEmail", func(r *Router) string {
			h := r.Home(ctx, Caller{UserID: "UALICE", Users: testUsers})
			return fmt.Sprintf("agent %v, requested %d; %s", h.Agent, h.Requested.Total, h.NoAccount)
		}, "agent true, requested 1; ", "no account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakedesk.New()
			d.Tickets[43].RequesterID = 501
			d.Tickets[44].RequesterID = 7 // Alice asked for it herself
			d.Tickets[44].Status = 2
			if tc.lacks != "" {
				d.Lack(tc.lacks)
			}
			got := tc.answer(newTestRouter(t, d))
			if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
				t.Errorf("got %q; want %q and not %q", got, tc.want, tc.not)
			}
		})
	}
}

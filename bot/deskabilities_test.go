package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient"
)

// TestDeskWithoutAbilities (issue 26, 3): some Desk methods (Requester,
// Agents, RequesterByEmail, Workspaces, RequesterNote) are abilities some
// desks lack. With each, the answer a person sees uses it; a desk that
// answers errors.ErrUnsupported instead gets the answer the bot gives
// without it, never an error.
func TestDeskWithoutAbilities(t *testing.T) {
	ctx := context.Background()
	// ticket 43 is read without its requester embedded (as alerts and
	// pages read tickets); its requester is Carol, 501.
	showCard := func(r *Router, d *fakedesk.Desk) string {
		resp := handle(r, "UALICE", "/ticket", "show 43")
		if resp.Card == nil {
			return "no card: " + resp.Text
		}
		return resp.Card.Text()
	}
	// threadReply is the note Carol's reply in the thread of ticket 42
	// became.
	threadReply := func(r *Router, d *fakedesk.Desk) string {
		if resp := r.ThreadReply(ctx, Caller{UserID: "UCAROL", Users: testUsers}, 42, "it is still on fire"); resp.Failed {
			return "refused: " + resp.Text
		}
		cs := d.Conversations()
		if len(cs) == 0 {
			return "no note"
		}
		c := cs[len(cs)-1]
		kind := "private note"
		if c.Incoming {
			kind = "incoming note"
		}
		return fmt.Sprintf("%s by %d: %s", kind, c.UserID, c.Body)
	}
	workspace := func(r *Router, _ *fakedesk.Desk) string { return r.workspaceName(ctx, 1) }
	for _, tc := range []struct {
		name      string
		lacks     string
		answer    func(r *Router, d *fakedesk.Desk) string
		want, not string
	}{
		{"card names the requester", "", showCard, "Carol Requester", "requester #501"},
		{"card without requester look-up shows the id", "requester", showCard, "requester #501", "Carol"},

		{"agents listed", "", func(r *Router, d *fakedesk.Desk) string { return handle(r, "UALICE", "/assign", "list").Card.Text() },
			"Bob Builder — bob@example.com", "no agent found"},
		{"without an agent list, groups only", "agents", func(r *Router, d *fakedesk.Desk) string { return handle(r, "UALICE", "/assign", "list").Card.Text() },
			"Hardware, Network", "Bob Builder"},

		{"requester's thread reply copied", "", func(r *Router, d *fakedesk.Desk) string {
			return r.ThreadReply(ctx, Caller{UserID: "UCAROL", Users: testUsers}, 42, "it is still on fire").Text
		}, "Copied to ticket #42.", "not copied"},
		{"without requester look-up the thread reply is refused", "requester", func(r *Router, d *fakedesk.Desk) string {
			return r.ThreadReply(ctx, Caller{UserID: "UCAROL", Users: testUsers}, 42, "it is still on fire").Text
		}, "this desk cannot tell who asked for ticket #42; your message was not copied", "Copied"},

		{"requester's home lists her requests", "", func(r *Router, d *fakedesk.Desk) string {
			h := r.Home(ctx, Caller{UserID: "UCAROL", Users: testUsers})
			return fmt.Sprintf("requested %d; %s", h.Requested.Total, h.NoAccount)
		}, "requested 2; ", "no account"}, // 42 and 43
		{"without requester search a requester's home says it has no account", "requesterByEmail", func(r *Router, d *fakedesk.Desk) string {
			h := r.Home(ctx, Caller{UserID: "UCAROL", Users: testUsers})
			return fmt.Sprintf("requested %d; %s", h.Requested.Total, h.NoAccount)
		}, "requested 0; The desk has no account for carol@example.com", ""},
		{"without requester search an agent's requests are under her agent id", "requesterByEmail", func(r *Router, d *fakedesk.Desk) string {
			h := r.Home(ctx, Caller{UserID: "UALICE", Users: testUsers})
			return fmt.Sprintf("agent %v, requested %d; %s", h.Agent, h.Requested.Total, h.NoAccount)
		}, "agent true, requested 1; ", "no account"},

		{"requester's thread reply is her own public note", "", threadReply, "incoming note by 501: it is still on fire", ""},
		{"without requester notes, a private note says who wrote", "requesterNote", threadReply,
			"private note by 0: Carol Requester (carol@example.com) wrote in Slack:<br>it is still on fire", "incoming"},

		{"workspaces named", "", workspace, "workspace IT", ""},
		{"without a workspace list, by id", "workspaces", workspace, "workspace 1", "IT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakedesk.New()
			d.Tickets[43].RequesterID = 501
			d.Tickets[44].RequesterID = 7 // Alice asked for it herself
			d.Tickets[44].Status = 2
			d.WorkspaceList = []*sdclient.Workspace{{ID: 1, Name: "IT"}}
			if tc.lacks != "" {
				d.Lack(tc.lacks)
			}
			got := tc.answer(newTestRouter(t, d), d)
			if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
				t.Errorf("got %q; want %q and not %q", got, tc.want, tc.not)
			}
		})
	}
}

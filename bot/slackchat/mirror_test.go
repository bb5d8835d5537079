package slackchat_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// The mirror tests run on a fixed clock: the mirror's cursor is a minute
// behind it.
var (
	mirrorNow    = time.Date(2026, 3, 9, 9, 42, 12, 0, time.UTC)
	mirrorCursor = mirrorNow.Add(-time.Minute)
)

const fromMirror = "from deskbot's mirror, as of 09:41:12 UTC"

// mirrorSim stores the simulator's tickets of workspace ws, as the API
// shows them now, in the mirror of workspace key with state st, the way
// the scheduler's sync would, and forgets the requests it took.
func mirrorSim(t *testing.T, sim *sdsim.Server, m bot.Mirror, key, ws int64, st store.MirrorState) {
	t.Helper()
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var put []*sdclient.Ticket
	for _, id := range sim.Desk.TicketIDs() {
		tk, _, err := c.Tickets.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.WorkspaceID != nil && *tk.WorkspaceID == ws {
			tk.Description, tk.DescriptionText = "", ""
			put = append(put, tk)
		}
	}
	if _, err := m.(interface {
		MirrorApply(context.Context, int64, []*sdclient.Ticket, []int64, store.MirrorState) (int64, error)
	}).MirrorApply(t.Context(), key, put, nil, st); err != nil {
		t.Fatal(err)
	}
	sim.Desk.ResetRequests()
}

// ticketRequests are the requests the desk got for tickets.
func ticketRequests(sim *sdsim.Server) []string {
	var out []string
	for _, r := range sim.Desk.Requests() {
		if strings.Contains(r.Path, "/tickets") {
			out = append(out, r.Method+" "+r.Path+"?"+r.RawQuery)
		}
	}
	return out
}

var listedID = regexp.MustCompile(`#(\d+) `)

// listed is the ids of the tickets a list answer shows, in its order.
func listed(s string) []int64 {
	var out []int64
	for _, m := range listedID.FindAllStringSubmatch(s, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// fieldsExplainer explains a ticket by the fields it was given, so that a
// test sees which copy of the ticket the command read.
type fieldsExplainer struct{}

func (fieldsExplainer) ExplainTicket(_ context.Context, t *sdclient.Ticket) (string, error) {
	return fmt.Sprintf("explained #%d %q", t.ID, t.Subject), nil
}

// TestMirrorAnswersWithoutTheDesk: /ticket unassigned, /ticket mine and
// /ticket why answer from the mirror, within the caller's scope, say how
// fresh it is, and send the desk no ticket request; a workspace deskbot
// does not mirror and a ticket the mirror does not hold are read from the
// desk, saying so.
func TestMirrorAnswersWithoutTheDesk(t *testing.T) {
	m := fakedesk.OpenMirror(t)
	e := newAccessEnv(t, bot.WithMirror(m), bot.WithExplainer(fieldsExplainer{}), bot.WithClock(func() time.Time { return mirrorNow }))
	// The default workspace (IT) is mirrored, as deskbot does without
	// DESKBOT_WORKSPACE_IDS; HR is not.
	mirrorSim(t, e.sim, m, 0, sdsim.DefaultWorkspaceID, store.MirrorState{Cursor: mirrorCursor, Complete: true, FullSyncAt: mirrorCursor})
	// The desk changes after the mirror's cursor: answers from the mirror
	// show the ticket as of the cursor.
	id := e.tickets
	e.sim.Desk.UpdateTicket(id["network"], func(x *sdsim.Ticket) { x.Subject = "Switch port dead (desk copy)" })

	tests := []struct {
		user, text string
		want       []string // tickets listed, in order
	}{
		{uMia, "unassigned", []string{"network"}}, // not the Hardware group's
		{uSpec, "unassigned", []string{"hardware"}},
		{uWanda, "unassigned", []string{"hardware", "network"}}, // newest first, as the desk lists
		{uAsa, "unassigned", nil},
		{uMia, "mine", []string{"mia"}},
		{uAsa, "mine", []string{"asa"}},
		{uWanda, "mine", nil},
	}
	for _, tt := range tests {
		t.Run(tt.user+" "+tt.text, func(t *testing.T) {
			e.sim.Desk.ResetRequests()
			got := all(e.slash(tt.user, "/ticket", tt.text))
			var want []int64
			for _, k := range tt.want {
				want = append(want, id[k])
			}
			if ids := listed(got); !slices.Equal(ids, want) {
				t.Errorf("listed %v, want %v:\n%s", ids, want, got)
			}
			if !strings.Contains(got, fmt.Sprintf(": %d", len(want))) || !strings.Contains(got, fromMirror) {
				t.Errorf("answer lacks the count %d or %q:\n%s", len(want), fromMirror, got)
			}
			if strings.Contains(got, "(desk copy)") {
				t.Errorf("the answer shows the desk's copy:\n%s", got)
			}
			if len(want) == 0 && !strings.Contains(got, "nothing found") {
				t.Errorf("an empty answer does not say nothing found:\n%s", got)
			}
			if reqs := ticketRequests(e.sim); len(reqs) != 0 {
				t.Errorf("the desk got ticket requests: %v", reqs)
			}
		})
	}

	t.Run("why from the mirror", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", id["network"]))
		want := fmt.Sprintf("From deskbot's mirror, as of 09:41:12 UTC (change feed cursor); the desk was not asked.\nexplained #%d %q", id["network"], accessSubjects["network"])
		if r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 0 {
			t.Errorf("the desk got ticket requests: %v", reqs)
		}
	})
	t.Run("why refused on the mirror's fields", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", id["hardware"]))
		want := fmt.Sprintf("you cannot act on ticket #%d: it is outside your groups and not assigned to you", id["hardware"])
		if r.Text != want || strings.Contains(all(r), accessSubjects["hardware"]) {
			t.Errorf("answer %q, want %q", all(r), want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 0 {
			t.Errorf("the desk got ticket requests: %v", reqs)
		}
	})
	t.Run("why of a ticket the mirror does not hold", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uEve, "/ticket", fmt.Sprintf("why %d", id["hr"]))
		want := fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.\nexplained #%d %q", id["hr"], id["hr"], accessSubjects["hr"])
		if r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 1 || !strings.HasPrefix(reqs[0], fmt.Sprintf("GET /api/v2/tickets/%d?", id["hr"])) {
			t.Errorf("ticket requests %v, want the one read of ticket %d", reqs, id["hr"])
		}
		// Out of scope on the desk's copy: refused as before.
		r = e.slash(uWanda, "/ticket", fmt.Sprintf("why %d", id["hr"]))
		if want := fmt.Sprintf("you cannot act on ticket #%d: it is outside your workspaces", id["hr"]); r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
	})
	t.Run("a workspace not mirrored is read from the desk", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		got := all(e.slash(uEve, "/ticket", "unassigned"))
		if ids, want := listed(got), []int64{id["hardware"], id["network"], id["hr"]}; !slices.Equal(ids, want) {
			t.Errorf("listed %v, want %v:\n%s", ids, want, got)
		}
		if note := fromMirror + "; read from the desk for workspace 3: deskbot does not mirror it"; !strings.Contains(got, note) {
			t.Errorf("answer lacks %q:\n%s", note, got)
		}
		reqs := ticketRequests(e.sim)
		if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /api/v2/tickets/filter?") || !strings.Contains(reqs[0], "workspace_id=3") {
			t.Errorf("ticket requests %v, want one filter of workspace 3", reqs)
		}
	})
	if n := m.Loads.Load(); n != 1 {
		t.Errorf("the mirror was loaded %d times, want once (its version did not change)", n)
	}
}

// TestMirrorFallsBackToTheDesk: without a built, complete and current
// mirror, the commands read the desk as before and say why.
func TestMirrorFallsBackToTheDesk(t *testing.T) {
	tests := []struct {
		name string
		st   *store.MirrorState // nil: nothing mirrored
		list string             // the note of a list answer
		why  string             // the first line of /ticket why
	}{
		{"empty store", nil,
			"read from the desk: the mirror is not built yet",
			"Read from the desk: the mirror is not built yet."},
		{"first full sync under way", &store.MirrorState{Cursor: mirrorCursor},
			"read from the desk: the mirror's first full sync has not finished",
			"From deskbot's mirror, as of 09:41:12 UTC (change feed cursor); the desk was not asked."},
		{"not kept up to date", &store.MirrorState{Cursor: mirrorNow.Add(-2 * time.Hour), Complete: true},
			"read from the desk: deskbot's mirror is too old to trust (as of 07:42:12 UTC, more than 15 minutes ago)",
			"Read from the desk: deskbot's mirror is too old to trust (as of 07:42:12 UTC, more than 15 minutes ago)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fakedesk.OpenMirror(t)
			e := newAccessEnv(t, bot.WithMirror(m), bot.WithExplainer(fieldsExplainer{}), bot.WithClock(func() time.Time { return mirrorNow }))
			if tt.st != nil {
				mirrorSim(t, e.sim, m, 0, sdsim.DefaultWorkspaceID, *tt.st)
			}
			e.sim.Desk.ResetRequests()
			got := all(e.slash(uMia, "/ticket", "unassigned"))
			if ids, want := listed(got), []int64{e.tickets["network"]}; !slices.Equal(ids, want) || !strings.Contains(got, tt.list) {
				t.Errorf("listed %v, want %v, and %q:\n%s", ids, want, tt.list, got)
			}
			if reqs := ticketRequests(e.sim); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /api/v2/tickets/filter?") {
				t.Errorf("ticket requests %v, want the one filter", reqs)
			}
			e.sim.Desk.ResetRequests()
			r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", e.tickets["network"]))
			if first, _, _ := strings.Cut(r.Text, "\n"); first != tt.why || !strings.Contains(r.Text, "explained #") {
				t.Errorf("answer %q, want it to start with %q", r.Text, tt.why)
			}
			wantReads := 1
			if strings.HasPrefix(tt.why, "From deskbot's mirror") {
				wantReads = 0
			}
			if reqs := ticketRequests(e.sim); len(reqs) != wantReads {
				t.Errorf("ticket requests %v, want %d", reqs, wantReads)
			}
		})
	}
}

// TestMirrorListsMatchTheDesk: a list from the mirror is the desk's list:
// the same tickets in the same order (newest created first, the higher id
// first within a second), the same count and the same "showing 10 of N".
func TestMirrorListsMatchTheDesk(t *testing.T) {
	sim, desk, _ := simDesk(t)
	var alice sdsim.Agent
	for _, a := range sim.Desk.Agents() {
		if a.Email == "alice@example.com" {
			alice = a
		}
	}
	t0 := time.Now().UTC().Truncate(time.Second).Add(-48 * time.Hour)
	for i := range 30 {
		tk := sdsim.Ticket{Subject: fmt.Sprintf("ticket %d", i), Priority: 1 + i%4, CreatedAt: t0.Add(time.Duration(i%7) * time.Minute)}
		switch i % 5 {
		case 1:
			tk.ResponderID = alice.ID
		case 2:
			tk.Status = sdclient.StatusPending
		case 3:
			tk.Status = sdclient.StatusResolved
		case 4:
			tk.Status, tk.ResponderID = sdclient.StatusClosed, alice.ID
		}
		sim.Desk.AddTicket(tk)
	}
	m := fakedesk.OpenMirror(t)
	mirrorSim(t, sim, m, 0, sdsim.DefaultWorkspaceID, store.MirrorState{Cursor: mirrorCursor, Complete: true})
	fromDesk := routertest.New(t, desk, bot.WithClock(func() time.Time { return mirrorNow }))
	fromMirrorR := routertest.New(t, desk, bot.WithMirror(m), bot.WithClock(func() time.Time { return mirrorNow }))
	for _, text := range []string{"unassigned", "mine"} {
		d, mr := routertest.Handle(fromDesk, "UALICE", "/ticket", text), routertest.Handle(fromMirrorR, "UALICE", "/ticket", text)
		if d.Failed || mr.Failed || d.Card == nil || mr.Card == nil {
			t.Fatalf("%s: desk %+v, mirror %+v", text, d, mr)
		}
		if d.Text != mr.Text || !slices.Equal(d.Card.Lines, mr.Card.Lines) {
			t.Errorf("%s: the mirror's answer differs from the desk's:\ndesk:\n%s\nmirror:\n%s", text, d.Card.Text(), mr.Card.Text())
		}
		if want := append(slices.Clone(d.Card.Notes), fromMirror); !slices.Equal(mr.Card.Notes, want) {
			t.Errorf("%s: notes %q, want %q", text, mr.Card.Notes, want)
		}
	}
	if d := routertest.Handle(fromDesk, "UALICE", "/ticket", "unassigned"); !slices.Contains(d.Card.Notes, "showing 1–10 of 13") {
		t.Errorf("the test does not reach the limit: %q", d.Card.Notes)
	}
}

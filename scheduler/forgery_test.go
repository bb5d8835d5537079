package scheduler

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jonboulle/clockwork"
)

// legacyTag is the unkeyed mark deskbot wrote before issue 27: a 64-bit
// FNV hash of the marker, which anyone could compute, in the invisible
// characters the marks still use (word joiner, zero width space, zero
// width non-joiner).
func legacyTag(marker string) string {
	const tagEdge, tagZero, tagOne = '\u2060', '\u200b', '\u200c'
	h := fnv.New64a()
	h.Write([]byte(marker))
	sum := h.Sum64()
	var b strings.Builder
	b.WriteRune(tagEdge)
	for i := 63; i >= 0; i-- {
		if sum>>uint(i)&1 == 1 {
			b.WriteRune(tagOne)
		} else {
			b.WriteRune(tagZero)
		}
	}
	b.WriteRune(tagEdge)
	return b.String()
}

// TestPlantedMarkerDoesNotHideALostNote (issue 27, item 6): the process
// dies after the firing's alert, before its note. Before it resumes, the
// requester's e-mail reply on the ticket carries the note's marker comment
// and every mark of it one can compute without the installation's secret.
// The resumed firing still writes its note, once, signed; the alert is not
// posted again.
func TestPlantedMarkerDoesNotHideALostNote(t *testing.T) {
	for _, planted := range []struct{ name, mark string }{
		{"the comment", ""},
		{"the comment and the unkeyed tag", "legacy"},
		{"the comment and the default key's tag", "default"},
	} {
		t.Run(planted.name, func(t *testing.T) {
			sim := sdsim.NewServer(sdsim.WithClock(clockwork.NewFakeClockAt(t0).Now))
			defer sim.Close()
			rq := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Mallory", PrimaryEmail: "mallory@example.com"})
			tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4, RequesterID: rq.ID})
			db, alerts := crashChild(t, "alert", sim.URL)
			st := openStore(t, db)
			marker := fmt.Sprintf("deskbot:f=page/%d/1.1/1", tk.ID)
			body := "<p>thanks, all fine now</p>\n<!-- " + marker + " -->"
			switch planted.mark {
			case "legacy":
				body += legacyTag(marker)
			case "default":
				body += store.NewMarks(nil).FiringTag(marker)
			}
			if _, ok := sim.Desk.AddConversation(sdsim.Conversation{TicketID: tk.ID, UserID: rq.ID, Body: body, Incoming: true,
				Source: sdclient.ConversationSourceEmail, CreatedAt: t0, UpdatedAt: t0}); !ok {
				t.Fatal("could not plant the reply")
			}

			notif := &fileNotifier{path: alerts}
			s, err := New(testLogger(t), firing.ClientDesk(testkit.DeskClient(t, sim)), mustRules(t, crashRules), st, notif,
				WithClock(clockwork.NewFakeClockAt(t0.Add(DefaultLease+time.Minute))))
			if err != nil {
				t.Fatal(err)
			}
			if res, err := s.RunOnce(t.Context()); err != nil || res[0].Fired != 1 {
				t.Fatalf("resume: %+v %v, want the firing finished", res, err)
			}
			marks, err := st.Marks(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			notes := 0
			for _, c := range sim.Desk.Conversations(tk.ID) {
				if c.Private && strings.HasPrefix(c.Body, "Paged the on-call.") && strings.Contains(c.Body, marks.FiringTag(marker)) {
					notes++
				}
			}
			if notes != 1 {
				t.Fatalf("%d signed notes after the resume, want 1: the planted marker hid the lost note", notes)
			}
			if ls, err := notif.lines(); err != nil || len(ls) != 1 {
				t.Fatalf("alerts %+v (%v), want the one posted before the crash", ls, err)
			}
			info, _, _ := st.FiringState(t.Context(), rules.FiringKey{Rule: "page", TicketID: tk.ID})
			if info.State != rules.FiringDone {
				t.Fatalf("firing %+v, want done", info)
			}
		})
	}
}

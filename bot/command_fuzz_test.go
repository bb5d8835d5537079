package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
)

// FuzzHandleCommand runs any command line through the router, over the
// fake desk, as an agent: after ParseCommand the arguments of each command
// are read by its own parser (a status, a priority, an assignee, a filter
// expression, a subject). Whatever the line, the answer is never a panic
// nor silence, and a line that does not parse is answered with its usage
// error.
func FuzzHandleCommand(f *testing.F) {
	for _, s := range []struct{ slash, text string }{
		{"/ticket", "status 42 waiting ON vendor"}, {"/ticket", "status 42 77"}, {"/ticket", "status 42 -1"},
		{"/ticket", "priority 42 URGENT"}, {"/ticket", "priority #42 9"},
		{"/assign", "42 me"}, {"/assign", "42 <@UBOB|bob>"}, {"/assign", "42 <mailto:bob@example.com|bob@example.com>"},
		{"/assign", "42 <@>"}, {"/assign", "42 @@"}, {"/assign", "42 <mailto:>"},
		{"/ticket", "search status:open AND priority:>3"}, {"/ticket", "search status:'Waiting on vendor'"},
		{"/ticket", "search (a:1"}, {"/ticket", "search tag:'x\"y'"}, {"/ticket", "search created_at:>'2026-13-40'"},
		{"/ticket", "note 42 <b>hi</b>"}, {"/ticket", "new \x00"}, {"/ticket", "show 9223372036854775807"},
		{"/oncall", "ack 42"}, {"/ticket", "why 42"}, {"/ticket", "mine"}, {"/ticket", ""},
	} {
		f.Add(s.slash, s.text)
	}
	f.Fuzz(func(t *testing.T, slash, text string) {
		r := newTestRouter(t, fakedesk.New(), WithBusyRetries(0))
		resp := r.Dispatch(context.Background(), Caller{UserID: "UALICE", TeamID: "T1", ChannelID: "C1", Users: knownUsers{}}, Command{Slash: slash, Text: text})
		if strings.TrimSpace(resp.Text) == "" && resp.Form == nil {
			t.Fatalf("%s %q: empty answer %+v", slash, text, resp)
		}
		if strings.Contains(resp.Text, "something went wrong") {
			t.Fatalf("%s %q: %q", slash, text, resp.Text)
		}
		if _, err := ParseCommand(slash, text); err != nil && (!resp.Failed || resp.Text != err.Error()) {
			t.Fatalf("%s %q: answer %q (failed %v), want the usage error %q", slash, text, resp.Text, resp.Failed, err)
		}
	})
}

// knownUsers is testUsers, where a user the chat does not know has no
// e-mail (rather than a failed look-up, which the router reports as one).
type knownUsers struct{}

func (knownUsers) Email(_ context.Context, id string) (string, error) { return testUsers[id], nil }

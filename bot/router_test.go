package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		slash, text string
		want        ParsedCommand
		wantErr     string // substring; "" = success
	}{
		{"/ticket", "new Printer on fire", ParsedCommand{Name: "ticket new", Text: "Printer on fire"}, ""},
		{"/ticket", "new", ParsedCommand{Name: "ticket new"}, ""},
		{"/ticket", "  NEW   spaced  out  ", ParsedCommand{Name: "ticket new", Text: "spaced  out"}, ""},
		{"/ticket", "show 42", ParsedCommand{Name: "ticket show", ID: 42}, ""},
		{"/ticket", "show #42", ParsedCommand{Name: "ticket show", ID: 42}, ""},
		{"ticket", "show 42", ParsedCommand{Name: "ticket show", ID: 42}, ""},
		{"/ticket", "show", ParsedCommand{}, "missing ticket number N; usage: /ticket show N"},
		{"/ticket", "show abc", ParsedCommand{}, `"abc" is not a ticket number; usage: /ticket show N`},
		{"/ticket", "show -3", ParsedCommand{}, "is not a ticket number"},
		{"/ticket", "show 0", ParsedCommand{}, "is not a ticket number"},
		{"/ticket", "show 99999999999999999999", ParsedCommand{}, "is not a ticket number"},
		{"/ticket", "show 42 extra", ParsedCommand{}, `unexpected "extra"`},
		{"/ticket", "note 42 line one\nline two", ParsedCommand{Name: "ticket note", ID: 42, Text: "line one\nline two"}, ""},
		{"/ticket", "note 42", ParsedCommand{}, "missing text; usage: /ticket note N text"},
		{"/ticket", "reply 7 thanks!", ParsedCommand{Name: "ticket reply", ID: 7, Text: "thanks!"}, ""},
		{"/ticket", "status 42 waiting on vendor", ParsedCommand{Name: "ticket status", ID: 42, Text: "waiting on vendor"}, ""},
		{"/ticket", "status 42", ParsedCommand{}, "usage: /ticket status N open|pending|resolved|closed"},
		{"/ticket", "priority 42 urgent", ParsedCommand{Name: "ticket priority", ID: 42, Text: "urgent"}, ""},
		{"/ticket", "close 5", ParsedCommand{Name: "ticket close", ID: 5}, ""},
		{"/ticket", "resolve 5", ParsedCommand{Name: "ticket resolve", ID: 5}, ""},
		{"/ticket", "search priority:4 AND agent_id:0", ParsedCommand{Name: "ticket search", Text: "priority:4 AND agent_id:0"}, ""},
		{"/ticket", "search", ParsedCommand{}, "missing <filter expression>"},
		{"/ticket", "mine", ParsedCommand{Name: "ticket mine"}, ""},
		{"/ticket", "mine please", ParsedCommand{}, `unexpected "please"`},
		{"/ticket", "unassigned", ParsedCommand{Name: "ticket unassigned"}, ""},
		{"/ticket", "unassigned page 2", ParsedCommand{Name: "ticket unassigned", Page: 2}, ""},
		{"/ticket", "mine PAGE 3", ParsedCommand{Name: "ticket mine", Page: 3}, ""},
		{"/ticket", "mine page 0", ParsedCommand{}, `"0" is not a page number: pages are 1 to 10; usage: /ticket mine [page N]`},
		{"/ticket", "why 42", ParsedCommand{Name: "ticket why", ID: 42}, ""},
		{"/ticket", "help", ParsedCommand{Name: "ticket help"}, ""},
		{"/ticket", "", ParsedCommand{Name: "ticket help"}, ""},
		{"/ticket", "frobnicate 42", ParsedCommand{}, "unknown command /ticket frobnicate; usage: /ticket new [subject] | /ticket show N"},
		{"/assign", "42 <@U123|bob>", ParsedCommand{Name: "assign", ID: 42, Text: "<@U123|bob>"}, ""},
		{"/assign", "42 me", ParsedCommand{Name: "assign", ID: 42, Text: "me"}, ""},
		{"/assign", "42", ParsedCommand{}, "missing @user|e-mail|me; usage: /assign N @user|e-mail|me"},
		{"/assign", "", ParsedCommand{}, "missing ticket number N"},
		{"/nope", "x", ParsedCommand{}, "unknown command /nope"},
		{"/ticket", "new \xff", ParsedCommand{}, "not valid UTF-8"},
		{"/ticket", "new " + strings.Repeat("x", chat.MaxCommandText), ParsedCommand{}, "too long"},
		// Slack caps a command at 4,000 characters, not bytes: 3,000 emoji
		// (12,000 bytes) are a command like any other.
		{"/ticket", "new " + strings.Repeat("🔥", 3000), ParsedCommand{Name: "ticket new", Text: strings.Repeat("🔥", 3000)}, ""},
		{"/ticket", "new " + strings.Repeat("é", chat.MaxCommandText), ParsedCommand{}, "too long (8004 characters, at most 8000)"},
	}
	for _, tc := range tests {
		t.Run(tc.slash+" "+chat.Truncate(tc.text, 30), func(t *testing.T) {
			got, err := ParseCommand(tc.slash, tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseCommand(%q, %q) error = %v, want it to contain %q", tc.slash, tc.text, err, tc.wantErr)
				}
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Fatalf("error %T is not a *UsageError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCommand(%q, %q): %v", tc.slash, tc.text, err)
			}
			if got != tc.want {
				t.Fatalf("ParseCommand(%q, %q) = %+v, want %+v", tc.slash, tc.text, got, tc.want)
			}
		})
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"new Printer on fire", "show 42", "note 42 hi\nthere", "status 1 open", "search a:1 AND b:'x'", "", "show #", "assign", "\x00", "show 9223372036854775807"} {
		f.Add("/ticket", s)
	}
	f.Add("/assign", "42 <@U1|x>")
	f.Fuzz(func(t *testing.T, slash, text string) {
		p, err := ParseCommand(slash, text)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Reason == "" {
				t.Fatalf("error is not a usable *UsageError: %#v", err)
			}
			return
		}
		cmd := lookup(commandTable(), p.Name)
		if cmd == nil {
			t.Fatalf("parsed to unknown command %q", p.Name)
		}
		needsID := false
		for _, a := range cmd.args {
			if a.kind == argID {
				needsID = true
			}
			if a.kind == argText && p.Text == "" {
				t.Fatalf("%s: required text empty", p.Name)
			}
		}
		if needsID != (p.ID > 0) {
			t.Fatalf("%s: id %d, needs id %v", p.Name, p.ID, needsID)
		}
		if p.Text != strings.TrimSpace(p.Text) {
			t.Fatalf("text %q not trimmed", p.Text)
		}
		// Re-parsing the canonical form gives the same command.
		canon := strings.TrimPrefix(p.Name, strings.Fields(p.Name)[0])
		if p.ID > 0 {
			canon += fmt.Sprintf(" %d", p.ID)
		}
		if p.Text != "" {
			canon += " " + p.Text
		}
		again, err := ParseCommand(strings.Fields(p.Name)[0], canon)
		if err != nil || again != p {
			t.Fatalf("re-parse of %q = %+v, %v; want %+v", canon, again, err, p)
		}
	})
}

var testUsers = chattest.Users{"UALICE": "alice@example.com", "UBOB": "bob@example.com", "UCAROL": "carol@example.com", "UOLGA": "olga@example.com", "UNOMAIL": ""}

func newTestRouter(t *testing.T, d Desk, opts ...Option) *Router {
	t.Helper()
	opts = append([]Option{WithDeskURL("https://desk.example.com")}, opts...)
	r, err := NewRouter(d, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func handle(r *Router, user, cmd, text string) Reply {
	return r.Dispatch(context.Background(), Caller{UserID: user, TeamID: "T1", ChannelID: "C1", Users: testUsers}, Command{Slash: cmd, Text: text})
}

func TestRouterCommands(t *testing.T) {
	tests := []struct {
		name, user, cmd, text string
		want                  string // substring of the answer text (or card text)
		failed                bool
		check                 func(t *testing.T, d *fakedesk.Desk)
	}{
		{"new with subject", "UCAROL", "/ticket", "new Printer on fire", "Created ticket #101: Printer on fire — https://desk.example.com/a/tickets/101", false, func(t *testing.T, d *fakedesk.Desk) {
			if len(d.Creates) != 1 || d.Creates[0].Email != "carol@example.com" || d.Creates[0].Source != sdclient.SourceTeamChat {
				t.Errorf("creates = %+v", d.Creates)
			}
		}},
		{"show", "UALICE", "/ticket", "show 42", "#42 Printer on fire", false, nil},
		{"show not found", "UALICE", "/ticket", "show 999", "ticket 999 not found", true, nil},
		{"show non-numeric", "UALICE", "/ticket", "show x", `"x" is not a ticket number; usage: /ticket show N`, true, nil},
		{"requester refused", "UCAROL", "/ticket", "show 42", "only desk agents can use /ticket show", true, nil},
		{"inactive agent refused", "UOLGA", "/ticket", "show 42", "only desk agents", true, nil},
		{"no e-mail", "UNOMAIL", "/ticket", "new x", "shows no e-mail address", true, nil},
		{"note", "UALICE", "/ticket", "note 42 <b>checked</b>\nnext", "Added a private note to ticket #42.", false, func(t *testing.T, d *fakedesk.Desk) {
			c := d.Conversations()
			if len(c) != 1 || !c[0].Private || c[0].UserID != 7 || c[0].Body != "&lt;b&gt;checked&lt;/b&gt;<br>next" {
				t.Errorf("convs = %+v", c)
			}
		}},
		{"reply", "UBOB", "/ticket", "reply 42 on our way", "the desk e-mails the reply to the requester", false, func(t *testing.T, d *fakedesk.Desk) {
			c := d.Conversations()
			if len(c) != 1 || c[0].Private || c[0].UserID != 8 {
				t.Errorf("convs = %+v", c)
			}
		}},
		{"status custom name", "UALICE", "/ticket", "status 42 waiting ON vendor", "Ticket #42 is now Waiting on vendor.", false, func(t *testing.T, d *fakedesk.Desk) {
			if d.Snapshot(42).Status != 6 {
				t.Errorf("status = %d", d.Snapshot(42).Status)
			}
		}},
		{"status id", "UALICE", "/ticket", "status 42 3", "is now Pending", false, nil},
		{"status unknown", "UALICE", "/ticket", "status 42 snoozed", `unknown status "snoozed"; statuses are Open (2), Pending (3)`, true, nil},
		{"status unknown id", "UALICE", "/ticket", "status 42 77", "status 77 does not exist", true, nil},
		{"priority", "UALICE", "/ticket", "priority 42 2", "priority is now Medium", false, nil},
		{"priority bad", "UALICE", "/ticket", "priority 42 extreme", `"extreme" is not a priority; usage: /ticket priority N low|medium|high|urgent|1-4`, true, nil},
		{"close", "UALICE", "/ticket", "close 42", "Ticket #42 is now Closed.", false, nil},
		{"resolve", "UALICE", "/ticket", "resolve 42", "Ticket #42 is now Resolved.", false, nil},
		{"mine", "UALICE", "/ticket", "mine", "Your open tickets: 1", false, nil},
		{"unassigned", "UALICE", "/ticket", "unassigned", "#42 Open · Urgent · unassigned — Printer on fire", false, nil},
		{"search", "UALICE", "/ticket", "search priority:3", "#43 Waiting on vendor · High · Alice Agent — VPN down", false, nil},
		{"search status macro", "UALICE", "/ticket", "search status:open AND priority:3", "Tickets matching status:open AND priority:3: 1", false, nil},
		{"search status name", "UALICE", "/ticket", "search status:'Waiting on vendor'", "#43", false, nil},
		{"search status word", "UALICE", "/ticket", "search status:closed", "#44", false, nil},
		{"search status unknown", "UALICE", "/ticket", "search status:snoozing", `bad filter expression: filter: column 1: unknown status "snoozing"`, true, nil},
		{"search bad", "UALICE", "/ticket", "search priorty:3", `bad filter expression: filter: column 1: unknown field "priorty"`, true, nil},
		{"search syntax", "UALICE", "/ticket", "search priority:3 AND", "bad filter expression: filter: column", true, nil},
		{"why no rules", "UALICE", "/ticket", "why 42", "no rules loaded", false, nil},
		{"help", "UCAROL", "/ticket", "help", "/ticket note N text — add a private note (agents)", false, nil},
		{"unknown", "UALICE", "/ticket", "dance", "unknown command /ticket dance", true, nil},
		{"assign me", "UALICE", "/assign", "42 me", "Ticket #42 is assigned to Alice Agent.", false, func(t *testing.T, d *fakedesk.Desk) {
			if r := d.Snapshot(42).ResponderID; r == nil || *r != 7 {
				t.Errorf("responder = %v", r)
			}
		}},
		{"assign mention", "UALICE", "/assign", "42 <@UBOB|bob>", "assigned to Bob Builder", false, nil},
		{"assign email", "UALICE", "/assign", "42 bob@example.com", "assigned to Bob Builder", false, nil},
		{"assign mailto", "UALICE", "/assign", "42 <mailto:bob@example.com|bob@example.com>", "assigned to Bob Builder", false, nil},
		{"assign non-agent", "UALICE", "/assign", "42 carol@example.com", "carol@example.com has no agent account on the desk", true, nil},
		{"assign gibberish", "UALICE", "/assign", "42 bob", `"bob" is not a @mention, an e-mail address or me`, true, nil},
		{"assign two", "UALICE", "/assign", "42 a@b c@d", "name one person", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := fakedesk.New()
			r := newTestRouter(t, d)
			resp := handle(r, tc.user, tc.cmd, tc.text)
			got := resp.Text
			if resp.Card != nil {
				got += "\n" + resp.Card.Text()
			}
			if !strings.Contains(got, tc.want) || resp.Failed != tc.failed {
				t.Fatalf("answer = %q (failed %v), want it to contain %q (failed %v)", got, resp.Failed, tc.want, tc.failed)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

func TestRouterDeskErrors(t *testing.T) {
	tests := []struct {
		name, op, text string
		errs           []error
		want           string
		calls          int
	}{
		{"forbidden", "update", "close 42", []error{sdclient.ErrForbidden}, "the desk does not let you close ticket 42", 1},
		{"forbidden note", "note", "note 42 x", []error{fmt.Errorf("add note: %w", sdclient.ErrForbidden)}, "the desk does not let you add a note to ticket 42", 1},
		{"busy read retried", "ticket", "show 42", []error{fakedesk.Busy(10 * time.Millisecond)}, "#42 Printer on fire", 2},
		{"busy for good", "ticket", "show 42", []error{fakedesk.Busy(10 * time.Millisecond), fakedesk.Busy(10 * time.Millisecond), fakedesk.Busy(30 * time.Second)}, "could not see ticket 42: the desk is rate-limiting deskbot: retry in 30 s", 3},
		{"busy create not retried", "create", "new x", []error{fakedesk.Busy(time.Millisecond)}, "could not open a ticket: the desk is rate-limiting deskbot: retry in", 1},
		{"busy note not retried", "note", "note 42 x", []error{fakedesk.Busy(time.Millisecond)}, "could not add a note to ticket 42", 1},
		{"invalid", "update", "priority 42 1", []error{fmt.Errorf("update: %w: priority is read-only", sdclient.ErrValidation)}, "the desk refused to change the priority of ticket 42", 1},
		{"other", "filter", "mine", []error{errors.New("connection reset")}, "could not list your tickets: something went wrong (logged)", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := fakedesk.New()
			d.FailNext(tc.op, tc.errs...)
			r := newTestRouter(t, d)
			resp := handle(r, "UALICE", "/ticket", tc.text)
			got := resp.Text
			if resp.Card != nil {
				got = resp.Card.Text()
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("answer = %q, want %q", got, tc.want)
			}
			if n := d.Count(tc.op); n != tc.calls {
				t.Fatalf("%s called %d times, want %d", tc.op, n, tc.calls)
			}
		})
	}
}

func TestRouterPanicBecomesAnswer(t *testing.T) {
	d := fakedesk.New()
	d.PanicOn = "ticket"
	var logs strings.Builder
	var mu sync.Mutex
	r, err := NewRouter(d, slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp := handle(r, "UALICE", "/ticket", "show 42")
	if !resp.Failed || !strings.Contains(resp.Text, "something went wrong running /ticket show") {
		t.Fatalf("answer = %+v", resp)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "fake desk exploded") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
	// The router still works.
	d.PanicOn = ""
	if resp := handle(r, "UALICE", "/ticket", "show 42"); resp.Failed {
		t.Fatalf("after panic: %+v", resp)
	}
}

type lockedWriter struct {
	w  *strings.Builder
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestRouterDeadline(t *testing.T) {
	d := fakedesk.New()
	d.Delay = time.Second
	r := newTestRouter(t, d, WithCommandTimeout(50*time.Millisecond))
	start := time.Now()
	resp := handle(r, "UALICE", "/ticket", "show 42")
	if !resp.Failed || !strings.Contains(resp.Text, "did not answer in time") {
		t.Fatalf("answer = %+v", resp)
	}
	if el := time.Since(start); el > 900*time.Millisecond {
		t.Fatalf("took %s; the deadline did not cut the call", el)
	}
}

func TestAgentCacheExpires(t *testing.T) {
	d := fakedesk.New()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newTestRouter(t, d, WithClock(clock), WithAgentCacheTTL(time.Minute))
	handle(r, "UALICE", "/ticket", "mine")
	handle(r, "UALICE", "/ticket", "mine")
	if n := d.Count("agentByEmail"); n != 1 {
		t.Fatalf("agent looked up %d times, want 1 (cached)", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	handle(r, "UALICE", "/ticket", "mine")
	if n := d.Count("agentByEmail"); n != 2 {
		t.Fatalf("agent looked up %d times after expiry, want 2", n)
	}
}

type fixedExplainer string

func (f fixedExplainer) ExplainTicket(_ context.Context, t *sdclient.Ticket) (string, error) {
	return fmt.Sprintf("%s %d", string(f), t.ID), nil
}

func TestWhyUsesExplainer(t *testing.T) {
	r := newTestRouter(t, fakedesk.New(), WithExplainer(fixedExplainer("rule page-urgent holds for")))
	if resp := handle(r, "UALICE", "/ticket", "why 42"); resp.Text != "rule page-urgent holds for 42" {
		t.Fatalf("answer = %q", resp.Text)
	}
}

func TestNewWithoutSubjectAsksForForm(t *testing.T) {
	r := newTestRouter(t, fakedesk.New())
	resp := handle(r, "UCAROL", "/ticket", "new")
	if resp.Form == nil || len(resp.Form.Groups) != 2 {
		t.Fatalf("answer = %+v, want a form with the two groups", resp)
	}
	resp = r.Dispatch(context.Background(), Caller{UserID: "UCAROL", Users: testUsers}, Command{Form: &chat.TicketFormValues{Subject: "Mouse", Description: "left button", Priority: 3, GroupID: 4}})
	if !strings.Contains(resp.Text, "Created ticket #101: Mouse") {
		t.Fatalf("answer = %q", resp.Text)
	}
}

func TestNewRouterOptionErrors(t *testing.T) {
	for _, o := range []Option{WithTicketLink("https://x/t"), WithDeskURL("desk.example.com"), WithCommandTimeout(0), WithClock(nil)} {
		if _, err := NewRouter(fakedesk.New(), slog.New(slog.DiscardHandler), o); err == nil {
			t.Errorf("option accepted, want an error")
		}
	}
	r := newTestRouter(t, fakedesk.New(), WithTicketLink("https://t.example/{id}/view"))
	if l := r.TicketLink(5); l != "https://t.example/5/view" {
		t.Fatalf("link = %q", l)
	}
}

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

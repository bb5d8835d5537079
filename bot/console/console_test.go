package console_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/console"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

func TestConsole(t *testing.T) {
	in := strings.NewReader("/ticket new Printer on fire\n/ticket show 101\n\n/ticket new\n/assign 42 bob@example.com\nhello\n/ticket show x\n")
	got, d := runConsole(t, in)
	chattest.Contains(t, "console output", got,
		"Created ticket #101: Printer on fire — https://desk.example.com/a/tickets/101",
		"#101 Printer on fire <https://desk.example.com/a/tickets/101>",
		"the console has no forms; type /ticket new <subject>",
		"Ticket #42 is assigned to Bob Builder.",
		"commands start with /ticket, /assign or /oncall",
		`"x" is not a ticket number; usage: /ticket show N`,
	)
	// The caller is the API key's agent (Alice, id 7): she is the requester.
	if d.Creates[0].Email != "alice@example.com" {
		t.Errorf("requester %q, want the API key's agent", d.Creates[0].Email)
	}
}

func TestConsoleAlert(t *testing.T) {
	c, out, d := newConsole(t, strings.NewReader(""), console.WithEmail("bob@example.com"))
	ctx := context.Background()
	tk := d.Snapshot(42)
	if ok, _ := c.AlreadyAlerted(ctx, "#oncall", "k1"); ok {
		t.Fatal("alerted before any alert")
	}
	if err := c.Alert(ctx, chat.AlertMessage{Channel: "#oncall", Text: "Urgent unassigned", Mention: "@it-oncall", Ticket: &tk, Rule: "page", Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	chattest.Contains(t, "alert output", got, "ALERT #oncall: Urgent unassigned (@it-oncall)", "#42 Printer on fire", "Status:", "rule page · act with /assign 42 me, /ticket resolve 42")
	if ok, _ := c.AlreadyAlerted(ctx, "#oncall", "k1"); !ok {
		t.Fatal("AlreadyAlerted false after the alert")
	}
	if err := c.Alert(ctx, chat.AlertMessage{Channel: "#oncall", Text: "x"}); err == nil {
		t.Fatal("alert without ticket accepted")
	}
	if e, _ := c.Email(ctx, "console"); e != "bob@example.com" {
		t.Fatalf("console user %q", e)
	}
}

// A pasted log longer than any command gets an answer and the console
// goes on; it used to end with "bufio.Scanner: token too long". A long
// line of multi-byte characters within the limit is a command; a last
// line without a newline is read too.
func TestConsoleLongLines(t *testing.T) {
	in := strings.NewReader("/ticket note 42 " + strings.Repeat("x", 200_000) + "\n" +
		"/ticket note 42 " + strings.Repeat("🔥", 3000) + "\r\n" +
		"/ticket show 43")
	c, out, d := newConsole(t, in)
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"that line is too long; a command takes at most 8000 characters",
		"Added a private note to ticket #42.",
		"#43 VPN down",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("console output lacks %q:\n%s", want, got[:min(len(got), 2000)])
		}
	}
	if convs := d.Conversations(); len(convs) != 1 || !strings.HasPrefix(convs[0].Body, "🔥") {
		t.Errorf("notes = %d, want the emoji one only", len(convs))
	}
}

// The console says why a page stopped without an acknowledgement: every
// level paged, or its policy gone from the rules file.
func TestConsolePageStopped(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	p := oncall.Page{Key: "page-urgent/42/1", Policy: "it-urgent", TicketID: 42, Exhausted: true}
	gone := p
	gone.History = []oncall.Event{{Kind: oncall.EventExhausted, Detail: "escalation policy it-urgent is no longer in the rules file: nobody left to page"}}
	for _, q := range []oncall.Page{p, gone} {
		if err := c.PageStopped(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		"PAGE STOPPED page-urgent/42/1 (ticket #42): nobody acknowledged; every level of it-urgent was paged\n",
		"PAGE STOPPED page-urgent/42/1 (ticket #42): nobody acknowledged; escalation policy it-urgent is no longer in the rules file: nobody left to page\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console output lacks %q:\n%s", want, out.String())
		}
	}
}

// The console numbers the buttons of the cards it prints, alerts and
// /ticket show alike, and typing the number (or /press N) presses it, as
// a click would on Slack. Numbers only grow, so an alert printed meanwhile
// never changes what a number means.
func TestConsoleButtons(t *testing.T) {
	in := strings.NewReader("/ticket show 43\n2\n[4]\n/press 12\n99\n/press x\n")
	c, out, d := newConsole(t, in, console.WithEmail("bob@example.com"))
	ctx := context.Background()
	tk := d.Snapshot(42)
	if err := c.Alert(ctx, chat.AlertMessage{Channel: "#oncall", Text: "Urgent unassigned", Ticket: &tk, Rule: "page", Key: "deskbot:f=page/42/1.1/0"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	chattest.Contains(t, "console output", got,
		"  [1] Assign to me [2] Acknowledge [3] Resolve  (type a number to press it)", // the alert on #42
		"  [4] Assign to me [5] Resolve [6] Close  (type a number to press it)",       // /ticket show 43
		"Done: Bob Builder acknowledged (ticket #42).",                                // 2
		"Done: Bob Builder assigned the ticket to themself (ticket #43).",             // [4]
		"there is no button [99]",
		"usage: /press N",
	)
	if strings.Contains(got, "[Assign to me]") {
		t.Errorf("buttons shown without numbers:\n%s", got)
	}
	var assigned, closed bool
	for _, u := range d.Updates {
		if u.ID == 43 && u.U.ResponderID != nil && *u.U.ResponderID == 8 {
			assigned = true
		}
		if u.ID == 43 && u.U.Status != nil && *u.U.Status == 5 {
			closed = true
		}
	}
	if !assigned || !closed {
		t.Errorf("updates %+v, want #43 assigned to Bob (8) and closed ([12] of the card after the assignment):\n%s", d.Updates, got)
	}
}

func TestConsolePage(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	p := chattest.Page()
	err := c.Page(context.Background(), oncall.PageRequest{Page: p, Target: *p.Target, Step: 2, Level: 1, TicketID: 42, Channel: "#it-oncall", Text: p.Text})
	if err != nil {
		t.Fatal(err)
	}
	want := "PAGE #it-oncall: paged bob@example.com (level 2 of it-urgent): Urgent #42 unassigned: Printer on fire <now>\n  (ticket #42 · acknowledge with /oncall ack 42)\n" +
		"  [1] Acknowledge [2] Take it [3] Escalate now  (type a number to press it)\n"
	if out.String() != want {
		t.Fatalf("console page:\n%q\nwant\n%q", out.String(), want)
	}
}

func TestConsoleAlertGroup(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	g := chattest.AlertGroup(7, 6)
	g.Alerts[2].Text = "late"
	ctx := context.Background()
	if err := c.AlertGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	want := "ALERT #it-oncall: rule overdue, 6 tickets in one message (UALICE):\n" +
		"  Ticket #7 is overdue: Printer <7> & co\n  Ticket #8 is overdue: Printer <8> & co\n  #9 Printer <9> & co — late\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("console printed\n%s\nwant it to start with\n%s", out.String(), want)
	}
	for _, a := range g.Alerts {
		if ok, _ := c.AlreadyAlerted(ctx, "#it-oncall", a.Key); !ok {
			t.Errorf("AlreadyAlerted(%s) false after the group", a.Key)
		}
	}
	if err := c.AlertGroup(ctx, chat.AlertGroupMessage{Channel: "#x"}); err == nil {
		t.Error("an empty group was accepted")
	}
}

func TestConsolePostDryRun(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	if err := c.PostDryRun(context.Background(), "#it-desk", "deskbot dry run: would have:\n• fired x on #1"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "DRY RUN #it-desk: deskbot dry run: would have:\n• fired x on #1\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

// runConsole runs a console (see newConsole) over in to its end and
// returns what it printed, and its desk.
func runConsole(t *testing.T, in io.Reader, opts ...console.Option) (string, *fakedesk.Desk) {
	t.Helper()
	c, out, d := newConsole(t, in, opts...)
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String(), d
}

// newConsole is a console over a router over a fake desk, reading in and
// writing to out.
func newConsole(t *testing.T, in io.Reader, opts ...console.Option) (*console.Console, *bytes.Buffer, *fakedesk.Desk) {
	t.Helper()
	d := fakedesk.New()
	out := &bytes.Buffer{}
	c, err := console.New(routertest.New(t, d), in, out, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, out, d
}

// The console prints a digest, and a later run of the day as its update.
func TestConsoleDigest(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	m := chat.DigestMessage{Rule: "morning", Channel: "#it-desk", At: at, Within: 4 * time.Hour, Total: 1,
		ByStatus: []chat.Count{{Name: "Open", N: 1}}, ByPriority: []chat.Count{{Name: "High", N: 1}}, ByGroup: []chat.Count{{Name: "no group", N: 1}},
		Unassigned: []*sdclient.Ticket{{ID: 42, Subject: "Printer on fire", CreatedAt: at.Add(-3 * time.Hour)}}, UnassignedTotal: 1}
	ref, err := c.PostDigest(ctx, m, chat.DigestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PostDigest(ctx, m, ref); err != nil {
		t.Fatal(err)
	}
	chattest.Contains(t, "output", out.String(),
		"DIGEST #it-desk: Desk digest (morning), Wed 25 Nov 08:00 UTC",
		"1 open: Open 1",
		"• #42 Printer on fire <https://desk.example.com/a/tickets/42> — opened 3h ago",
		"DIGEST #it-desk (update of today's digest 1):",
	)
}

// A dm: prints as a direct message to the person, or, when there is
// nobody to write to, as the fallback channel shows it; each once.
func TestConsoleDM(t *testing.T) {
	c, out, d := newConsole(t, strings.NewReader(""))
	ctx := context.Background()
	tk := d.Snapshot(42)
	m := chat.DMMessage{To: "bob@example.com", Who: "the assignee Bob Builder", Channel: "#it-desk", Text: "due in 30 minutes", Rule: "nudge", Key: "k1", Ticket: &tk}
	if ok, _ := c.AlreadyDMed(ctx, m); ok {
		t.Fatal("sent before any message")
	}
	if err := c.DM(ctx, m); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.AlreadyDMed(ctx, m); !ok {
		t.Error("AlreadyDMed false after DM")
	}
	none := chat.DMMessage{Who: "the assignee", Why: "ticket #42 has no assignee", Channel: "#it-desk", Text: "due soon", Rule: "nudge", Key: "k2", Ticket: &tk}
	if err := c.DM(ctx, none); err != nil {
		t.Fatal(err)
	}
	chattest.Contains(t, "output", out.String(),
		"DM bob@example.com: due in 30 minutes — ticket #42",
		"ALERT #it-desk: For the assignee (not sent directly: ticket #42 has no assignee): due soon — ticket #42",
		"(rule nudge)",
	)
	if err := c.DM(ctx, chat.DMMessage{Key: "k3"}); err == nil {
		t.Error("a message without ticket was printed")
	}
}

// TestConsoleHome: /home prints the person's home as text, with the
// commands that do what the Home tab's buttons do.
func TestConsoleHome(t *testing.T) {
	got, _ := runConsole(t, strings.NewReader("/home\n"))
	chattest.Contains(t, "/home", got, "Your deskbot home", "Assigned to you: 1", "• #43 Waiting on vendor · High — VPN down", "Your requests: 0", "(new ticket: /ticket new <subject> · your queue: /ticket mine)")
}

// Issue 23, 8: /ticket help lists every command the console takes: the
// router's, with plain-word search, and the console's own /home and
// /press.
func TestConsoleHelpListsEveryCommand(t *testing.T) {
	got, _ := runConsole(t, strings.NewReader("/ticket help\n"))
	chattest.Contains(t, "help", got,
		"/ticket search <filter expression> — search your workspaces by field (priority:4 AND agent_id:0) or by plain words in subject and description (printer jam)",
		"/ticket unassigned [page N]", "/assign list [words] [page N]", "/oncall ack N",
		"• /home — your Home tab", "• /press N (or just N) — press button [N] of a card above",
	)
}

// slowRouter holds the command whose text is hold until release closes.
type slowRouter struct {
	console.Router
	hold    string
	started chan struct{}
	release chan struct{}
}

func (r *slowRouter) Dispatch(ctx context.Context, caller chat.Caller, cmd chat.Command) chat.Reply {
	if cmd.Text == r.hold {
		close(r.started)
		<-r.release
	}
	return r.Router.Dispatch(ctx, caller, cmd)
}

// notifyWriter is an output the test can read while the console writes.
type notifyWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A command that waits on a slow desk does not hold up the next one
// typed: its answer comes after, labelled with the line it answers, and
// whole.
func TestConsoleSlowCommandDoesNotBlockTheNext(t *testing.T) {
	d := fakedesk.New()
	r := &slowRouter{Router: routertest.New(t, d), hold: "show 42", started: make(chan struct{}), release: make(chan struct{})}
	in, typing := io.Pipe()
	out := &notifyWriter{changed: make(chan struct{}, 1)}
	c, err := console.New(r, in, out)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context()) }()
	waitOut := func(what string) string {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			if got := out.String(); strings.Contains(got, what) {
				return got
			}
			select {
			case <-out.changed:
			case <-timeout:
				t.Fatalf("no %q in the console's output:\n%s", what, out.String())
			}
		}
	}
	if _, err := io.WriteString(typing, "/ticket show 42\n"); err != nil {
		t.Fatal(err)
	}
	<-r.started
	if _, err := io.WriteString(typing, "/ticket show 43\n"); err != nil {
		t.Fatal(err)
	}
	got := waitOut("#43 VPN down")
	if strings.Contains(got, "#42 Printer on fire") {
		t.Fatalf("the slow command answered before the release:\n%s", got)
	}
	close(r.release)
	got = waitOut("» /ticket show 42\n#42 Printer on fire")
	if strings.Contains(got, "» /ticket show 43") {
		t.Errorf("the answer to the last line typed is labelled:\n%s", got)
	}
	_ = typing.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

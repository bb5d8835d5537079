package bot

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestConsole(t *testing.T) {
	d := newFakeDesk()
	r := newTestRouter(t, d)
	in := strings.NewReader("/ticket new Printer on fire\n/ticket show 101\n\n/ticket new\n/assign 42 bob@example.com\nhello\n/ticket show x\n")
	var out syncBuffer
	c, err := NewConsole(r, in, &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"Created ticket #101: Printer on fire — https://desk.example.com/a/tickets/101",
		"#101 Printer on fire <https://desk.example.com/a/tickets/101>",
		"the console has no forms; type /ticket new <subject>",
		"Ticket #42 is assigned to Bob Builder.",
		"commands start with /ticket, /assign or /oncall",
		`"x" is not a ticket number; usage: /ticket show N`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("console output lacks %q:\n%s", want, got)
		}
	}
	// The caller is the API key's agent (Alice, id 7): she is the requester.
	if d.creates[0].Email != "alice@example.com" {
		t.Errorf("requester %q, want the API key's agent", d.creates[0].Email)
	}
}

func TestConsoleAlert(t *testing.T) {
	d := newFakeDesk()
	r := newTestRouter(t, d)
	var out syncBuffer
	c, err := NewConsole(r, strings.NewReader(""), &out, WithConsoleEmail("bob@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tk := d.ticket(42)
	if ok, _ := c.AlreadyAlerted(ctx, "#oncall", "k1"); ok {
		t.Fatal("alerted before any alert")
	}
	if err := c.Alert(ctx, AlertMessage{Channel: "#oncall", Text: "Urgent unassigned", Mention: "@it-oncall", Ticket: &tk, Rule: "page", Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"ALERT #oncall: Urgent unassigned (@it-oncall)", "#42 Printer on fire", "Status:", "rule page · act with /assign 42 me, /ticket resolve 42"} {
		if !strings.Contains(got, want) {
			t.Errorf("alert output lacks %q:\n%s", want, got)
		}
	}
	if ok, _ := c.AlreadyAlerted(ctx, "#oncall", "k1"); !ok {
		t.Fatal("AlreadyAlerted false after the alert")
	}
	if err := c.Alert(ctx, AlertMessage{Channel: "#oncall", Text: "x"}); err == nil {
		t.Fatal("alert without ticket accepted")
	}
	if e, _ := c.Email(ctx, consoleUser); e != "bob@example.com" {
		t.Fatalf("console user %q", e)
	}
}

package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

func fromChatRouter(t *testing.T, d Desk) *Router {
	t.Helper()
	r, err := NewRouter(d, slog.New(slog.DiscardHandler), WithDeskURL("https://desk.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var fromChatUsers = chattest.Users{"UALICE": "alice@example.com", "UCAROL": "carol@example.com", "UNOMAIL": ""}

func sourceMessage(ts, author, text string, loads *int) chat.SourceMessage {
	return chat.SourceMessage{Channel: "C1", TS: ts, Load: func(context.Context) (chat.MessageContent, error) {
		*loads++
		return chat.MessageContent{Text: text, Author: author, Permalink: "https://fake.slack.com/archives/C1/p" + strings.ReplaceAll(ts, ".", ""),
			Replies: []chat.ThreadReply{{Author: "UALICE", Text: "same here"}, {Author: "", Text: "bot says hi"}}}, nil
	}}
}

func TestTicketFromMessageOnce(t *testing.T) {
	d := fakedesk.New()
	r := fromChatRouter(t, d)
	ctx := t.Context()
	loads := 0
	m := sourceMessage("1.000100", "UCAROL", "\n  Printer   on fire\nsmoke everywhere", &loads)
	caller := Caller{UserID: "UALICE", Users: fromChatUsers}
	if resp, ok := r.MessageTicket(ctx, "C1", "1.000100"); ok {
		t.Errorf("MessageTicket before any ticket = %+v", resp)
	}
	resp := r.TicketFromMessage(ctx, caller, m)
	if resp.Failed || !resp.Public || !strings.Contains(resp.Text, "Created ticket #101 from this message: Printer on fire — https://desk.example.com/a/tickets/101") {
		t.Fatalf("first: %+v", resp)
	}
	c := d.Creates[0]
	if c.Email != "carol@example.com" || c.Subject != "Printer on fire" || c.Source != sdclient.SourceTeamChat {
		t.Errorf("created %+v; want requester carol, subject the first line", c)
	}
	for _, w := range []string{"Printer   on fire<br>smoke everywhere", "From chat: https://fake.slack.com/archives/C1/p1000100", "alice@example.com: same here", "bot: bot says hi"} {
		if !strings.Contains(c.Description, w) {
			t.Errorf("description %q lacks %q", c.Description, w)
		}
	}
	if got, ok := r.MessageTicket(ctx, "C1", "1.000100"); !ok || got.Text != "This message is already ticket #101 — https://desk.example.com/a/tickets/101." {
		t.Errorf("MessageTicket = %+v, %v", got, ok)
	}
	// Again, by someone else: the first ticket, no desk request, no read.
	calls := d.Count("create")
	again := r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, m)
	if again.Failed || again.Public || again.Text != "This message is already ticket #101 — https://desk.example.com/a/tickets/101." {
		t.Errorf("second: %+v", again)
	}
	if d.Count("create") != calls || loads != 1 {
		t.Errorf("second request created %d tickets, read the message %d times", d.Count("create")-calls, loads)
	}
}

func TestTicketFromMessageFallbacksAndRefusals(t *testing.T) {
	d := fakedesk.New()
	r := fromChatRouter(t, d)
	ctx := t.Context()
	loads := 0
	// The author has no e-mail: the requester is the caller, and it says so.
	resp := r.TicketFromMessage(ctx, Caller{UserID: "UALICE", Users: fromChatUsers}, sourceMessage("2.0", "UNOMAIL", "VPN down", &loads))
	if resp.Failed || !strings.Contains(resp.Text, "the requester is the person who asked") || d.Creates[0].Email != "alice@example.com" {
		t.Errorf("fallback: %+v, created %+v", resp, d.Creates)
	}
	// The form's subject wins over the first line.
	m := sourceMessage("3.0", "UCAROL", "long rambling message", &loads)
	m.Form = &chat.TicketFormValues{Subject: "Laptop broken", Description: "seen twice", Priority: 3}
	resp = r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, m)
	if c := d.Creates[1]; resp.Failed || c.Subject != "Laptop broken" || c.Priority != 3 || !strings.HasPrefix(c.Description, "seen twice<br><br>long rambling") {
		t.Errorf("form: %+v, created %+v", resp, c)
	}
	// A caller without e-mail is refused, and nothing is claimed.
	resp = r.TicketFromMessage(ctx, Caller{UserID: "UNOMAIL", Users: fromChatUsers}, sourceMessage("4.0", "UCAROL", "x", &loads))
	if !resp.Failed || !strings.Contains(resp.Text, "your chat profile shows no e-mail address") {
		t.Errorf("no e-mail: %+v", resp)
	}
	// The desk refuses: the claim is given up, so a retry works.
	d.FailNext("create", sdclient.ErrValidation)
	resp = r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, sourceMessage("4.0", "UCAROL", "x", &loads))
	if !resp.Failed {
		t.Errorf("desk refusal answered %+v", resp)
	}
	resp = r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, sourceMessage("4.0", "UCAROL", "x", &loads))
	if resp.Failed || !resp.Public {
		t.Errorf("retry after a refusal: %+v", resp)
	}
	// The message cannot be read: refused, released.
	bad := chat.SourceMessage{Channel: "C1", TS: "5.0", Load: func(context.Context) (chat.MessageContent, error) {
		return chat.MessageContent{}, errors.New("thread_not_found")
	}}
	if resp = r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, bad); !resp.Failed {
		t.Errorf("unreadable message: %+v", resp)
	}
	if resp = r.TicketFromMessage(ctx, Caller{UserID: "UCAROL", Users: fromChatUsers}, chat.SourceMessage{}); !resp.Failed || !strings.Contains(resp.Text, "not a message") {
		t.Errorf("empty message: %+v", resp)
	}
}

func TestTicketIDFromURL(t *testing.T) {
	r := fromChatRouter(t, fakedesk.New())
	custom, err := NewRouter(fakedesk.New(), slog.New(slog.DiscardHandler), WithTicketLink("https://it.example.org/view?x=1#t{id}"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		r    *Router
		url  string
		want int64
	}{
		{r, "https://desk.example.com/a/tickets/42", 42},
		{r, "https://DESK.example.com/a/tickets/42/", 42},
		{r, "https://desk.example.com/a/tickets/42?tab=notes#x", 42},
		{r, "https://desk.example.com/helpdesk/tickets/7", 7},
		{r, "http://desk.example.com/a/tickets/42", 0},
		{r, "https://evil.example.com/a/tickets/42", 0},
		{r, "https://desk.example.com.evil.com/a/tickets/42", 0},
		{r, "https://desk.example.com/a/tickets/42x", 0},
		{r, "https://desk.example.com/a/tickets/0", 0},
		{r, "https://desk.example.com/a/tickets/+4", 0},
		{r, "https://desk.example.com/a/tickets/", 0},
		{r, "https://desk.example.com/a/problems/42", 0},
		{r, "not a url", 0},
		{custom, "https://it.example.org/view", 0},
	}
	for _, tc := range tests {
		id, ok := tc.r.TicketIDFromURL(tc.url)
		if id != tc.want || ok != (tc.want != 0) {
			t.Errorf("TicketIDFromURL(%q) = %d, %v; want %d", tc.url, id, ok, tc.want)
		}
	}
}

func FuzzTicketIDFromURL(f *testing.F) {
	for _, s := range []string{"https://desk.example.com/a/tickets/42", "https://desk.example.com/helpdesk/tickets/1/", "http://x/%zz", ""} {
		f.Add(s)
	}
	r, err := NewRouter(fakedesk.New(), slog.New(slog.DiscardHandler), WithDeskURL("https://desk.example.com"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := r.TicketIDFromURL(s)
		if ok != (id > 0) {
			t.Errorf("TicketIDFromURL(%q) = %d, %v", s, id, ok)
		}
		if ok && !strings.Contains(strings.ToLower(s), "desk.example.com") {
			t.Errorf("TicketIDFromURL(%q) took a link of another site", s)
		}
	})
}

func TestUnfurlOnlyWhatTheSharerMaySee(t *testing.T) {
	d := fakedesk.New()
	// Bob may see only what is assigned to him (ticket 44), Alice all.
	d.AgentList[1].Roles = []sdclient.AgentRole{{AssignmentScope: scopeAssigned}}
	r := fromChatRouter(t, d)
	ctx := t.Context()
	links := []string{"https://desk.example.com/a/tickets/42", "https://desk.example.com/helpdesk/tickets/44", "https://desk.example.com/a/tickets/999", "https://example.net/a/tickets/43"}
	users := chattest.Users{"UALICE": "alice@example.com", "UBOB": "bob@example.com", "UCAROL": "carol@example.com"}
	got := r.Unfurl(ctx, Caller{UserID: "UALICE", Users: users}, links)
	if len(got) != 2 || got[links[0]] == nil || got[links[1]] == nil {
		t.Fatalf("alice's unfurls: %v", got)
	}
	if txt := got[links[0]].Text(); !strings.Contains(txt, "#42 Printer on fire <https://desk.example.com/a/tickets/42>") ||
		!strings.Contains(txt, "Status:             Open") || !strings.Contains(txt, "Priority:           Urgent") || !strings.Contains(txt, "Assignee:           unassigned") {
		t.Errorf("card:\n%s", txt)
	}
	if txt := got[links[1]].Text(); !strings.Contains(txt, "Assignee:           Bob Builder") {
		t.Errorf("card:\n%s", txt)
	}
	got = r.Unfurl(ctx, Caller{UserID: "UBOB", Users: users}, links)
	if len(got) != 1 || got[links[1]] == nil {
		t.Errorf("bob's unfurls: %v; want ticket 44 only", got)
	}
	// A requester, or no ticket link: nothing, and no desk request.
	before := d.Count("ticket")
	if got := r.Unfurl(ctx, Caller{UserID: "UCAROL", Users: users}, links); len(got) != 0 {
		t.Errorf("carol's unfurls: %v", got)
	}
	if got := r.Unfurl(ctx, Caller{UserID: "UALICE", Users: users}, []string{"https://example.net/"}); got != nil {
		t.Errorf("unfurls of another site: %v", got)
	}
	if n := d.Count("ticket") - before; n != 0 {
		t.Errorf("%d ticket reads for a requester's link", n)
	}
}

// TestTicketFromMessageTwoReplicas: two routers (replicas) sharing one
// store race to make a ticket of the same message, many times over: each
// message makes exactly one ticket, and every loser names it or says it
// is being made.
func TestTicketFromMessageTwoReplicas(t *testing.T) {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := fakedesk.New()
	var replicas []*Router
	for range 2 {
		r, err := NewRouter(d, slog.New(slog.DiscardHandler), WithDeskURL("https://desk.example.com"), WithMessageLedger(st))
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, r)
	}
	const messages, perReplica = 10, 3
	for i := range messages {
		ts := fmt.Sprintf("%d.000100", i+1)
		var wg sync.WaitGroup
		resps := make([]Reply, 2*perReplica)
		for j := range resps {
			wg.Go(func() {
				loads := 0
				resps[j] = replicas[j%2].TicketFromMessage(t.Context(), Caller{UserID: "UALICE", Users: fromChatUsers}, sourceMessage(ts, "UCAROL", "Printer", &loads))
			})
		}
		wg.Wait()
		made := 0
		for _, r := range resps {
			switch {
			case r.Failed:
				t.Errorf("message %s: %s", ts, r.Text)
			case r.Public:
				made++
			case !strings.Contains(r.Text, "already ticket #") && !strings.Contains(r.Text, "being made"):
				t.Errorf("message %s: loser answered %q", ts, r.Text)
			}
		}
		if made != 1 {
			t.Errorf("message %s made %d tickets; want 1", ts, made)
		}
	}
	if n := d.Count("create"); n != messages {
		t.Errorf("%d tickets created for %d messages", n, messages)
	}
}

package slackchat_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/slack-go/slack"
)

// TestForgedAlertAckValueRefused (issue 27, item 6): erin may act only on
// the tickets assigned to her. On the alert card of her own ticket she
// presses Acknowledge with the button's value changed to name the firing
// of urgent ticket #1 (every part of it guessable). The click is refused:
// the page of #1 keeps escalating, no note is written on either ticket,
// no acknowledgement is recorded and no card changes.
func TestForgedAlertAckValueRefused(t *testing.T) {
	e := newPageEnv(t)
	erin := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Erin", LastName: "Agent", Email: "erin@example.com",
		Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}})
	e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
	own := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer jam", Priority: 1, ResponderID: erin.ID})
	e.poll()
	pageCard := e.lastCard()

	key := fmt.Sprintf("deskbot:f=watch/%d/1.1/0", own.ID)
	alert := e.postAlert(own.ID, "watch", "Look", key)
	e.clk.Advance(time.Minute)
	for _, forged := range []string{
		fmt.Sprintf("%d|page-urgent|deskbot:f=page-urgent/%d/1.1/0", own.ID, e.ticket),
		fmt.Sprintf("%d|watch|deskbot:f=page-urgent/%d/1.1/0", own.ID, e.ticket),
		fmt.Sprintf("%d|page-urgent|deskbot:f=page-urgent/%d/1.1/0", e.ticket, e.ticket), // her scope refuses #1
	} {
		before := e.press(erinID, alert, chat.ActionAcknowledge, forged)
		var answer slackfake.Message
		if err := e.fake.Wait(e.ctx, func() bool {
			for _, m := range e.fake.Messages()[before:] {
				if m.Method == "chat.postEphemeral" && m.User == erinID {
					answer = m
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("%s: no answer: %v", forged, err)
		}
		if !strings.Contains(answer.Text, "does not belong to an alert of ticket") && !strings.Contains(answer.Text, "you cannot act on ticket") {
			t.Errorf("%s answered %q", forged, answer.Text)
		}
		for _, m := range e.fake.Messages()[before:] {
			if m.Updated {
				t.Fatalf("%s changed a card: %+v", forged, m)
			}
		}
	}
	if p := e.page(); p.Stopped() || p.AckedBy != "" {
		t.Fatalf("the forged value stopped the page of #%d: %+v", e.ticket, p)
	}
	if n := e.notes(); len(n) != 0 {
		t.Fatalf("notes on #%d: %q", e.ticket, n)
	}
	for _, c := range e.sim.Desk.Conversations(own.ID) {
		t.Errorf("conversation on erin's ticket: %+v", c)
	}
	if got := e.acks.list(); len(got) != 0 {
		t.Fatalf("acknowledgements recorded: %q", got)
	}
	// The page still escalates at its next step, and its card is the one
	// posted before the clicks.
	if last := e.lastCard(); last.TS != pageCard.TS {
		t.Fatalf("page card changed: %+v", last)
	}
	e.tick(10 * time.Minute)
	if dm := e.dms("UBOB"); len(dm) != 1 {
		t.Fatalf("page did not escalate to bob: %d DMs", len(dm))
	}
}

// TestForgedFormMetadataNoRequester (issue 27, item 6): Bob runs the
// Create ticket shortcut on a message the bot wrote (no human author) and
// submits its form with private_metadata changed to name Carol as the
// message's author. The requester comes only from the message as the
// chat gives it: Bob's ticket is his own, never Carol's.
func TestForgedFormMetadataNoRequester(t *testing.T) {
	h := newE2E(t, nil, nil)
	api := slack.New(h.fake.BotToken(), slack.OptionAPIURL(h.fake.APIURL()))
	_, ts, err := api.PostMessageContext(h.ctx, "C0DESK", slack.MsgOptionText("Disk on db1 is 95% full", false))
	if err != nil {
		t.Fatal(err)
	}
	env, err := h.fake.MessageShortcut(h.ctx, "UBOB", "C0DESK", ts, slackchat.ShortcutCallbackID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	form, err := h.fake.WaitView(h.ctx, func(v slackfake.View) bool { return v.Method == "views.open" && v.UserID == "UBOB" })
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(form.PrivateMetadata), &meta); err != nil {
		t.Fatalf("private_metadata %q: %v", form.PrivateMetadata, err)
	}
	meta["a"], meta["author"], meta["user"] = "UCAROL", "UCAROL", "UCAROL"
	forged, _ := json.Marshal(meta)
	sub, err := h.fake.ViewSubmission(h.ctx, "UBOB", form.CallbackID, string(forged),
		map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "db1 disk"}}, slackfake.WithViewID(form.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.waitPosted("answer in the thread", func(m slackfake.Message) bool { return m.ThreadTS == ts })
	if n := h.fdesk.Count("create"); n != 1 {
		t.Fatalf("%d tickets created; want 1", n)
	}
	if c := h.fdesk.Creates[0]; c.Email != "bob@example.com" {
		t.Fatalf("requester %q; want bob@example.com (the forged metadata named carol)", c.Email)
	}
}

// TestSlackConnectStrangerActsAsNobody (issue 27, item 6): in a channel
// shared with another organisation, Mallory of team T0OTHER has the same
// e-mail as Alice, an agent of ours. Her reply in a linked thread is not
// copied to the ticket and her ticket reaction makes no ticket: she acts
// as nobody of ours. Alice's own reply, after hers, is copied.
func TestSlackConnectStrangerActsAsNobody(t *testing.T) {
	e := newThreadEnv(t)
	e.fake.AddUser(slackfake.User{ID: "UMALLORY", Name: "mallory", Email: "alice@example.com", TeamID: "T0OTHER"})
	alert := e.alerted()
	before := len(e.sim.Desk.Conversations(e.ticket))
	_, env, err := e.fake.PostUserMessage(e.ctx, slackfake.UserMessage{UserID: "UMALLORY", ChannelID: oncallID, ThreadTS: alert.TS, Text: "closing this, all fine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, e.ctx, e.slack)
	ts, err := e.fake.UserMessage("UCAROL", oncallID, "Scanner jammed", "")
	if err != nil {
		t.Fatal(err)
	}
	e.react("UMALLORY", oncallID, ts, "ticket")
	waitIdle(t, e.ctx, e.slack)
	if _, told := e.say("UALICE", alert.TS, "on my way"); !strings.Contains(told, "private note") {
		t.Errorf("Alice was told %q", told)
	}
	cs := e.sim.Desk.Conversations(e.ticket)
	if len(cs) != before+1 {
		t.Fatalf("%d conversations written; want Alice's only: %+v", len(cs)-before, cs[before:])
	}
	if c := cs[before]; !strings.Contains(c.Body, "on my way") {
		t.Fatalf("conversation %+v; want Alice's", c)
	}
	if n := len(e.sim.Desk.TicketIDs()); n != 1 {
		t.Fatalf("%d tickets on the desk; Mallory's reaction made one", n)
	}
	for _, m := range e.fake.Messages() {
		if m.ThreadTS == ts && !m.Ephemeral {
			t.Errorf("answered Mallory's reaction in public: %q", m.Text)
		}
	}
}

// TestTypedThreadMarkStillCopied (issue 27, item 6): the requester's
// e-mail replies on a linked ticket carry what once kept deskbot's own
// thread copies from echoing: the old fixed mark, a mark of the default
// key, and the signed mark of a copy deskbot really wrote (quoted under
// new words). None hides the reply from the agents watching the thread:
// each is copied there. deskbot's own copy is still not echoed.
func TestTypedThreadMarkStillCopied(t *testing.T) {
	e := newThreadEnv(t)
	alert := e.alerted()
	// Carol's reply in the thread: deskbot writes it on the desk, signed.
	if _, told := e.say("UCAROL", alert.TS, "It is smoking again"); told != fmt.Sprintf("Copied to ticket #%d.", e.ticket) {
		t.Fatalf("Carol was told %q", told)
	}
	signed := e.lastConv().Body
	mark := signed[strings.IndexRune(signed, '\u2060'):]
	oldFixed := oldThreadTag()
	for i, body := range []string{
		"<p>Please ignore the agents, cancel it</p>" + mark,
		"<p>Still broken</p><blockquote>It is smoking again" + mark + "</blockquote>",
		"<p>Call me at 555</p>" + oldFixed,
		"<p>It is smoking again</p>" + mark, // the same words, on the desk by e-mail: deskbot's mark, not copied again
	} {
		e.clk.Advance(time.Second)
		if _, ok := e.sim.Desk.AddConversation(sdsim.Conversation{TicketID: e.ticket, UserID: e.carol, Body: body, Incoming: true,
			CreatedAt: e.clk.Now(), UpdatedAt: e.clk.Now()}); !ok {
			t.Fatalf("reply %d not added", i)
		}
	}
	e.poll()
	e.poll()
	got := strings.Join(e.inThread(alert.TS), "|")
	for _, want := range []string{"cancel it", "Still broken", "Call me at 555"} {
		if !strings.Contains(got, want) {
			t.Errorf("the requester's reply %q is not in the thread: %q", want, got)
		}
	}
	if n := strings.Count(got, "It is smoking again"); n != 1 {
		t.Errorf("Carol's words appear %d times in the thread (%q); want once, in the quote", n, got)
	}
}

// oldThreadTag is the fixed mark deskbot put on thread copies before issue
// 27: the FNV-64a hash of "deskbot:thread" in invisible characters, which
// anyone could compute and type.
func oldThreadTag() string {
	h := fnv.New64a()
	h.Write([]byte("deskbot:thread"))
	sum := h.Sum64()
	var b strings.Builder
	b.WriteRune('\u2060')
	for i := 63; i >= 0; i-- {
		if sum>>uint(i)&1 == 1 {
			b.WriteRune('\u200c')
		} else {
			b.WriteRune('\u200b')
		}
	}
	b.WriteRune('\u2060')
	return b.String()
}

// TestSlackConnectAllowedTeam: a person of another team acts as the desk
// person with their e-mail only when their team is allowed
// (WithAllowedTeams, DESKBOT_SLACK_ALLOWED_TEAMS); otherwise a command of
// theirs is run as nobody's.
func TestSlackConnectAllowedTeam(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			var opts []slackchat.Option
			if allowed {
				opts = append(opts, slackchat.WithAllowedTeams("T0PARTNER"))
			}
			h := newE2E(t, nil, nil, opts...)
			h.fake.AddUser(slackfake.User{ID: "UPARTNER", Name: "partner", Email: "alice@example.com", TeamID: "T0PARTNER"})
			r := h.slash("UPARTNER", "/ticket", "show 42")
			if got := strings.Contains(all(r), "Printer on fire"); got != allowed {
				t.Fatalf("the partner's /ticket show 42 answered %q", r.Text)
			}
		})
	}
}

package slackchat_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"

	"github.com/slack-go/slack"
)

// stepClock is a router clock a test moves.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// openHome opens user's Home tab, waits until the bot has handled it and
// returns the views.publish calls made since before.
func (e *accessEnv) openHome(user string) []slackfake.View {
	e.t.Helper()
	before := len(publishes(e.fake))
	env, err := e.fake.AppHomeOpened(e.ctx, user, "home")
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	waitIdle(e.t, e.ctx, e.slack)
	return publishes(e.fake)[before:]
}

func publishes(f *slackfake.Server) []slackfake.View {
	var out []slackfake.View
	for _, v := range f.Views() {
		if v.Method == "views.publish" {
			out = append(out, v)
		}
	}
	return out
}

// homeText is every text of a published Home view, in order.
func homeText(t *testing.T, v slackfake.View) string {
	t.Helper()
	var view slack.View
	if err := json.Unmarshal(v.Raw, &view); err != nil {
		t.Fatal(err)
	}
	if view.Type != slack.VTHomeTab {
		t.Fatalf("published a %q view, want home", view.Type)
	}
	var b strings.Builder
	for _, bl := range view.Blocks.BlockSet {
		switch x := bl.(type) {
		case *slack.HeaderBlock:
			b.WriteString(x.Text.Text + "\n")
		case *slack.SectionBlock:
			b.WriteString(x.Text.Text + "\n")
		case *slack.ContextBlock:
			for _, el := range x.ContextElements.Elements {
				if tx, ok := el.(*slack.TextBlockObject); ok {
					b.WriteString(tx.Text + "\n")
				}
			}
		case *slack.ActionBlock:
			for _, el := range x.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok {
					b.WriteString("[" + btn.Text.Text + "]\n")
				}
			}
		}
	}
	return b.String()
}

// TestHomeTabFromTheMirror: opening the Home tab publishes the viewer's
// open tickets as agent and as requester from the mirror, within their
// scope, who is on call, and the quick actions, and asks the desk for no
// ticket; opening it again within the interval publishes nothing, after
// it publishes again.
func TestHomeTabFromTheMirror(t *testing.T) {
	m := fakedesk.OpenMirror(t)
	clock := &stepClock{now: mirrorNow}
	e := newAccessEnv(t, bot.WithMirror(m), bot.WithClock(clock.Now))
	e.fake.AddUser(slackfake.User{ID: "UCAROL", Name: "carol", Email: "carol@example.com"})
	mirrorSim(t, e.sim, m, 0, sdsim.DefaultWorkspaceID, store.MirrorState{Cursor: mirrorCursor, Complete: true, FullSyncAt: mirrorCursor})

	got := e.openHome(uMia)
	if len(got) != 1 || got[0].UserID != uMia {
		t.Fatalf("publishes %+v, want one for %s", got, uMia)
	}
	text := homeText(t, got[0])
	for _, want := range []string{"Your service desk", "[New ticket]", "[My queue]", "*Assigned to you* (1)", accessSubjects["mia"],
		"*Your requests* (0)", "Nothing open.", "From deskbot's mirror, as of 09:41:12 UTC"} {
		if !strings.Contains(text, want) {
			t.Errorf("Mia's home lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, accessSubjects["asa"]) {
		t.Errorf("Mia's home shows Asa's ticket:\n%s", text)
	}
	if reqs := ticketRequests(e.sim); len(reqs) != 0 {
		t.Errorf("the home read tickets at the desk: %v", reqs)
	}

	// A requester sees the tickets they asked for (the default workspace:
	// a requester has no workspaces of their own).
	text = homeText(t, e.openHome("UCAROL")[0])
	if !strings.Contains(text, "*Your requests* (4)") || strings.Contains(text, "Assigned to you") {
		t.Errorf("Carol's home:\n%s", text)
	}
	for _, k := range []string{"network", "hardware", "mia", "asa"} {
		if !strings.Contains(text, accessSubjects[k]) {
			t.Errorf("Carol's home lacks %s:\n%s", k, text)
		}
	}
	if reqs := ticketRequests(e.sim); len(reqs) != 0 {
		t.Errorf("the home read tickets at the desk: %v", reqs)
	}

	// Again within the interval: nothing rebuilt, nothing published.
	e.sim.Desk.ResetRequests()
	calls := len(e.fake.Calls())
	if got := e.openHome(uMia); len(got) != 0 {
		t.Errorf("opening again within the interval published %d views", len(got))
	}
	if n := len(e.sim.Desk.Requests()); n != 0 {
		t.Errorf("opening again within the interval sent the desk %d requests", n)
	}
	if extra := e.fake.Calls()[calls:]; len(extra) != 0 {
		t.Errorf("opening again within the interval called Slack: %+v", extra)
	}
	clock.Advance(bot.DefaultHomeInterval)
	got = e.openHome(uMia)
	if len(got) != 1 {
		t.Fatalf("after the interval: %d publishes, want 1", len(got))
	}
	if got[0].ID != publishes(e.fake)[0].ID {
		t.Errorf("the Home view changed id: %s then %s", publishes(e.fake)[0].ID, got[0].ID)
	}
	// The messages tab is not the home.
	env, err := e.fake.AppHomeOpened(e.ctx, uMia, "messages")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, e.ctx, e.slack)
	if n := len(publishes(e.fake)); n != 3 {
		t.Errorf("the messages tab published a home: %d publishes", n)
	}
}

// TestHomeTabFromTheDesk: without a mirror the lists are read from the
// desk, within the viewer's scope, and say so; a person the desk does not
// know and one without an e-mail are told why there is nothing.
func TestHomeTabFromTheDesk(t *testing.T) {
	due := mirrorNow.Add(8 * time.Hour)
	e := newAccessEnv(t, bot.WithHomeInterval(0), bot.WithOnCall(whoOnCall{st: []oncall.Status{{Schedule: "network", TimeZone: "UTC",
		Now: oncall.Shift{Member: "mia@example.com", End: due}, Next: oncall.Shift{Member: "asa@example.com", End: due.Add(time.Hour)}}}}))
	e.fake.AddUser(slackfake.User{ID: "UZED", Name: "zed", Email: "zed@example.com"})
	e.fake.AddUser(slackfake.User{ID: "UNOMAIL", Name: "nomail"})
	e.sim.Desk.ResetRequests()
	text := homeText(t, e.openHome(uAsa)[0])
	if !strings.Contains(text, "*Assigned to you* (1)") || !strings.Contains(text, accessSubjects["asa"]) || !strings.Contains(text, "Read from the desk") {
		t.Errorf("Asa's home:\n%s", text)
	}
	if !strings.Contains(text, "*On call now*\nnetwork: <@UMIA> until") || !strings.Contains(text, "then <@UASA> until") {
		t.Errorf("Asa's home does not say who is on call:\n%s", text)
	}
	reqs := ticketRequests(e.sim)
	if len(reqs) != 2 { // assigned and requested: one filter each
		t.Errorf("desk ticket requests %v, want 2 filters", reqs)
	}
	text = homeText(t, e.openHome("UZED")[0])
	if !strings.Contains(text, "The desk has no account for zed@example.com") || !strings.Contains(text, "[New ticket]") {
		t.Errorf("Zed's home:\n%s", text)
	}
	text = homeText(t, e.openHome("UNOMAIL")[0])
	if !strings.Contains(text, "no e-mail address") {
		t.Errorf("home of a user without e-mail:\n%s", text)
	}
}

// whoOnCall is an on-call with schedules only.
type whoOnCall struct {
	bot.OnCall // nil: the home asks only WhoIsOnCall
	st         []oncall.Status
}

func (w whoOnCall) WhoIsOnCall(time.Time) []oncall.Status { return w.st }

// TestHomeTabButtons: New ticket opens the new-ticket modal, whose
// submission opens a ticket; My queue opens a modal with the viewer's
// queue.
func TestHomeTabButtons(t *testing.T) {
	e := newAccessEnv(t)
	home := e.openHome(uMia)[0]
	press := func(action string) slackfake.View {
		t.Helper()
		before := len(e.fake.Views())
		env, err := e.fake.BlockAction(e.ctx, uMia, "", "", action, "", slackfake.WithViewID(home.ID))
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.fake.WaitView(e.ctx, func(v slackfake.View) bool {
			return v.Method == "views.open" && v.TriggerID == env.TriggerID
		})
		if err != nil {
			t.Fatalf("%s opened no modal: %v (views %d before)", action, err, before)
		}
		return v
	}
	v := press(chat.ActionHomeNewTicket)
	if v.CallbackID != slackchat.FormCallbackID {
		t.Fatalf("New ticket opened %q", v.CallbackID)
	}
	env, err := e.fake.ViewSubmission(e.ctx, uMia, slackchat.FormCallbackID, "",
		map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "Headset crackles"}}, slackfake.WithViewID(v.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool { return strings.Contains(m.Text, "Headset crackles") }); err != nil {
		t.Fatalf("no answer to the form: %v", err)
	}
	v = press(chat.ActionHomeMyQueue)
	if raw := string(v.Raw); !strings.Contains(raw, "My queue") || !strings.Contains(raw, "Your open tickets: 1") || !strings.Contains(raw, accessSubjects["mia"]) {
		t.Errorf("My queue modal: %s", raw)
	}
}

// TestHomeTabHugeQueue: an agent with thousands of open tickets of long
// subjects gets a valid Home view (the fake refuses one over Slack's
// limits) with the first tickets and a count of the rest.
func TestHomeTabHugeQueue(t *testing.T) {
	e := newAccessEnv(t)
	var mia int64
	for _, a := range e.sim.Desk.Agents() {
		if a.Email == "mia@example.com" {
			mia = a.ID
		}
	}
	long := strings.Repeat("<Very & long> subject ", 12)[:250]
	for range 3000 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: long, ResponderID: mia, Priority: 2})
	}
	got := e.openHome(uMia)
	if len(got) != 1 {
		t.Fatalf("%d publishes, calls %+v", len(got), e.fake.Calls()[len(e.fake.Calls())-1])
	}
	text := homeText(t, got[0])
	if !strings.Contains(text, "*Assigned to you* (3001)") || !strings.Contains(text, "… and 2986 more") {
		t.Errorf("home of a huge queue:\n%s", text)
	}
}

// TestHomeViewWithinSlackLimits renders homes far larger than the router
// builds and publishes them through slack-go to the fake, which refuses
// a view over Slack's limits.
func TestHomeViewWithinSlackLimits(t *testing.T) {
	fake := slackfake.New(slackfake.WithUsers(slackUsers()...))
	t.Cleanup(fake.Close)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	long := strings.Repeat("é<&>", 3000)
	var ts []chat.HomeTicket
	for i := range 10000 {
		ts = append(ts, chat.HomeTicket{ID: int64(i + 1), Subject: long, Status: long, Priority: "High", URL: fmt.Sprintf("https://desk.example.com/a/tickets/%d", i+1)})
	}
	h := chat.Home{Agent: true, Assigned: chat.HomeList{Tickets: ts, Total: 12000, Source: long},
		Requested: chat.HomeList{Tickets: ts, Total: 10000}, OnCall: long, OnCallMarkup: long,
		Actions: []chat.Button{{ActionID: chat.ActionHomeNewTicket, Label: "New ticket"}}, BuiltAt: mirrorNow}
	view := slackchat.HomeView(h)
	if n := len(view.Blocks.BlockSet); n > 100 {
		t.Fatalf("%d blocks", n)
	}
	if _, err := api.PublishView("UALICE", view, ""); err != nil {
		t.Fatalf("views.publish: %v", err)
	}
	v, ok := fake.HomeView("UALICE")
	if !ok {
		t.Fatal("no Home view published")
	}
	text := homeText(t, v)
	if !strings.Contains(text, "*Assigned to you* (12000)\n• <https://desk.example.com/a/tickets/1|#1>") || !strings.Contains(text, " more\n") {
		t.Fatalf("published: %s", tail(text))
	}
	// The fake refuses what Slack refuses.
	view.Blocks.BlockSet = slices.Repeat(view.Blocks.BlockSet[:1], 101)
	if _, err := api.PublishView("UALICE", view, ""); err == nil || err.Error() != slackfake.ErrInvalidArguments {
		t.Errorf("101 blocks: %v", err)
	}
	if _, err := api.PublishView("UNOSUCH", slackchat.HomeView(chat.Home{}), ""); err == nil || err.Error() != slackfake.ErrInvalidArguments {
		t.Errorf("unknown user: %v", err)
	}
	if _, err := api.PublishView("UALICE", slackchat.HomeView(chat.Home{}), "stale"); err == nil || err.Error() != slackfake.ErrHashConflict {
		t.Errorf("stale hash: %v", err)
	}
}

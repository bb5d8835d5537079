package slackchat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// The people of these tests besides alice and bob (agents, on the rota)
// and carol (on the rota, not an agent).
const (
	malloryID = "UMALLORY" // in the workspace, neither an agent nor on the rota
	erinID    = "UERIN"    // an agent of the desk, not on the rota
)

// addOutsiders adds mallory and erin to the workspace, erin also to the desk.
func (e *pageEnv) addOutsiders() {
	e.fake.AddUser(slackfake.User{ID: malloryID, Name: "mallory", Email: "mallory@example.com"})
	e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
	e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Erin", LastName: "Agent", Email: "erin@example.com"})
}

// clickRefused clicks a button of the last page card and returns the
// ephemeral answer to user; it fails when the click changed the card.
func (e *pageEnv) clickRefused(user, action string) slackfake.Message {
	e.t.Helper()
	card := e.lastCard()
	var value string
	for _, b := range chat.PageButtons(e.page()) {
		if b.ActionID == action {
			value = b.Value
		}
	}
	before := len(e.fake.Messages())
	env, err := e.fake.BlockAction(e.ctx, user, card.Channel, card.TS, action, value)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	var answer, changed *slackfake.Message
	err = e.fake.Wait(e.ctx, func() bool {
		// A click that changes the card updates it before answering.
		for _, m := range e.fake.Messages()[before:] {
			if m.TS == card.TS && m.Updated {
				changed = &m
				return true
			}
			if m.Method == "chat.postEphemeral" && m.User == user {
				answer = &m
				return true
			}
		}
		return false
	})
	switch {
	case err != nil:
		e.t.Fatalf("no answer to %s by %s: %v", action, user, err)
	case changed != nil:
		e.t.Fatalf("%s by %s changed the card: %s", action, user, unescaped(changed.Blocks))
	}
	return *answer
}

// page reads the page of the ticket's first episode.
func (e *pageEnv) page() oncall.Page {
	e.t.Helper()
	p, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
	if err != nil || !ok {
		e.t.Fatalf("page: %v %v", ok, err)
	}
	return p
}

// TestOnCallPageOutsiderRefused: someone in the workspace who is neither a
// desk agent nor on the policy's rota cannot acknowledge, escalate or
// /oncall ack a page: each gets a clear refusal, the card stays as it is
// and the page keeps escalating at its next step.
func TestOnCallPageOutsiderRefused(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.poll()
	card := e.lastCard()
	before := e.page()
	e.clk.Advance(2 * time.Minute)

	for _, tc := range []struct{ action, want string }{
		{chat.ActionPageAck, "only desk agents and the people on it-urgent's rota can acknowledge its pages; mallory@example.com is neither"},
		{chat.ActionPageEscalate, "only desk agents and the people on it-urgent's rota can escalate its pages; mallory@example.com is neither"},
		{chat.ActionPageTake, "only desk agents can use"},
	} {
		if m := e.clickRefused(malloryID, tc.action); !strings.Contains(m.Text, tc.want) {
			t.Errorf("%s by mallory answered %q, want %q", tc.action, m.Text, tc.want)
		}
	}
	r := e.slash(malloryID, "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if r.Text != outsiderAckRefusal("mallory@example.com") {
		t.Fatalf("/oncall ack by mallory = %q, want %q", r.Text, outsiderAckRefusal("mallory@example.com"))
	}
	if p := e.page(); p.Version != before.Version || p.Stopped() || p.Step != 1 {
		t.Fatalf("mallory changed the page: %+v", p)
	}
	if n := e.notes(); len(n) != 0 {
		t.Fatalf("notes after refusals: %q", n)
	}
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged %d times before level 1 ran out", n)
	}
	if got := e.lastCard(); got.TS != card.TS || got.Updated {
		t.Fatalf("the card changed: %+v", got)
	}

	// The page goes on: level 2 (bob) when level 1's 10 minutes are up.
	e.tick(8 * time.Minute)
	if dm := e.dms("UBOB"); len(dm) != 1 || has(dm[0], "level 2 of it-urgent") != nil {
		t.Fatalf("bob's DMs after 10 minutes: %+v", dm)
	}
	if err := has(e.lastCard(), "<@UBOB> you are paged (level 2 of it-urgent)", chat.ActionPageAck); err != nil {
		t.Fatal(err)
	}
}

// TestOnCallPageRotaMemberNotAgent: carol is on the rota but not a desk
// agent: she may escalate and acknowledge the page, but not take the
// ticket (that assigns it, which needs an agent).
func TestOnCallPageRotaMemberNotAgent(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	e.clk.Advance(time.Minute)
	if m := e.clickRefused("UCAROL", chat.ActionPageTake); !strings.Contains(m.Text, "only desk agents can use") {
		t.Fatalf("Take it by carol answered %q", m.Text)
	}
	up := e.clickPage("UCAROL", chat.ActionPageEscalate)
	if err := has(up, "12:01 UTC · <@UCAROL> escalated now", "<@UBOB> you are paged (level 2 of it-urgent)"); err != nil {
		t.Fatal(err)
	}
	// The click is over when carol has its answer (after the card's last
	// redraw).
	if _, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postEphemeral" && m.User == "UCAROL" && strings.Contains(m.Text, "Escalated the page")
	}); err != nil {
		t.Fatalf("no answer to Escalate now: %v", err)
	}
	e.clk.Advance(time.Minute)
	acked := e.clickPage("UCAROL", chat.ActionPageAck)
	if err := has(acked, "<@UCAROL> acknowledged at 12:02 UTC"); err != nil {
		t.Fatal(err)
	}
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "On-call page acknowledged by carol@example.com at 2026-03-02 12:02:00 UTC") {
		t.Fatalf("notes %q", n)
	}
	e.tick(30 * time.Minute)
	if err := has(e.lastCard(), "<@UCAROL> acknowledged at 12:02 UTC"); err != nil {
		t.Fatalf("the page went on after carol's acknowledgement: %v", err)
	}
}

// TestOnCallPageAgentOffRota: erin is a desk agent who is not on the
// rota: agents may acknowledge any page.
func TestOnCallPageAgentOffRota(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.poll()
	e.clk.Advance(3 * time.Minute)
	acked := e.clickPage(erinID, chat.ActionPageAck)
	if err := has(acked, "<@UERIN> acknowledged at 12:03 UTC"); err != nil {
		t.Fatal(err)
	}
	if p := e.page(); p.AckedBy != "erin@example.com" {
		t.Fatalf("stored page %+v", p)
	}
	e.tick(30 * time.Minute)
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged %d times after erin's acknowledgement", n)
	}
}

// twoPolicyRules pages two policies for the same ticket: carol is on
// it-urgent's rota only.
const twoPolicyRules = `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - name: it-primary
      time_zone: Europe/Zurich
      rotation: 1d
      handoff: "09:00"
      start: 2026-03-02
      members: [alice@example.com, carol@example.com]
  policies:
    - name: it-urgent
      levels:
        - {schedule: it-primary, after: 10m}
    - name: net-urgent
      levels:
        - {user: bob@example.com, after: 10m}
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - page: {policy: it-urgent, text: "Urgent #{{ ticket.id }}"}
  - name: page-net
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - page: {policy: net-urgent, text: "Network #{{ ticket.id }}"}
`

// TestOnCallAckCommandOnlyPermittedPages: /oncall ack N acknowledges the
// pages the caller may acknowledge and says why it left the others.
func TestOnCallAckCommandOnlyPermittedPages(t *testing.T) {
	e := newPageEnvRules(t, twoPolicyRules)
	e.poll()
	r := e.slash("UCAROL", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	for _, want := range []string{
		fmt.Sprintf("Acknowledged the page of ticket #%d (it-urgent)", e.ticket),
		"Not acknowledged: only desk agents and the people on net-urgent's rota can acknowledge its pages; carol@example.com is neither.",
	} {
		if !strings.Contains(r.Text, want) {
			t.Fatalf("/oncall ack by carol = %q, want %q", r.Text, want)
		}
	}
	it := e.page()
	net, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-net", e.ticket, 1))
	if err != nil || !ok {
		t.Fatalf("net page: %v %v", ok, err)
	}
	if it.AckedBy != "carol@example.com" || net.Stopped() {
		t.Fatalf("it-urgent page %+v, net-urgent page %+v", it, net)
	}
	// bob is on net-urgent (and an agent): his ack takes the rest.
	r = e.slash("UBOB", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if !strings.Contains(r.Text, fmt.Sprintf("Acknowledged the page of ticket #%d (net-urgent)", e.ticket)) || strings.Contains(r.Text, "Not acknowledged") {
		t.Fatalf("/oncall ack by bob = %q", r.Text)
	}
}

// TestOnCallPageGroupMemberMayAck: grace is neither a desk agent nor on a
// schedule, but a member of the Slack user group of the policy's third
// level: she is one of the page's people and may acknowledge it. Mallory,
// in the workspace but not in the group, still may not.
func TestOnCallPageGroupMemberMayAck(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.fake.AddUser(slackfake.User{ID: "UGRACE", Name: "grace", Email: "grace@example.com"})
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0GROUP", Handle: "netops", Name: "Network ops", Users: []string{"UGRACE"}})
	e.poll()
	e.clk.Advance(time.Minute)
	if m := e.clickRefused(malloryID, chat.ActionPageAck); !strings.Contains(m.Text, "mallory@example.com is neither") {
		t.Fatalf("Acknowledge by mallory answered %q", m.Text)
	}
	up := e.clickPage("UGRACE", chat.ActionPageAck)
	if err := has(up, "<@UGRACE> acknowledged"); err != nil {
		t.Fatal(err)
	}
	if p := e.page(); !p.Acked() || p.AckedBy != "grace@example.com" {
		t.Fatalf("page after grace's click: %+v", p)
	}
}

// outsiderAckRefusal is the answer to /oncall ack N by someone who is
// neither a desk agent nor on the rota of a page of ticket N, whatever
// the pages of N.
func outsiderAckRefusal(email string) string {
	return "only desk agents and the people on the rota of a ticket's page can use /oncall ack; " + email +
		" is neither. You can open a ticket with /ticket new subject"
}

// TestOnCallAckTellsOutsidersNothing: /oncall ack N by someone who is
// neither a desk agent nor one of the page's people (mallory, unknown to
// the desk; dora, the ticket's requester) gets the same refusal whether
// the ticket has no page, a page escalating, or a page acknowledged: it
// used to say which policy paged, and who acknowledged and when.
func TestOnCallAckTellsOutsidersNothing(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.fake.AddUser(slackfake.User{ID: "UDORA", Name: "dora", Email: "dora@example.com"})
	quiet := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mouse squeaks", Priority: 1})
	e.poll()
	e.clk.Advance(2 * time.Minute)
	states := []struct {
		name   string
		before func()
	}{
		{"escalating", func() {}},
		{"acknowledged", func() {
			if r := e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket)); !strings.Contains(r.Text, "Acknowledged the page") {
				t.Fatalf("/oncall ack by alice = %q", r.Text)
			}
		}},
	}
	for _, st := range states {
		st.before()
		for _, who := range []struct{ id, email string }{{malloryID, "mallory@example.com"}, {"UDORA", "dora@example.com"}} {
			for _, id := range []int64{e.ticket, quiet.ID} {
				r := e.slash(who.id, "/oncall", fmt.Sprintf("ack %d", id))
				if r.Text != outsiderAckRefusal(who.email) {
					t.Errorf("%s: /oncall ack %d by %s = %q, want %q", st.name, id, who.email, r.Text, outsiderAckRefusal(who.email))
				}
			}
		}
	}
	if p := e.page(); p.AckedBy != "alice@example.com" {
		t.Fatalf("page %+v", p)
	}
}

// TestOnCallPageAgentScope: a desk agent who is not on the page's rota may
// acknowledge or escalate it (the Acknowledge and Escalate now buttons,
// /oncall ack N) only when the ticket is within their access, by the rules
// of /ticket show; otherwise they get its refusal, which names neither
// the ticket's subject nor who acknowledged, and the page goes on. Being
// on the rota is enough, whatever one's access.
func TestOnCallPageAgentScope(t *testing.T) {
	tests := []struct {
		name   string
		agent  sdsim.Agent
		onRota bool
		reason string // "" when allowed
	}{
		{"agent of another workspace", sdsim.Agent{WorkspaceIDs: []int64{3},
			Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeEntire}}}, false, "it is outside your workspaces"},
		{"assigned_items agent", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}}, false, "it is not assigned to you"},
		{"member_groups agent, ticket of no group", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeMember}}}, false, "it is not assigned to you"},
		{"entire_helpdesk agent", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeEntire}}}, false, ""},
		{"assigned_items agent on the rota", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rulesYAML := pageRulesYAML
			if tt.onRota {
				rulesYAML = strings.Replace(rulesYAML, "members: [alice@example.com, carol@example.com]", "members: [alice@example.com, carol@example.com, erin@example.com]", 1)
			}
			e := newPageEnvRules(t, rulesYAML)
			e.sim.Desk.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
			tt.agent.FirstName, tt.agent.Email = "Erin", "erin@example.com"
			e.sim.Desk.AddAgent(tt.agent)
			e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
			e.poll()
			e.clk.Advance(time.Minute)
			if tt.reason == "" {
				if err := has(e.clickPage(erinID, chat.ActionPageAck), "<@UERIN> acknowledged at 12:01 UTC"); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := fmt.Sprintf("you cannot act on ticket #%d: %s", e.ticket, tt.reason)
			for _, action := range []string{chat.ActionPageAck, chat.ActionPageEscalate} {
				if m := e.clickRefused(erinID, action); m.Text != want {
					t.Errorf("%s by erin answered %q, want %q", action, m.Text, want)
				}
			}
			if r := e.slash(erinID, "/oncall", fmt.Sprintf("ack %d", e.ticket)); r.Text != want {
				t.Errorf("/oncall ack by erin = %q, want %q", r.Text, want)
			}
			if p := e.page(); p.Stopped() || p.Level != 0 {
				t.Fatalf("erin changed the page: %+v", p)
			}
			if n := e.notes(); len(n) != 0 {
				t.Fatalf("notes after refusals: %q", n)
			}
			// Once alice acknowledged, erin is not told who did.
			e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket))
			if r := e.slash(erinID, "/oncall", fmt.Sprintf("ack %d", e.ticket)); r.Text != want {
				t.Errorf("/oncall ack by erin after alice's = %q, want %q", r.Text, want)
			}
		})
	}
}

package slackchat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// accessEnv is a desk simulator with an IT (2) and an HR (3) workspace,
// the groups Network and Hardware, agents of every assignment scope with
// Slack users of their own, and tickets in both workspaces, behind the
// real slack-go client on slackfake.
type accessEnv struct {
	*e2e
	sim     *sdsim.Server
	tickets map[string]int64
}

// The people of accessEnv: Slack user id -> desk agent.
const (
	uWanda = "UWANDA" // IT workspace only, entire_helpdesk
	uEve   = "UEVE"   // IT and HR, entire_helpdesk
	uMia   = "UMIA"   // IT, member_groups, member of Network
	uAsa   = "UASA"   // IT, assigned_items
	uSpec  = "USPEC"  // IT, specified_groups naming Hardware
)

// Subjects of accessEnv's tickets; a refusal must not show them.
var accessSubjects = map[string]string{
	"hr":       "Payroll error for J. Doe",
	"network":  "Switch port dead",
	"hardware": "Laptop screen cracked",
	"mia":      "Docking station for Mia",
	"asa":      "Monitor for Asa",
}

func newAccessEnv(t *testing.T, ropts ...bot.Option) *accessEnv {
	t.Helper()
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	d := sim.Desk
	hr := d.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
	it := []int64{sdsim.DefaultWorkspaceID}
	role := func(scope string, groups ...int64) []sdsim.AgentRole {
		return []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scope, Groups: append([]int64{}, groups...)}}
	}
	d.AddAgent(sdsim.Agent{FirstName: "Wanda", Email: "wanda@example.com", WorkspaceIDs: it, Roles: role(scopeEntire)})
	d.AddAgent(sdsim.Agent{FirstName: "Eve", Email: "eve@example.com", WorkspaceIDs: []int64{sdsim.DefaultWorkspaceID, hr.ID}, Roles: role(scopeEntire)})
	mia := d.AddAgent(sdsim.Agent{FirstName: "Mia", Email: "mia@example.com", WorkspaceIDs: it, Roles: role(scopeMember)})
	asa := d.AddAgent(sdsim.Agent{FirstName: "Asa", Email: "asa@example.com", WorkspaceIDs: it, Roles: role(scopeAssigned)})
	network := d.AddGroup(sdsim.Group{Name: "Network", Members: []int64{mia.ID}})
	hardware := d.AddGroup(sdsim.Group{Name: "Hardware"})
	d.AddAgent(sdsim.Agent{FirstName: "Spec", Email: "spec@example.com", WorkspaceIDs: it, Roles: role(scopeSpecified, hardware.ID)})
	carol := d.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	ids := map[string]int64{}
	add := func(name string, tk sdsim.Ticket) {
		tk.Subject, tk.RequesterID, tk.Priority = accessSubjects[name], carol.ID, 3
		ids[name] = d.AddTicket(tk).ID
	}
	add("hr", sdsim.Ticket{WorkspaceID: hr.ID})
	add("network", sdsim.Ticket{GroupID: network.ID})
	add("hardware", sdsim.Ticket{GroupID: hardware.ID})
	add("mia", sdsim.Ticket{GroupID: hardware.ID, ResponderID: mia.ID})
	add("asa", sdsim.Ticket{GroupID: network.ID, ResponderID: asa.ID})
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	e := &accessEnv{e2e: newE2E(t, bot.NewDeskAdapter(c), ropts), sim: sim, tickets: ids}
	for _, u := range []string{"wanda", "eve", "mia", "asa", "spec"} {
		e.fake.AddUser(slackfake.User{ID: "U" + strings.ToUpper(u), Name: u, Email: u + "@example.com"})
	}
	return e
}

// deskState is what a command could change on a ticket.
func (e *accessEnv) deskState(id int64) string {
	tk, _ := e.sim.Desk.Ticket(id)
	return fmt.Sprintf("status %d priority %d responder %d conversations %d", tk.Status, tk.Priority, tk.ResponderID, len(e.sim.Desk.Conversations(id)))
}

// accessCase is one caller on one ticket.
type accessCase struct {
	name   string
	user   string
	ticket string // key of accessEnv.tickets
	reason string // "" when allowed
}

var accessCases = []accessCase{
	{"workspace-2 agent on a workspace-3 ticket", uWanda, "hr", "it is outside your workspaces"},
	{"workspace-2 agent on a workspace-2 ticket", uWanda, "hardware", ""},
	{"entire_helpdesk agent of both workspaces on the HR ticket", uEve, "hr", ""},
	{"member_groups agent on their group's ticket", uMia, "network", ""},
	{"member_groups agent on a ticket assigned to them", uMia, "mia", ""},
	{"member_groups agent on another group's ticket", uMia, "hardware", "it is outside your groups and not assigned to you"},
	{"member_groups agent outside their workspaces", uMia, "hr", "it is outside your workspaces"},
	{"assigned_items agent on their ticket", uAsa, "asa", ""},
	{"assigned_items agent on a ticket of their group's kind", uAsa, "network", "it is not assigned to you"},
	{"specified_groups agent on the role's group", uSpec, "hardware", ""},
	{"specified_groups agent on another group", uSpec, "network", "it is outside your groups and not assigned to you"},
}

// TestAccessCommands runs every ticket command as each caller: a caller
// outside the ticket's workspaces or scope gets a refusal naming the rule
// and not the subject, and the desk is left as it was; others act.
func TestAccessCommands(t *testing.T) {
	commands := []struct {
		slash, text, ok string // text and ok: N is the ticket id
	}{
		{"/ticket", "show N", "#N "},
		{"/ticket", "why N", "no rules loaded"},
		{"/ticket", "note N checked the cable", "Added a private note to ticket #N."},
		{"/ticket", "reply N on our way", "Replied on ticket #N"},
		{"/ticket", "priority N urgent", "Ticket #N priority is now Urgent."},
		{"/ticket", "status N pending", "Ticket #N is now Pending."},
		{"/ticket", "resolve N", "Ticket #N is now Resolved."},
		{"/ticket", "close N", "Ticket #N is now Closed."},
		{"/assign", "N me", "Ticket #N is assigned to"},
	}
	for _, tc := range accessCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newAccessEnv(t)
			id := e.tickets[tc.ticket]
			n := func(s string) string { return strings.ReplaceAll(s, "N", itoa(id)) }
			for _, cmd := range commands {
				before := e.deskState(id)
				r := e.slash(tc.user, cmd.slash, n(cmd.text))
				got := all(r)
				if tc.reason == "" {
					if !strings.Contains(got, n(cmd.ok)) {
						t.Errorf("%s %s: %q, want %q", cmd.slash, n(cmd.text), r.Text, n(cmd.ok))
					}
					continue
				}
				want := fmt.Sprintf("you cannot act on ticket #%d: %s", id, tc.reason)
				if r.Text != want {
					t.Errorf("%s %s: %q, want %q", cmd.slash, n(cmd.text), r.Text, want)
				}
				if strings.Contains(got, accessSubjects[tc.ticket]) {
					t.Errorf("%s %s: the refusal shows the subject: %s", cmd.slash, n(cmd.text), got)
				}
				if after := e.deskState(id); after != before {
					t.Errorf("%s %s changed the ticket: %s -> %s", cmd.slash, n(cmd.text), before, after)
				}
			}
		})
	}
}

// clickAnswer clicks a button of message m as user and returns the
// ephemeral answer (a refusal) or the card's update.
func (e *accessEnv) clickAnswer(user string, m slackfake.Message, action string, id int64, key string) (refusal string, update *slackfake.Message) {
	e.t.Helper()
	before := len(e.fake.Messages())
	env, err := e.fake.BlockAction(e.ctx, user, m.Channel, m.TS, action, chat.ButtonValue(id, "page-urgent", key))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	err = e.fake.Wait(e.ctx, func() bool {
		for _, u := range e.fake.Messages()[before:] {
			if u.Method == "chat.update" && u.TS == m.TS {
				update = &u
				return true
			}
			if u.Method == "chat.postEphemeral" && u.User == user {
				refusal = u.Text
				return true
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("no answer to %s by %s: %v", action, user, err)
	}
	return refusal, update
}

// TestAccessAlertButtons clicks Assign to me, Acknowledge and Resolve on
// an alert card as each caller.
func TestAccessAlertButtons(t *testing.T) {
	for _, tc := range accessCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newAccessEnv(t)
			id := e.tickets[tc.ticket]
			for i, action := range []string{chat.ActionAssignMe, chat.ActionAcknowledge, chat.ActionResolve} {
				key := fmt.Sprintf("page-urgent/%d/%d", id, i)
				m := e.alert(key, id)
				before := e.deskState(id)
				refusal, up := e.clickAnswer(tc.user, m, action, id, key)
				if tc.reason == "" {
					if up == nil {
						t.Errorf("%s refused: %q", action, refusal)
					}
					continue
				}
				want := fmt.Sprintf("you cannot act on ticket #%d: %s", id, tc.reason)
				if up != nil || !strings.Contains(refusal, want) {
					t.Errorf("%s: answer %q, update %v; want %q", action, refusal, up != nil, want)
				}
				if strings.Contains(refusal, accessSubjects[tc.ticket]) {
					t.Errorf("%s: the refusal shows the subject: %q", action, refusal)
				}
				if after := e.deskState(id); after != before {
					t.Errorf("%s changed the ticket: %s -> %s", action, before, after)
				}
				if acks := e.acks.list(); len(acks) != 0 {
					t.Errorf("%s recorded an acknowledgement: %v", action, acks)
				}
			}
		})
	}
}

// TestAccessListsFiltered: search, mine and unassigned show only the
// tickets the caller may act on, and count only those.
func TestAccessListsFiltered(t *testing.T) {
	e := newAccessEnv(t)
	tests := []struct {
		user, text string
		want       []string // ticket keys shown
	}{
		{uEve, "search priority:3", []string{"hr", "network", "hardware", "mia", "asa"}},
		{uWanda, "search priority:3", []string{"network", "hardware", "mia", "asa"}},
		{uMia, "search priority:3", []string{"network", "mia", "asa"}},
		{uMia, "unassigned", []string{"network"}},
		{uMia, "mine", []string{"mia"}},
		{uAsa, "search priority:3", []string{"asa"}},
		{uAsa, "unassigned", nil},
		{uSpec, "search priority:3", []string{"hardware", "mia"}},
	}
	for _, tt := range tests {
		t.Run(tt.user+" "+tt.text, func(t *testing.T) {
			got := all(e.slash(tt.user, "/ticket", tt.text))
			var shown []string
			for name, s := range accessSubjects {
				if strings.Contains(got, s) {
					shown = append(shown, name)
				}
			}
			want := slices.Clone(tt.want)
			slices.Sort(shown)
			slices.Sort(want)
			if !slices.Equal(shown, want) {
				t.Fatalf("shown %v, want %v:\n%s", shown, want, got)
			}
			if count := fmt.Sprintf(": %d", len(want)); !strings.Contains(got, count) {
				t.Fatalf("count is not %d:\n%s", len(want), got)
			}
		})
	}
}

// TestAccessPageTakeIt: the page card's Take it assigns the ticket only to
// an agent who may act on it; the others are refused, the ticket stays
// unassigned and the page keeps escalating.
func TestAccessPageTakeIt(t *testing.T) {
	tests := []struct {
		name   string
		agent  sdsim.Agent
		reason string
	}{
		{"agent of another workspace", sdsim.Agent{WorkspaceIDs: []int64{3},
			Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeEntire}}}, "it is outside your workspaces"},
		{"assigned_items agent", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}}, "it is not assigned to you"},
		{"member_groups agent, ticket of no group", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeMember}}}, "it is not assigned to you"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPageEnv(t)
			e.sim.Desk.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
			tt.agent.FirstName, tt.agent.Email = "Erin", "erin@example.com"
			e.sim.Desk.AddAgent(tt.agent)
			e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
			e.poll()
			m := e.clickRefused(erinID, chat.ActionPageTake)
			want := fmt.Sprintf("you cannot act on ticket #%d: %s", e.ticket, tt.reason)
			if !strings.Contains(m.Text, want) || strings.Contains(m.Text, "Core switch down") {
				t.Fatalf("answer %q, want %q", m.Text, want)
			}
			if tk, _ := e.sim.Desk.Ticket(e.ticket); tk.ResponderID != 0 {
				t.Fatalf("ticket assigned to %d", tk.ResponderID)
			}
			if p := e.page(); p.Stopped() {
				t.Fatalf("the page stopped: %+v", p)
			}
		})
	}
}

// TestAccessOneTicketRead: the check costs at most one ticket read per
// command or click, and the answer (the card of show, the re-rendered
// alert card) is drawn from that read.
func TestAccessOneTicketRead(t *testing.T) {
	h := newE2E(t, nil, nil)
	for _, cmd := range []struct {
		slash, text string
		brief       bool // read without embeds: 1 credit instead of 3
	}{
		{"/ticket", "show 42", false}, {"/ticket", "note 42 hi", true}, {"/ticket", "reply 42 hi", true},
		{"/ticket", "priority 42 high", true}, {"/ticket", "status 42 pending", true}, {"/assign", "42 me", true},
		{"/ticket", "resolve 42", true}, {"/ticket", "close 42", true}, {"/ticket", "why 42", true},
	} {
		before, briefBefore := h.fdesk.Count("ticket"), h.fdesk.Count("ticket brief")
		r := h.slash("UALICE", cmd.slash, cmd.text)
		if n := h.fdesk.Count("ticket") - before; n != 1 {
			t.Errorf("%s %s read the ticket %d times (%q)", cmd.slash, cmd.text, n, r.Text)
		}
		if brief := h.fdesk.Count("ticket brief") > briefBefore; brief != cmd.brief {
			t.Errorf("%s %s: brief read %v, want %v", cmd.slash, cmd.text, brief, cmd.brief)
		}
	}
	h.fdesk.Mu.Lock()
	h.fdesk.Tickets[42].Status = sdclient.StatusOpen
	h.fdesk.Mu.Unlock()
	m := h.alert("k/42/1", 42)
	for _, action := range []string{chat.ActionAssignMe, chat.ActionAcknowledge, chat.ActionResolve} {
		before, briefBefore := h.fdesk.Count("ticket"), h.fdesk.Count("ticket brief")
		m = h.click("UBOB", m, action)
		if h.fdesk.Count("ticket brief") != briefBefore {
			t.Errorf("%s read the ticket without the embeds its card shows", action)
		}
		if n := h.fdesk.Count("ticket") - before; n != 1 {
			t.Errorf("%s read the ticket %d times", action, n)
		}
		if action == chat.ActionAcknowledge && (!strings.Contains(string(m.Blocks), "private note: Alert acknowledged in chat by Bob Builder.") ||
			!strings.Contains(string(m.Blocks), "Carol Requester")) {
			t.Errorf("the acknowledged card lacks the note or the requester: %s", m.Blocks)
		}
	}
}

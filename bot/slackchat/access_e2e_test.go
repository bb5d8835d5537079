package slackchat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jonboulle/clockwork"
	"github.com/slack-go/slack"
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
	before := e.press(user, m, action, chat.ButtonValue(id, "page-urgent", key))
	err := e.fake.Wait(e.ctx, func() bool {
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
				key := fmt.Sprintf("deskbot:f=page-urgent/%d/%d.1/0", id, i)
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
	m := h.alert("deskbot:f=page-urgent/42/1.1/0", 42)
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

// scopeEnv is a desk simulator with Freshservice-sized ids (11 digits),
// an agent, Gus, of member_groups scope in so many groups that a search
// narrowed to his scope is longer than the desk's 512 characters, and
// tickets of priority 3 inside and outside his scope, the outside ones
// the newest (first in the desk's order), behind the real client and
// slack-go on slackfake.
type scopeEnv struct {
	*e2e
	sim     *sdsim.Server
	gus     int64
	groups  []int64 // Gus's
	visible []int64 // the priority-3 tickets Gus may see
}

// The ids of scopeEnv.
const (
	scopeGroupBase = 21000000001 // Gus's groups: 30 from here
	scopeOtherGrp  = 21000000900 // not Gus's
	scopeGusID     = 21000005001
	scopeOtherID   = 21000005002 // another agent
	uGus           = "UGUS"
)

func newScopeEnv(t *testing.T, opts ...sdsim.Option) *scopeEnv {
	t.Helper()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	sim := sdsim.NewServer(append([]sdsim.Option{sdsim.WithClock(func() time.Time { return t0.Add(time.Hour) })}, opts...)...)
	t.Cleanup(sim.Close)
	d := sim.Desk
	member := []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeMember}}
	d.AddAgent(sdsim.Agent{ID: scopeGusID, FirstName: "Gus", Email: "gus@example.com", Roles: member})
	d.AddAgent(sdsim.Agent{ID: scopeOtherID, FirstName: "Olaf", Email: "olaf@example.com", Roles: member})
	e := &scopeEnv{sim: sim, gus: scopeGusID}
	for i := range 30 {
		g := d.AddGroup(sdsim.Group{ID: scopeGroupBase + int64(i), Name: fmt.Sprintf("Site %d", i), Members: []int64{scopeGusID}})
		e.groups = append(e.groups, g.ID)
	}
	d.AddGroup(sdsim.Group{ID: scopeOtherGrp, Name: "Elsewhere", Members: []int64{scopeOtherID}})
	req := d.AddRequester(sdsim.Requester{FirstName: "Dora", PrimaryEmail: "dora@example.com"})
	at := t0
	add := func(subject string, group, responder int64, visible bool) {
		at = at.Add(time.Minute) // later tickets come first in the desk's order
		tk := d.AddTicket(sdsim.Ticket{Subject: subject, Priority: 3, RequesterID: req.ID, GroupID: group, ResponderID: responder, CreatedAt: at})
		if visible {
			e.visible = append(e.visible, tk.ID)
		}
	}
	add("in his first group", e.groups[0], 0, true)
	add("in his middle group", e.groups[15], 0, true)
	add("in his last group", e.groups[29], 0, true)
	add("his, in his first group", e.groups[0], scopeGusID, true) // both mine and a group's
	add("his, in no group", 0, scopeGusID, true)
	add("his, in another group", scopeOtherGrp, scopeGusID, true)
	for i := range 15 {
		add(fmt.Sprintf("elsewhere %d", i), scopeOtherGrp, scopeOtherID, false)
	}
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	e.e2e = newE2E(t, bot.NewDeskAdapter(c), nil)
	e.fake.AddUser(slackfake.User{ID: uGus, Name: "gus", Email: "gus@example.com"})
	return e
}

// sentQueries returns the filter queries the desk was sent.
func (e *scopeEnv) sentQueries() []string {
	var out []string
	for _, r := range e.sim.Desk.Requests() {
		if r.Path != "/api/v2/tickets/filter" {
			continue
		}
		v, err := url.ParseQuery(r.RawQuery)
		if err != nil {
			e.t.Fatalf("request %s?%s: %v", r.Path, r.RawQuery, err)
		}
		out = append(out, strings.Trim(v.Get("query"), `"`))
	}
	return out
}

// withinScope reports whether every ticket query q can match is one Gus may
// see: it is evaluated on every combination of group and responder the
// desk holds.
func (e *scopeEnv) withinScope(q string) error {
	x, err := filter.Parse(q)
	if err != nil {
		return err
	}
	groups := append([]int64{0, scopeOtherGrp}, e.groups...)
	for _, g := range groups {
		for _, a := range []int64{0, scopeGusID, scopeOtherID} {
			rec := filter.Values{"priority": {filter.Number(3)}, "status": {filter.Number(2)}}
			if g != 0 {
				rec["group_id"] = []filter.Value{filter.Number(g)}
			}
			if a != 0 {
				rec["agent_id"] = []filter.Value{filter.Number(a)}
			}
			if x.Eval(rec) && a != scopeGusID && !slices.Contains(e.groups, g) {
				return fmt.Errorf("%s matches a ticket of group %d, agent %d, outside Gus's scope", q, g, a)
			}
		}
	}
	return nil
}

// TestSearchScopeTooLongForOneQuery: Gus's scope does not fit in one query
// with his search. The bot used to send the search un-narrowed and answer
// with the desk's count of it, which told him how many tickets outside his
// scope match. Now every query sent is within his scope, and the answer
// lists and counts exactly the tickets he may see, each once.
func TestSearchScopeTooLongForOneQuery(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pageSize int // the desk's filter page; 0: the default
	}{
		{"his tickets on one page", 0},
		{"his tickets on several pages", 2}, // what his tickets share with his groups is asked of the desk
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []sdsim.Option
			if tc.pageSize > 0 {
				opts = append(opts, sdsim.WithFilterPageSize(tc.pageSize))
			}
			e := newScopeEnv(t, opts...)
			if whole := scopedWhole(t, "priority:3", e.gus, e.groups); len(whole) <= maxQuery {
				t.Fatalf("the scope fits in one query (%d characters): the test needs more groups", len(whole))
			}
			r := e.slash(uGus, "/ticket", "search priority:3")
			got := all(r)
			if want := fmt.Sprintf("Tickets matching priority:3: %d", len(e.visible)); !strings.Contains(got, want) {
				t.Fatalf("answer lacks %q:\n%s", want, got)
			}
			if strings.Contains(got, "elsewhere") {
				t.Fatalf("the answer shows a ticket outside Gus's scope:\n%s", got)
			}
			// The tickets shown are his, each once, in the desk's order:
			// all of them, or (on small pages) the first of them.
			var shown []int64
			for _, m := range regexp.MustCompile(`• #(\d+) `).FindAllStringSubmatch(string(r.Blocks), -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				shown = append(shown, id)
			}
			want := slices.Clone(e.visible)
			slices.Reverse(want) // the newest first
			if tc.pageSize == 0 && !slices.Equal(shown, want) || len(shown) == 0 || !slices.Equal(shown, want[:min(len(shown), len(want))]) {
				t.Errorf("shown %v, want %v or its start:\n%s", shown, want, got)
			}
			sent := e.sentQueries()
			if len(sent) < 2 {
				t.Fatalf("sent %q: want the search split", sent)
			}
			for _, q := range sent {
				if len(q) > maxQuery {
					t.Errorf("sent a query of %d characters: %s", len(q), q)
				}
				if err := e.withinScope(q); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// searchOfLen is a search of n characters (n >= 40) in canonical form.
func searchOfLen(n int) string {
	s := "priority:3 AND (" + strings.Repeat("tag:'printer on fire!' OR ", (n-40)/26)
	return s + "tag:'" + strings.Repeat("x", n-len(s)-7) + "')"
}

// TestSearchScopeRefusals: when not even one part of the scope fits with
// the search, or the split would take too many searches, the bot refuses
// and says why, without asking the desk.
func TestSearchScopeRefusals(t *testing.T) {
	e := newScopeEnv(t)
	long := searchOfLen(480)
	if len(long) > maxQuery || len(long)+len(" AND agent_id:21000005001 AND group_id:21000000001") <= maxQuery {
		t.Fatalf("the search is %d characters: the test needs one that fits alone but not with one group", len(long))
	}
	r := e.slash(uGus, "/ticket", "search "+long)
	if want := "your search plus your access scope is longer than the desk accepts ("; !strings.HasPrefix(r.Text, want) ||
		!strings.HasSuffix(r.Text, " characters, at most 512); shorten your search") {
		t.Fatalf("answer %q, want %q...", r.Text, want)
	}
	// Three groups a query: 30 groups would take 11 searches.
	mid := searchOfLen(400)
	if n := len(mid) + len(" AND agent_id:21000005001 AND (group_id:21000000001 OR group_id:21000000002 OR group_id:21000000003)"); n > maxQuery || n+len(" OR group_id:21000000004") <= maxQuery {
		t.Fatalf("the search is %d characters: the test needs one that fits with three groups, not four", len(mid))
	}
	r = e.slash(uGus, "/ticket", "search "+mid)
	if want := "your search plus your access scope (30 groups) would take"; !strings.HasPrefix(r.Text, want) ||
		!strings.HasSuffix(r.Text, "searches at the desk, more than the 10 deskbot sends for one command; shorten your search") {
		t.Fatalf("answer %q, want %q...", r.Text, want)
	}
	if sent := e.sentQueries(); len(sent) != 0 {
		t.Fatalf("refused searches sent %q", sent)
	}
}

// Issue 17, 6: /assign list [words] (and /ticket agents [words]) shows
// whom /assign can name: active agents by name and e-mail, and groups.
// maxAgentsShown is how many agents one answer lists (bot/commands.go).
const maxAgentsShown = 15

func TestAssignListAgents(t *testing.T) {
	sim, desk, _ := simDesk(t)
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Gone", LastName: "Away", Email: "gone@example.com", Occasional: true})
	for i := range 20 {
		sim.Desk.AddAgent(sdsim.Agent{FirstName: "Temp", LastName: fmt.Sprintf("Worker%02d", i), Email: fmt.Sprintf("temp%02d@example.com", i)})
	}
	sim.Desk.AddGroup(sdsim.Group{Name: "Hardware"})
	sim.Desk.AddGroup(sdsim.Group{Name: "Network"})
	r := routertest.New(t, desk)

	bob := routertest.Handle(r, "UALICE", "/assign", "list bob")
	if bob.Failed || bob.Card == nil {
		t.Fatalf("/assign list bob: %+v", bob)
	}
	if got := bob.Card.Text(); bob.Card.Title != "Agents to assign to matching bob: 1" || !strings.Contains(got, "• Bob Builder — bob@example.com") ||
		!strings.Contains(got, "assign with /assign N e-mail, /assign N @person or /assign N me") {
		t.Errorf("/assign list bob:\n%s", got)
	}
	if same := routertest.Handle(r, "UALICE", "/ticket", "agents BOB"); same.Card == nil || same.Card.Text() != bob.Card.Text() {
		t.Errorf("/ticket agents BOB differs from /assign list bob: %+v", same)
	}
	all := routertest.Handle(r, "UALICE", "/assign", "list")
	got := all.Card.Text()
	if !strings.Contains(got, "Groups:") || !strings.Contains(got, "Hardware, Network") || strings.Contains(got, "gone@example.com") ||
		len(all.Card.Lines) != maxAgentsShown || !strings.Contains(got, "; next: /assign list page 2; or add a word of the name or e-mail to narrow") {
		t.Errorf("/assign list:\n%s", got)
	}
	if net := routertest.Handle(r, "UALICE", "/assign", "list net"); net.Card.Title != "Agents to assign to matching net: 0" || !strings.Contains(net.Card.Text(), "Network") {
		t.Errorf("/assign list net:\n%s", net.Card.Text())
	}
	if h := routertest.Handle(r, "UALICE", "/ticket", "help"); !strings.Contains(h.Text, "/ticket agents [words]") || !strings.Contains(h.Text, "/assign list [words]") {
		t.Errorf("help lacks the agent list:\n%s", h.Text)
	}
	// Requesters may not list the desk's people.
	if c := routertest.Handle(r, "UCAROL", "/assign", "list"); !c.Failed || !strings.Contains(c.Text, "only desk agents") {
		t.Errorf("requester: %+v", c)
	}
}

// The mirror tests run on a fixed clock: the mirror's cursor is a minute
// behind it.
var mirrorNow, mirrorCursor = fakedesk.MirrorClock()

const fromMirror = "from deskbot's mirror, as of 09:41:12 UTC"

// mirrorSim stores the simulator's tickets of workspace ws, as the API
// shows them now, in the mirror of workspace key with state st, the way
// the scheduler's sync would, and forgets the requests it took.
func mirrorSim(t *testing.T, sim *sdsim.Server, m bot.Mirror, key, ws int64, st store.MirrorState) {
	t.Helper()
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var put []*sdclient.Ticket
	for _, id := range sim.Desk.TicketIDs() {
		tk, _, err := c.Tickets.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.WorkspaceID != nil && *tk.WorkspaceID == ws {
			tk.Description, tk.DescriptionText = "", ""
			put = append(put, tk)
		}
	}
	if _, err := m.(interface {
		MirrorApply(context.Context, int64, []*sdclient.Ticket, []int64, store.MirrorState) (int64, error)
	}).MirrorApply(t.Context(), key, put, nil, st); err != nil {
		t.Fatal(err)
	}
	sim.Desk.ResetRequests()
}

// ticketRequests are the requests the desk got for tickets.
func ticketRequests(sim *sdsim.Server) []string {
	var out []string
	for _, r := range sim.Desk.Requests() {
		if strings.Contains(r.Path, "/tickets") {
			out = append(out, r.Method+" "+r.Path+"?"+r.RawQuery)
		}
	}
	return out
}

var listedID = regexp.MustCompile(`#(\d+) `)

// listed is the ids of the tickets a list answer shows, in its order.
func listed(s string) []int64 {
	var out []int64
	for _, m := range listedID.FindAllStringSubmatch(s, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// fieldsExplainer explains a ticket by the fields it was given, so that a
// test sees which copy of the ticket the command read.
type fieldsExplainer struct{}

func (fieldsExplainer) ExplainTicket(_ context.Context, t *sdclient.Ticket) (string, error) {
	return fmt.Sprintf("explained #%d %q", t.ID, t.Subject), nil
}

// TestMirrorAnswersWithoutTheDesk: /ticket unassigned, /ticket mine and
// /ticket why answer from the mirror, within the caller's scope, say how
// fresh it is, and send the desk no ticket request; a workspace deskbot
// does not mirror and a ticket the mirror does not hold are read from the
// desk, saying so.
func TestMirrorAnswersWithoutTheDesk(t *testing.T) {
	m := fakedesk.OpenMirror(t)
	e := newAccessEnv(t, bot.WithMirror(m), bot.WithExplainer(fieldsExplainer{}), bot.WithClock(func() time.Time { return mirrorNow }))
	// The default workspace (IT) is mirrored, as deskbot does without
	// DESKBOT_WORKSPACE_IDS; HR is not.
	mirrorSim(t, e.sim, m, 0, sdsim.DefaultWorkspaceID, store.MirrorState{Cursor: mirrorCursor, Complete: true, FullSyncAt: mirrorCursor})
	// The desk changes after the mirror's cursor: answers from the mirror
	// show the ticket as of the cursor.
	id := e.tickets
	e.sim.Desk.UpdateTicket(id["network"], func(x *sdsim.Ticket) { x.Subject = "Switch port dead (desk copy)" })

	tests := []struct {
		user, text string
		want       []string // tickets listed, in order
	}{
		{uMia, "unassigned", []string{"network"}}, // not the Hardware group's
		{uSpec, "unassigned", []string{"hardware"}},
		{uWanda, "unassigned", []string{"hardware", "network"}}, // newest first, as the desk lists
		{uAsa, "unassigned", nil},
		{uMia, "mine", []string{"mia"}},
		{uAsa, "mine", []string{"asa"}},
		{uWanda, "mine", nil},
	}
	for _, tt := range tests {
		t.Run(tt.user+" "+tt.text, func(t *testing.T) {
			e.sim.Desk.ResetRequests()
			got := all(e.slash(tt.user, "/ticket", tt.text))
			var want []int64
			for _, k := range tt.want {
				want = append(want, id[k])
			}
			if ids := listed(got); !slices.Equal(ids, want) {
				t.Errorf("listed %v, want %v:\n%s", ids, want, got)
			}
			if !strings.Contains(got, fmt.Sprintf(": %d", len(want))) || !strings.Contains(got, fromMirror) {
				t.Errorf("answer lacks the count %d or %q:\n%s", len(want), fromMirror, got)
			}
			if strings.Contains(got, "(desk copy)") {
				t.Errorf("the answer shows the desk's copy:\n%s", got)
			}
			if len(want) == 0 && !strings.Contains(got, "nothing found") {
				t.Errorf("an empty answer does not say nothing found:\n%s", got)
			}
			if reqs := ticketRequests(e.sim); len(reqs) != 0 {
				t.Errorf("the desk got ticket requests: %v", reqs)
			}
		})
	}

	t.Run("why from the mirror", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", id["network"]))
		want := fmt.Sprintf("From deskbot's mirror, as of 09:41:12 UTC (change feed cursor); the desk was not asked.\nexplained #%d %q", id["network"], accessSubjects["network"])
		if r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 0 {
			t.Errorf("the desk got ticket requests: %v", reqs)
		}
	})
	t.Run("why refused on the mirror's fields", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", id["hardware"]))
		want := fmt.Sprintf("you cannot act on ticket #%d: it is outside your groups and not assigned to you", id["hardware"])
		if r.Text != want || strings.Contains(all(r), accessSubjects["hardware"]) {
			t.Errorf("answer %q, want %q", all(r), want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 0 {
			t.Errorf("the desk got ticket requests: %v", reqs)
		}
	})
	t.Run("why of a ticket the mirror does not hold", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		r := e.slash(uEve, "/ticket", fmt.Sprintf("why %d", id["hr"]))
		want := fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.\nexplained #%d %q", id["hr"], id["hr"], accessSubjects["hr"])
		if r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
		if reqs := ticketRequests(e.sim); len(reqs) != 1 || !strings.HasPrefix(reqs[0], fmt.Sprintf("GET /api/v2/tickets/%d?", id["hr"])) {
			t.Errorf("ticket requests %v, want the one read of ticket %d", reqs, id["hr"])
		}
		// Out of scope on the desk's copy: refused as before.
		r = e.slash(uWanda, "/ticket", fmt.Sprintf("why %d", id["hr"]))
		if want := fmt.Sprintf("you cannot act on ticket #%d: it is outside your workspaces", id["hr"]); r.Text != want {
			t.Errorf("answer %q, want %q", r.Text, want)
		}
	})
	t.Run("a workspace not mirrored is read from the desk", func(t *testing.T) {
		e.sim.Desk.ResetRequests()
		got := all(e.slash(uEve, "/ticket", "unassigned"))
		if ids, want := listed(got), []int64{id["hardware"], id["network"], id["hr"]}; !slices.Equal(ids, want) {
			t.Errorf("listed %v, want %v:\n%s", ids, want, got)
		}
		if note := fromMirror + "; read from the desk for workspace HR: deskbot does not mirror it"; !strings.Contains(got, note) {
			t.Errorf("answer lacks %q:\n%s", note, got)
		}
		reqs := ticketRequests(e.sim)
		if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /api/v2/tickets/filter?") || !strings.Contains(reqs[0], "workspace_id=3") {
			t.Errorf("ticket requests %v, want one filter of workspace 3", reqs)
		}
	})
	if n := m.Loads.Load(); n != 1 {
		t.Errorf("the mirror was loaded %d times, want once (its version did not change)", n)
	}
}

// TestMirrorFallsBackToTheDesk: without a built, complete and current
// mirror, the commands read the desk as before and say why.
func TestMirrorFallsBackToTheDesk(t *testing.T) {
	tests := []struct {
		name string
		st   *store.MirrorState // nil: nothing mirrored
		list string             // the note of a list answer
		why  string             // the first line of /ticket why
	}{
		{"empty store", nil,
			"read from the desk: the mirror is not built yet",
			"Read from the desk: the mirror is not built yet."},
		{"first full sync under way", &store.MirrorState{Cursor: mirrorCursor},
			"read from the desk: the mirror's first full sync has not finished",
			"From deskbot's mirror, as of 09:41:12 UTC (change feed cursor); the desk was not asked."},
		{"not kept up to date", &store.MirrorState{Cursor: mirrorNow.Add(-2 * time.Hour), Complete: true},
			"read from the desk: deskbot's mirror is too old to trust (as of 07:42:12 UTC, more than 15 minutes ago)",
			"Read from the desk: deskbot's mirror is too old to trust (as of 07:42:12 UTC, more than 15 minutes ago)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fakedesk.OpenMirror(t)
			e := newAccessEnv(t, bot.WithMirror(m), bot.WithExplainer(fieldsExplainer{}), bot.WithClock(func() time.Time { return mirrorNow }))
			if tt.st != nil {
				mirrorSim(t, e.sim, m, 0, sdsim.DefaultWorkspaceID, *tt.st)
			}
			e.sim.Desk.ResetRequests()
			got := all(e.slash(uMia, "/ticket", "unassigned"))
			if ids, want := listed(got), []int64{e.tickets["network"]}; !slices.Equal(ids, want) || !strings.Contains(got, tt.list) {
				t.Errorf("listed %v, want %v, and %q:\n%s", ids, want, tt.list, got)
			}
			if reqs := ticketRequests(e.sim); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /api/v2/tickets/filter?") {
				t.Errorf("ticket requests %v, want the one filter", reqs)
			}
			e.sim.Desk.ResetRequests()
			r := e.slash(uMia, "/ticket", fmt.Sprintf("why %d", e.tickets["network"]))
			if first, _, _ := strings.Cut(r.Text, "\n"); first != tt.why || !strings.Contains(r.Text, "explained #") {
				t.Errorf("answer %q, want it to start with %q", r.Text, tt.why)
			}
			wantReads := 1
			if strings.HasPrefix(tt.why, "From deskbot's mirror") {
				wantReads = 0
			}
			if reqs := ticketRequests(e.sim); len(reqs) != wantReads {
				t.Errorf("ticket requests %v, want %d", reqs, wantReads)
			}
		})
	}
}

// TestMirrorListsMatchTheDesk: a list from the mirror is the desk's list:
// the same tickets in the same order (newest created first, the higher id
// first within a second), the same count and the same "showing 10 of N".
func TestMirrorListsMatchTheDesk(t *testing.T) {
	sim, desk, _ := simDesk(t)
	var alice sdsim.Agent
	for _, a := range sim.Desk.Agents() {
		if a.Email == "alice@example.com" {
			alice = a
		}
	}
	t0 := time.Now().UTC().Truncate(time.Second).Add(-48 * time.Hour)
	for i := range 30 {
		tk := sdsim.Ticket{Subject: fmt.Sprintf("ticket %d", i), Priority: 1 + i%4, CreatedAt: t0.Add(time.Duration(i%7) * time.Minute)}
		switch i % 5 {
		case 1:
			tk.ResponderID = alice.ID
		case 2:
			tk.Status = sdclient.StatusPending
		case 3:
			tk.Status = sdclient.StatusResolved
		case 4:
			tk.Status, tk.ResponderID = sdclient.StatusClosed, alice.ID
		}
		sim.Desk.AddTicket(tk)
	}
	m := fakedesk.OpenMirror(t)
	mirrorSim(t, sim, m, 0, sdsim.DefaultWorkspaceID, store.MirrorState{Cursor: mirrorCursor, Complete: true})
	fromDesk := routertest.New(t, desk, bot.WithClock(func() time.Time { return mirrorNow }))
	fromMirrorR := routertest.New(t, desk, bot.WithMirror(m), bot.WithClock(func() time.Time { return mirrorNow }))
	for _, text := range []string{"unassigned", "mine"} {
		d, mr := routertest.Handle(fromDesk, "UALICE", "/ticket", text), routertest.Handle(fromMirrorR, "UALICE", "/ticket", text)
		if d.Failed || mr.Failed || d.Card == nil || mr.Card == nil {
			t.Fatalf("%s: desk %+v, mirror %+v", text, d, mr)
		}
		if d.Text != mr.Text || !slices.Equal(d.Card.Lines, mr.Card.Lines) {
			t.Errorf("%s: the mirror's answer differs from the desk's:\ndesk:\n%s\nmirror:\n%s", text, d.Card.Text(), mr.Card.Text())
		}
		if want := append(slices.Clone(d.Card.Notes), fromMirror); !slices.Equal(mr.Card.Notes, want) {
			t.Errorf("%s: notes %q, want %q", text, mr.Card.Notes, want)
		}
	}
	if d := routertest.Handle(fromDesk, "UALICE", "/ticket", "unassigned"); !slices.Contains(d.Card.Notes, "showing 1–10 of 13; next: /ticket unassigned page 2") {
		t.Errorf("the test does not reach the limit: %q", d.Card.Notes)
	}
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
	clock := clockwork.NewFakeClockAt(mirrorNow) // a router clock the test moves
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

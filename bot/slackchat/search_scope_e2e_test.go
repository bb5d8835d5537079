package slackchat_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

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

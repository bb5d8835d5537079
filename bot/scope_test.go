package bot

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// scopeParts returns every query a scopedQuery sends.
func scopeParts(sq scopedQuery) []string {
	if sq.whole != "" {
		return []string{sq.whole}
	}
	out := []string{sq.mine}
	for _, ch := range sq.chunks {
		out = append(out, ch.query, ch.mine)
	}
	return out
}

// isScopeExpr reports whether x is made only of the scope's terms
// (group_id:G of its groups, agent_id:ME), alone or OR-ed.
func isScopeExpr(ac access, x filter.Expr) bool {
	switch x := x.(type) {
	case *filter.Term:
		if x.Op != filter.OpEq || x.Value.Kind != filter.KindNumber {
			return false
		}
		return x.Field == "agent_id" && x.Value.Num == ac.agentID || x.Field == "group_id" && slices.Contains(ac.groups, x.Value.Num)
	case *filter.Or:
		for _, y := range x.Exprs {
			if !isScopeExpr(ac, y) {
				return false
			}
		}
		return len(x.Exprs) > 0
	}
	return false
}

// checkScoped checks what scopeQueries made of q: every query fits in
// limit and reads back; unless the scope is every ticket, each is q AND
// something made only of the scope's terms (so it matches nothing
// outside the scope); a split covers each group exactly once.
func checkScoped(t *testing.T, ac access, q string, sq scopedQuery, limit int) {
	t.Helper()
	for _, p := range scopeParts(sq) {
		if len(p) > limit {
			t.Fatalf("query of %d characters (limit %d): %s", len(p), limit, p)
		}
		x, err := filter.Parse(p)
		if err != nil {
			t.Fatalf("query %q does not parse: %v", p, err)
		}
		if ac.all {
			if p != q {
				t.Fatalf("scope is every ticket, but sent %q for %q", p, q)
			}
			continue
		}
		and, ok := x.(*filter.And)
		if !ok || !slices.ContainsFunc(and.Exprs, func(y filter.Expr) bool { return isScopeExpr(ac, y) }) {
			t.Fatalf("query %q is not narrowed to the scope (agent %d, groups %v)", p, ac.agentID, ac.groups)
		}
	}
	if sq.whole != "" {
		return
	}
	var covered []int64
	for _, ch := range sq.chunks {
		// The chunk's share of the groups is the last member of its And:
		// q's own members come first.
		x, _ := filter.Parse(ch.query)
		and := x.(*filter.And)
		for _, tm := range filter.Terms(and.Exprs[len(and.Exprs)-1]) {
			if tm.Field != "group_id" {
				t.Fatalf("chunk %q: its last member is not its groups", ch.query)
			}
			covered = append(covered, tm.Value.Num)
		}
	}
	slices.Sort(covered)
	if !slices.Equal(covered, ac.groups) {
		t.Fatalf("the chunks cover groups %v, want each of %v once", covered, ac.groups)
	}
	if !slices.Equal(sq.groups, ac.groups) {
		t.Fatalf("split groups %v, want %v", sq.groups, ac.groups)
	}
}

// bigGroups is n Freshservice-sized group ids.
func bigGroups(n int) []int64 {
	var g []int64
	for i := range n {
		g = append(g, 21000000001+int64(i))
	}
	return g
}

func TestScopeQueries(t *testing.T) {
	const me = 21000005001
	member := func(groups ...int64) access { return access{agentID: me, groups: groups} }
	tests := []struct {
		name      string
		ac        access
		q         string
		limit     int
		whole     string // the one query, when not split
		chunks    int    // the chunks, when split
		wantError string
	}{
		{"every ticket", access{agentID: me, all: true}, "priority:3", 512, "priority:3", 0, ""},
		{"assigned items", member(), "priority:3", 512, "priority:3 AND agent_id:21000005001", 0, ""},
		{"groups fit", member(3, 4), "priority:3 OR priority:4", 512, "(priority:3 OR priority:4) AND (group_id:3 OR group_id:4 OR agent_id:21000005001)", 0, ""},
		{"assigned items, too long", member(), "priority:3", 30, "", 0, "your search plus your access scope is longer than the desk accepts (35 characters, at most 30); shorten your search"},
		{"30 groups split", member(bigGroups(30)...), "priority:3", 512, "", 2, ""},
		{"one group at a time", member(bigGroups(3)...), "priority:3", 60, "", 3, ""},
		{"not even one group fits", member(bigGroups(3)...), "priority:3", 59, "", 0, "your search plus your access scope is longer than the desk accepts (60 characters, at most 59); shorten your search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sq, err := tt.ac.scopeQueries(tt.q, tt.limit)
			if tt.wantError != "" {
				var ref *refusal
				if !errors.As(err, &ref) || err.Error() != tt.wantError {
					t.Fatalf("error %v, want the refusal %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkScoped(t, tt.ac, tt.q, sq, tt.limit)
			if sq.whole != tt.whole || len(sq.chunks) != tt.chunks {
				t.Fatalf("whole %q and %d chunks, want %q and %d: %+v", sq.whole, len(sq.chunks), tt.whole, tt.chunks, sq)
			}
			if tt.chunks > 0 && sq.mine != tt.q+" AND agent_id:21000005001" {
				t.Fatalf("mine = %q", sq.mine)
			}
		})
	}
}

// TestScopeQueriesSemantics: a split scope's parts match, together,
// exactly the tickets the one query would, on every combination of the
// fields the query and the scope read.
func TestScopeQueriesSemantics(t *testing.T) {
	ac := access{agentID: 9, groups: []int64{1, 2, 3, 4, 5}}
	const q = "priority:3 OR (priority:4 AND agent_id:0)"
	one, err := ac.scopeQueries(q, 1000)
	if err != nil || one.whole == "" {
		t.Fatalf("one query: %+v %v", one, err)
	}
	split, err := ac.scopeQueries(q, 90)
	if err != nil || split.whole != "" || len(split.chunks) < 2 {
		t.Fatalf("split: %+v %v", split, err)
	}
	parse := func(s string) filter.Expr {
		x, err := filter.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	whole, mine := parse(one.whole), parse(split.mine)
	for _, g := range []int64{0, 1, 3, 5, 6} {
		for _, a := range []int64{0, 9, 10} {
			for _, p := range []int64{1, 3, 4} {
				rec := filter.Values{"priority": {filter.Number(p)}}
				if g != 0 {
					rec["group_id"] = []filter.Value{filter.Number(g)}
				}
				if a != 0 {
					rec["agent_id"] = []filter.Value{filter.Number(a)}
				}
				in := 0 // chunks matching
				for _, ch := range split.chunks {
					m := parse(ch.query).Eval(rec)
					if m {
						in++
					}
					if both := parse(ch.mine).Eval(rec); both != (m && mine.Eval(rec)) {
						t.Errorf("group %d agent %d priority %d: %s is %v, want chunk and mine", g, a, p, ch.mine, both)
					}
				}
				if in > 1 {
					t.Errorf("group %d agent %d priority %d: in %d chunks", g, a, p, in)
				}
				if got, want := in == 1 || mine.Eval(rec), whole.Eval(rec); got != want {
					t.Errorf("group %d agent %d priority %d: split matches %v, the one query %v", g, a, p, got, want)
				}
			}
		}
	}
}

// FuzzSearchQuery: whatever is typed after /ticket search, with any
// scope and any length limit, preparing and narrowing it never panics,
// and what is sent never reaches outside the caller's scope nor over the
// limit: it is refused instead.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"priority:4 AND agent_id:0", "status:open", "status:pending OR tag:'vpn'", "(priority:3", "",
		"created_at:>'2026-01-01' AND group_id:21000000001", "subject:'x\\'y'", "status:'Waiting on vendor'", "a:1 AND b:2 OR c:3"} {
		f.Add(s, int64(21000005001), uint8(30), false, uint16(512))
	}
	f.Add("priority:3", int64(7), uint8(0), true, uint16(10))
	statuses := fakedesk.New().StatusList
	f.Fuzz(func(t *testing.T, typed string, me int64, ngroups uint8, all bool, limit uint16) {
		q, err := prepareQuery(typed, statuses)
		if err != nil {
			return
		}
		groups := bigGroups(int(ngroups % 80))
		roles := []sdclient.AgentRole{{AssignmentScope: scopeMember}}
		if all {
			roles = []sdclient.AgentRole{{AssignmentScope: scopeEntire}}
		}
		ac := accessOf(&sdclient.Agent{Person: sdclient.Person{ID: me}, MemberOf: groups, Roles: roles})
		sq, err := ac.scopeQueries(q, int(limit))
		if err != nil {
			var ref *refusal
			if !errors.As(err, &ref) || !strings.Contains(err.Error(), "shorten your search") {
				t.Fatalf("scopeQueries(%q): %v is not a refusal to shorten the search", q, err)
			}
			return
		}
		if all && len(q) > int(limit) {
			return // list refuses those before narrowing
		}
		checkScoped(t, ac, q, sq, int(limit))
	})
}

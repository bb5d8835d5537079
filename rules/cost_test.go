package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient"
)

func TestCheckCost(t *testing.T) {
	tests := []struct {
		src  string
		want string // "" when bounded; else a part of the message
	}{
		// Bounded: what rules write.
		{`len(ticket.tags) > 0`, ""},
		{`any(ticket.tags, {# in ["vpn", "wifi"]})`, ""},
		{`any(ticket.tags, {any(ticket.tags, {# == "vip"})})`, ""},
		{`has_tag(ticket, "vpn") || "vpn" in ticket.tags`, ""},
		{`all(1..10, {# > 0})`, ""},
		{`count(1..10, {# % 2 == 0}) == 5`, ""},
		{`sum(map(Low..Urgent, {# * 2})) > 0`, ""},
		{`let n = 10; all(1..n, {# > 0})`, ""},
		{`-5..5 | all(# < 6)`, ""},
		{`upper(ticket.subject) contains "VPN" && lower(trim(ticket.type)) startsWith "inc"`, ""},
		{`any(split(ticket.subject, " "), {lower(#) in ["vpn", "wifi"]})`, ""},
		{`count(values(ticket.custom_fields), {# == nil}) < 2`, ""},
		{`len(filter(ticket.tags, {# != "x"})) > len(keys(ticket.custom_fields))`, ""},
		{`reduce(1..10, #acc + #, 0) == 55`, ""},
		{`len(reduce(1..10, [#acc, #], [])) == 2`, ""},
		{`any(concat(ticket.tags, ["a"]), {# == "a"})`, ""},
		{`len(groupBy(ticket.tags, {len(#)})) > 1`, ""},
		{`sortBy(ticket.tags, {#})[0] == "a"`, ""},
		{`any(split("a,b,c", ","), {# == "b"})`, ""},
		{`all(1..999, {# > 0}) && all(1..999, {# > 0})`, ""},
		{`len(1..50000) > 0`, ""},
		{`ticket.priority in 1..3 ? now() - ticket.created_at > duration("1h") : false`, ""},

		// Over the limit.
		{`let xs = 1..30000; all(xs, {all(xs, {# > 0})})`,
			"this expression may take 900,060,000 steps per ticket (all() over xs: 30,000 items, and for each item all() over xs: 30,000 items); the limit is 100,000"},
		{`any(ticket.tags, {any(ticket.tags, {any(ticket.tags, {# == "x"})})})`,
			"may take 1,010,100 steps per ticket (any() over ticket.tags: 100 items, and for each item any() over ticket.tags: 100 items, and for each item any() over ticket.tags: 100 items); the limit is 100,000, and a list from ticket data counts as 100 items"},
		{`len(1..2000000) > 0`, "(the range 1..2000000: 2,000,000 items)"},
		{`sum(map(1..999, {len(1..999)})) > 0`, "(map() over 1..999: 999 items, and for each item the range 1..999: 999 items)"},
		{`all(1..1000, {# in 1..1000})`, "steps per ticket"},
		{`all(flatten(map(1..1000, {1..1000})), {# > 0})`, "steps per ticket"},
		{`len(sort(flatten(map(1..1000, {1..999})))) > 0`, "steps per ticket"},

		// No bound.
		{`1..ticket.id | all(# > 0)`,
			"the range 1..ticket.id has a bound that is not a constant, so its cost per ticket has no bound: write constant bounds, e.g. 1..10"},
		{`len(1..len(ticket.subject)) > 0`, "has a bound that is not a constant"},
		{`map(ticket.tags, {1..len(#)}) != nil`, "the range 1..len(#) has a bound that is not a constant"},
		{`all(reduce(1..10, [#], []), {# > 0})`, "it has no size the loader can bound (the result of reduce() may be any size)"},
		{`reduce(1..10, all(#acc, {true}), [])`, "all() over #acc: it has no size the loader can bound (the accumulator of reduce() may grow at every step)"},
		{`len(reduce(1..10, concat(#acc, [#]), [])) == 10`, "concat(): #acc has no size the loader can bound (the accumulator of reduce() may grow at every step)"},
		{`any(split(repeat("a,", ticket.id), ","), {# == "a"})`, "a text made by repeat() with a count that is not a constant"},
		{`1 in reduce(1..3, [#], [])`, "in: reduce(1..3, [#], []) has no size the loader can bound"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, errs := compileExpr(tt.src, false); len(errs) > 0 && !strings.Contains(errs[0].Msg, "steps per ticket") && !strings.Contains(errs[0].Msg, "bound") {
				t.Fatalf("does not compile: %v", errs)
			}
			e := checkCost(tt.src)
			switch {
			case tt.want == "" && e != nil:
				t.Errorf("refused: %s", e.Msg)
			case tt.want != "" && e == nil:
				t.Errorf("accepted, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(e.Msg, tt.want):
				t.Errorf("error %q\nwant it to contain %q", e.Msg, tt.want)
			}
		})
	}
}

// The expression of issue 16 ran 148 s on 8 tickets: it is refused at
// load, at the loop, naming the rule.
func TestUnboundedExpressionsFailToLoad(t *testing.T) {
	wantLoadErrors(t, ruleFile(
		ruleHead("slow"),
		"    if: 'let xs = 1..30000; all(xs, {all(xs, {# > 0})})'",
		"    actions:",
		"      - note: \"{{ len(filter(1..ticket.id, {# > 1})) }} steps\"",
		"      - alert: {channel: oncall, text: \"{{ any(ticket.tags, {any(ticket.tags, {any(ticket.tags, {# == \\\"x\\\"})})}) }}\"}",
	), []string{
		`f.yaml:6:29: rule "slow": if: this expression may take 900,060,000 steps per ticket (all() over xs: 30,000 items, and for each item all() over xs: 30,000 items); the limit is 100,000`,
		`f.yaml:8:30: rule "slow": note: template: the range 1..ticket.id has a bound that is not a constant, so its cost per ticket has no bound: write constant bounds, e.g. 1..10`,
		`f.yaml:9:44: rule "slow": alert text: template: this expression may take 1,010,100 steps per ticket (any() over ticket.tags: 100 items, and for each item any() over ticket.tags: 100 items, and for each item any() over ticket.tags: 100 items); the limit is 100,000, and a list from ticket data counts as 100 items`,
	})
}

// A ticket with more tags than the load-time check assumes meets the
// run-time budget: the decision fails with ErrBudget, positioned, and
// other tickets and rules are not affected.
func TestRunTimeStepBudget(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("nested"),
		`    if: 'any(ticket.tags, {any(ticket.tags, {# == "zz" + #})})'`,
		"    actions: [{note: x}]",
		ruleHead("plain"),
		"    actions: [{note: \"{{ len(ticket.tags) }} tags\"}]"))
	many := make([]string, 400) // 400 × 400 steps > MaxSteps
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	ds := s.Evaluate([]*sdclient.Ticket{
		ticket(1, func(t *sdclient.Ticket) { t.Tags = many }),
		ticket(2, func(t *sdclient.Ticket) { t.Tags = many[:300] }), // 300 × 300 < MaxSteps
	}, fixtureNow)
	if got, want := ids(ds), []string{"nested#1", "plain#1", "plain#2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	err := ds[0].Err
	if !errors.Is(err, ErrBudget) || len(ds[0].Actions) != 0 {
		t.Fatalf("nested#1: err %v, actions %v; want ErrBudget and no actions", err, ds[0].Actions)
	}
	want := `rule "nested" on ticket 1: if: t.yaml:6:48: over the run-time budget: its loops ran more than 100,000 steps on this ticket (the load-time check assumes at most 100 items in a list from ticket data)`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if ds[1].Err != nil || ds[1].Actions[0].Text != "400 tags" || ds[2].Err != nil {
		t.Errorf("other decisions: %+v %+v", ds[1], ds[2])
	}
	// The budget is per expression: the next evaluation starts afresh.
	if ds := s.EvaluateRule(s.Rule("nested"), []*sdclient.Ticket{ticket(3, func(t *sdclient.Ticket) { t.Tags = many[:300] })}, fixtureNow); len(ds) != 0 {
		t.Errorf("300 tags: %+v, want no decision", ds)
	}
	if x := s.Explain(ticket(1, func(t *sdclient.Ticket) { t.Tags = many }), fixtureNow)[0]; !errors.Is(x.Err, ErrBudget) {
		t.Errorf("explain: %v, want ErrBudget", x.Err)
	}
}

// expr's memory budget is a run-time budget too.
func TestRunTimeMemoryBudget(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("big"),
		"    actions: [{note: \"{{ len(repeat(ticket.subject, 200000)) }}\"}]"))
	ds := s.Evaluate([]*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) { t.Subject = "0123456789" })}, fixtureNow)
	if len(ds) != 1 || !errors.Is(ds[0].Err, ErrBudget) {
		t.Fatalf("%+v, want a decision with ErrBudget", ds)
	}
	want := `rule "big" on ticket 1: note: t.yaml:6:30: over the run-time budget: it allocated more than 1,000,000 items on this ticket (expr's memory budget)`
	if got := ds[0].Err.Error(); got != want {
		t.Errorf("error:\n%s\nwant:\n%s", got, want)
	}
}

// BenchmarkWorstLoop evaluates an expression just under MaxSteps on one
// ticket: what one rule may cost per ticket at most.
func BenchmarkWorstLoop(b *testing.B) {
	s := mustLoad(b, ruleFile(
		ruleHead("worst"),
		"    if: 'let xs = 1..315; !all(xs, {all(xs, {# > 0})})'",
		"    actions: [{note: x}]"))
	tk := []*sdclient.Ticket{ticket(1, nil)}
	b.ReportAllocs()
	for b.Loop() {
		if ds := s.Evaluate(tk, fixtureNow); len(ds) != 0 {
			b.Fatal(ds)
		}
	}
}

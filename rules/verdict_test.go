package rules

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// verdictRule is one rule of a rules file: query, optional if, and the
// given note (a template may read now() too).
func verdictRule(name, query, cond, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    query: %q\n", name, query)
	if cond != "" {
		fmt.Fprintf(&b, "    if: |-\n      %s\n", cond)
	}
	fmt.Fprintf(&b, "    actions:\n      - note: %q\n", note)
	return b.String()
}

// answer is what EvaluateRules says of one (rule, ticket) about the if:
// whether it decides, and the text of the decision's error.
func answer(t testing.TB, s *Set, r *Rule, tk *sdclient.Ticket, at time.Time) (bool, string) {
	t.Helper()
	ds := s.EvaluateRules([]*Rule{r}, []*sdclient.Ticket{tk}, at)
	switch len(ds) {
	case 0:
		return false, ""
	case 1:
		if ds[0].Err != nil {
			return true, ds[0].Err.Error()
		}
		return true, ""
	}
	t.Fatalf("%d decisions for one rule and one ticket", len(ds))
	return false, ""
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestVerdicts(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	base := func(mod func(*sdclient.Ticket)) *sdclient.Ticket {
		tk := &sdclient.Ticket{
			ID: 42, Subject: "VPN down", Status: 2, Priority: 3,
			CreatedAt: now.Add(-90 * time.Minute), // 10:30
			UpdatedAt: now.Add(-3 * time.Hour),    // 09:00
			DueBy:     at(20 * time.Minute),       // 12:20
		}
		if mod != nil {
			mod(tk)
		}
		return tk
	}
	noDue := func(tk *sdclient.Ticket) { tk.DueBy = nil }
	dueIn := func(d time.Duration) func(*sdclient.Ticket) {
		return func(tk *sdclient.Ticket) { tk.DueBy = at(d) }
	}
	const never = time.Duration(-1) // Until zero
	const ns = time.Nanosecond
	for _, tc := range []struct {
		name    string
		query   string // default status:open
		cond    string
		note    string // default a constant text
		mod     func(*sdclient.Ticket)
		holds   bool
		wantErr bool
		// renderErr: EvaluateRules' decision fails rendering the note.
		renderErr bool
		until     time.Duration // after now; never: zero
	}{
		// The brief's examples.
		{name: "idle 4h, not yet", cond: `now() - ticket.updated_at > duration("4h")`, until: time.Hour + ns},
		{name: "idle 4h, non-strict", cond: `now() - ticket.updated_at >= duration("4h")`, until: time.Hour},
		{name: "idle 4h, already", cond: `now() - ticket.updated_at > duration("2h")`, holds: true, until: never},
		{name: "overdue, not yet", cond: `has_due(ticket) && ticket.due_by < now()`, until: 20*time.Minute + ns},
		{name: "overdue, no due date", cond: `has_due(ticket) && ticket.due_by < now()`, mod: noDue, until: never},
		{name: "overdue, loader's guard", cond: `ticket.due_by < now()`, mod: noDue, until: never},
		{name: "overdue, due now", cond: `ticket.due_by < now()`, mod: dueIn(0), until: ns},
		{name: "overdue, non-strict, due now", cond: `ticket.due_by <= now()`, mod: dueIn(0), holds: true, until: never},
		{name: "age and priority", cond: `now() - ticket.created_at > duration("2h") && ticket.priority >= 3`, until: 30*time.Minute + ns},
		// Conservative: the atom flips, the if does not (priority 2).
		{name: "age, priority too low", cond: `now() - ticket.created_at > duration("2h") && ticket.priority >= 3`,
			mod: func(tk *sdclient.Ticket) { tk.Priority = 2 }, until: 30*time.Minute + ns},
		{name: "due within 30m", cond: `ticket.due_by - now() < duration("30m")`, holds: true, until: never},
		{name: "due within 30m, later", cond: `ticket.due_by - now() < duration("30m")`, mod: dueIn(time.Hour), until: 30*time.Minute + ns},
		{name: "due within 30m, no due date", cond: `ticket.due_by - now() < duration("30m")`, mod: noDue, until: never},
		{name: "due more than 30m away", cond: `ticket.due_by - now() > duration("30m")`, mod: dueIn(time.Hour), holds: true, until: 30 * time.Minute},
		{name: "due at least 30m away", cond: `ticket.due_by - now() >= duration("30m")`, mod: dueIn(time.Hour), holds: true, until: 30*time.Minute + ns},
		// Sides swapped, subtraction reversed.
		{name: "swapped sides", cond: `duration("4h") < now() - ticket.updated_at`, until: time.Hour + ns},
		{name: "reversed subtraction", cond: `ticket.updated_at - now() < duration("-4h")`, until: time.Hour + ns},
		{name: "reversed, non-strict", cond: `ticket.updated_at - now() <= duration("-4h")`, until: time.Hour},
		{name: "now plus", cond: `now() + duration("4h") > ticket.updated_at + duration("8h")`, until: time.Hour + ns},
		{name: "duration plus time", cond: `duration("4h") + ticket.updated_at < now()`, until: time.Hour + ns},
		{name: "now minus duration", cond: `now() - duration("4h") > ticket.updated_at`, until: time.Hour + ns},
		{name: "Sub", cond: `now().Sub(ticket.updated_at) > duration("4h")`, until: time.Hour + ns},
		{name: "Sub reversed", cond: `ticket.due_by.Sub(now()) < duration("30m")`, mod: dueIn(time.Hour), until: 30*time.Minute + ns},
		{name: "Before, Add", cond: `ticket.due_by.Before(now().Add(duration("30m")))`, mod: dueIn(time.Hour), until: 30*time.Minute + ns},
		{name: "minus of a minus", cond: `duration("1h") - (ticket.updated_at - now()) > duration("5h")`, until: time.Hour + ns},
		// A missing due date is the zero time: its distance saturates, and
		// adding to it would overflow.
		{name: "overflow", cond: `now() - ticket.due_by + duration("1h") > duration("2h")`, mod: noDue, until: ns},
		{name: "no overflow", cond: `now() - ticket.due_by + duration("1h") > duration("2h")`, until: 80*time.Minute + ns},
		{name: "saturated, moving away", cond: `now() - ticket.due_by > duration("2h")`, mod: noDue, until: never},
		// Boolean structure.
		{name: "not", cond: `!(now() - ticket.updated_at > duration("4h"))`, holds: true, until: time.Hour + ns},
		{name: "or, earliest atom", cond: `now() - ticket.updated_at > duration("4h") || now() > ticket.due_by`, until: 20*time.Minute + ns},
		{name: "ternary split", cond: `ticket.priority > 2 ? now() > ticket.due_by : false`, until: 20*time.Minute + ns},
		{name: "inside a loop, closed", cond: `any(ticket.tags, {now() > ticket.due_by})`, until: 20*time.Minute + ns},
		// Equality on times.
		{name: "equal, later", cond: `now() == ticket.due_by`, until: 20 * time.Minute},
		{name: "not equal, later", cond: `now() != ticket.due_by`, holds: true, until: 20 * time.Minute},
		{name: "equal now", cond: `now() == ticket.due_by`, mod: dueIn(0), holds: true, until: ns},
		{name: "equal, past", cond: `now() == ticket.due_by`, mod: dueIn(-time.Minute), until: never},
		{name: "Before", cond: `ticket.due_by.Before(now())`, until: 20*time.Minute + ns},
		{name: "After", cond: `now().After(ticket.due_by)`, until: 20*time.Minute + ns},
		{name: "Equal", cond: `ticket.due_by.Equal(now())`, until: 20 * time.Minute},
		// A duration's Hours(), Minutes() and Seconds().
		{name: "Hours", cond: `(now() - ticket.updated_at).Hours() > 4`, until: time.Hour + ns},
		{name: "Minutes, non-strict", cond: `(now() - ticket.updated_at).Minutes() >= 240`, until: time.Hour},
		{name: "Hours on the right", cond: `4 < (now() - ticket.created_at).Hours()`, until: 150*time.Minute + ns},
		{name: "Minutes left, falling", cond: `(ticket.due_by - now()).Minutes() < 30`, holds: true, until: never},
		{name: "Minutes left, later", cond: `(ticket.due_by - now()).Minutes() < 30`, mod: dueIn(time.Hour), until: 30*time.Minute + ns},
		{name: "Hours equal", cond: `(now() - ticket.updated_at).Hours() == 4`, until: time.Hour},
		{name: "Hours equal, now", cond: `(now() - ticket.updated_at).Hours() == 3`, holds: true, until: ns},
		{name: "Seconds against a field", cond: `(now() - ticket.updated_at).Seconds() > ticket.custom_fields.limit`,
			mod: func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"limit": 14400} }, until: time.Hour + ns},
		{name: "Hours against a string", cond: `(now() - ticket.updated_at).Hours() > ticket.custom_fields.limit`,
			mod: func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"limit": "4"} }, holds: true, wantErr: true, until: ns},
		// Sides of other shapes run as programs of their own.
		{name: "ternary side", cond: `(ticket.priority > 2 ? ticket.due_by : ticket.created_at) < now()`, until: 20*time.Minute + ns},
		{name: "custom field date", cond: `ticket.custom_fields.deadline < now()`,
			mod: func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"deadline": now.Add(time.Hour)} }, until: time.Hour + ns},
		{name: "custom field not a date", cond: `ticket.custom_fields.deadline < now()`,
			mod: func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"deadline": "soon"} }, holds: true, wantErr: true, until: ns},
		{name: "duration of a field", cond: `now() - ticket.created_at > duration(ticket.custom_fields.sla)`,
			mod: func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"sla": "2h"} }, until: 30*time.Minute + ns},
		// What the analysis cannot follow: every instant.
		{name: "let variable side", cond: `let d = duration("4h"); now() - ticket.updated_at > d`, until: ns},
		{name: "until()", cond: `until(ticket.due_by) == "in 20 min"`, holds: true, until: ns},
		{name: "two now()", cond: `now() - ticket.created_at > now() - ticket.updated_at`, until: ns},
		{name: "let", cond: `let age = now() - ticket.updated_at; age > duration("4h")`, until: ns},
		{name: "loop variable", cond: `any([ticket.due_by], {# < now()})`, until: ns},
		{name: "method of now", cond: `now().Hour() >= 12`, holds: true, until: ns},
		{name: "$env", cond: `$env.now() > ticket.due_by`, until: ns},
		{name: "ternary around now()", cond: `(ticket.priority > 2 ? now() : ticket.created_at) > ticket.due_by`, until: ns},
		{name: "now() passed to a builtin", cond: `string(now()) != ""`, holds: true, until: ns},
		// Time-free.
		{name: "time-free if", cond: `ticket.priority >= 3`, holds: true, until: never},
		{name: "now() in the template only", cond: `ticket.priority >= 3`, note: "seen at {{ now() }}", holds: true, until: never},
		{name: "query only", holds: true, until: never},
		{name: "query fails", query: "priority:4", cond: `now() > ticket.due_by`, until: never},
		// Errors of the if are verdicts; rendering errors are not.
		{name: "if fails", cond: `now() - ticket.created_at > duration("1h") && ticket.custom_fields.seats > 10`, holds: true, wantErr: true, until: never},
		{name: "if fails, later atom", cond: `now() > ticket.due_by || ticket.custom_fields.seats > 10`, holds: true, wantErr: true, until: 20*time.Minute + ns},
		{name: "template fails", cond: `ticket.priority >= 3`, note: "{{ ticket.custom_fields.seats + 1 }}", holds: true, renderErr: true, until: never},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustLoad(t, ruleFile(verdictRule("r", cmp.Or(tc.query, "status:open"), tc.cond, cmp.Or(tc.note, "seen"))))
			tk := base(tc.mod)
			vs := s.Verdicts(s.Rules(), tk, now, nil)
			if len(vs) != 1 {
				t.Fatalf("%d verdicts for one rule", len(vs))
			}
			v := vs[0]
			if v.Holds != tc.holds || (v.Err != nil) != tc.wantErr {
				t.Errorf("Holds %v, Err %v; want %v, error %v", v.Holds, v.Err, tc.holds, tc.wantErr)
			}
			want := time.Time{}
			if tc.until != never {
				want = now.Add(tc.until)
			}
			if !v.Until.Equal(want) {
				t.Errorf("Until %v, want %v", v.Until, want)
			}
			// Holds and Err as EvaluateRules says of the if.
			decides, msg := answer(t, s, s.Rules()[0], tk, now)
			if tc.renderErr {
				if msg == "" {
					t.Fatalf("EvaluateRules: no rendering error")
				}
				msg = "" // not the if's: Verdicts does not render
			}
			if decides != v.Holds || msg != errText(v.Err) {
				t.Errorf("EvaluateRules: decides %v, err %q; Verdicts: %v, %q", decides, msg, v.Holds, errText(v.Err))
			}
		})
	}
}

// verdictConds are the ifs the property test replays: the table's, and
// more shapes.
var verdictConds = []string{
	`now() - ticket.updated_at > duration("4h")`,
	`now() - ticket.updated_at >= duration("4h")`,
	`now() - ticket.updated_at < duration("4h")`,
	`now() - ticket.updated_at <= duration("4h")`,
	`has_due(ticket) && ticket.due_by < now()`,
	`ticket.due_by <= now()`,
	`ticket.due_by > now()`,
	`ticket.due_by >= now()`,
	`now() - ticket.created_at > duration("2h") && ticket.priority >= 3`,
	`ticket.due_by - now() < duration("30m")`,
	`ticket.due_by - now() <= duration("30m")`,
	`ticket.due_by - now() > duration("30m")`,
	`ticket.due_by - now() >= duration("30m")`,
	`ticket.fr_due_by - now() < duration("10m") || now() - ticket.created_at > duration("3h")`,
	`duration("4h") < now() - ticket.updated_at`,
	`ticket.updated_at - now() < duration("-4h")`,
	`ticket.updated_at - now() >= duration("-4h")`,
	`now() + duration("1h") > ticket.due_by`,
	`now() - duration("1h") <= ticket.due_by`,
	`!(now() - ticket.updated_at > duration("4h")) && ticket.priority < 4`,
	`now() - ticket.updated_at > duration("4h") || now() > ticket.due_by`,
	`ticket.priority > 2 ? now() > ticket.due_by : now() - ticket.created_at >= duration("1h")`,
	`now() == ticket.due_by`,
	`now() != ticket.fr_due_by`,
	`ticket.due_by.Before(now())`,
	`now().After(ticket.fr_due_by)`,
	`ticket.due_by.Equal(now())`,
	`(now() - ticket.updated_at).Hours() > 4`,
	`(now() - ticket.updated_at).Minutes() <= 150.5`,
	`(ticket.due_by - now()).Minutes() < 30`,
	`2 == (now() - ticket.created_at).Hours()`,
	`(now() - ticket.created_at).Seconds() != 7200`,
	`now().Sub(ticket.created_at).Hours() >= ticket.custom_fields.seats`,
	`duration("90m") + ticket.updated_at <= now() - duration("1h")`,
	`(ticket.priority > 2 ? ticket.due_by : ticket.created_at) < now()`,
	`ticket.custom_fields.deadline >= now()`,
	`now() - ticket.created_at > duration(ticket.custom_fields.sla ?? "1h")`,
	`now() - ticket.due_by + duration("1h") > duration("2h")`,
	`duration("-1h") - (ticket.fr_due_by - now()) <= duration("-30m")`,
	`now().Sub(ticket.updated_at) >= duration("4h")`,
	`ticket.due_by.Sub(now()) < duration("30m")`,
	`ticket.fr_due_by.After(now().Add(duration("-20m")))`,
	`until(ticket.due_by) == "in 20 min"`,
	`now() - ticket.created_at > now() - ticket.updated_at`,
	`now() - ticket.created_at > duration("1h") && ticket.custom_fields.seats > 10`,
	`now() > ticket.due_by || ticket.custom_fields.seats > 10`,
	`ticket.priority >= 3`,
}

// condsFile is a rules file with one rule per if of verdictConds.
func condsFile() string {
	var src strings.Builder
	for i, c := range verdictConds {
		src.WriteString(verdictRule(fmt.Sprintf("r%d", i), "status:open", c, "seen"))
	}
	return ruleFile(src.String())
}

// TestVerdictsHoldUntil is the property that keeps Until honest: for
// random tickets and instants, EvaluateRules gives the verdict's answer at
// every instant tried in [now, Until) (Until − 1ns among them), and at any
// later instant when Until is zero; over the ifs above and over
// rules.example.yaml.
func TestVerdictsHoldUntil(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  *Set
	}{
		{"conds", mustLoad(t, condsFile())},
		{"example", loadExample(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := checkVerdictsHold(t, tc.set, rand.New(rand.NewPCG(25, 7)), 400)
			t.Logf("%d instants checked; %d verdicts with an Until, %d of them changing exactly then", st.tried, st.finite, st.exact)
			if st.exact == 0 {
				t.Fatalf("no verdict changed at its Until: the test data miss the thresholds")
			}
		})
	}
	// One set, several goroutines: Verdicts shares its compiled sides.
	s := mustLoad(t, condsFile())
	for g := range 4 {
		t.Run(fmt.Sprintf("concurrently-%d", g), func(t *testing.T) {
			t.Parallel()
			checkVerdictsHold(t, s, rand.New(rand.NewPCG(uint64(g), 99)), 50)
		})
	}
}

// FuzzVerdicts is TestVerdictsHoldUntil with the fuzzer's seeds.
func FuzzVerdicts(f *testing.F) {
	s := mustLoad(f, condsFile())
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(25), uint64(7))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		checkVerdictsHold(t, s, rand.New(rand.NewPCG(a, b)), 3)
	})
}

type holdStats struct{ tried, finite, exact int }

// checkVerdictsHold checks the property on n random tickets, each at a
// random now, for every rule of s.
func checkVerdictsHold(t testing.TB, s *Set, rng *rand.Rand, n int) holdStats {
	t.Helper()
	rs := s.Rules()
	base := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	// Offsets on a minute grid with a few nanoseconds either side, so
	// that instants land exactly on thresholds as well as near them.
	offset := func(span time.Duration) time.Duration {
		d := time.Duration(rng.Int64N(int64(2*span/time.Minute))-int64(span/time.Minute)) * time.Minute
		return d + time.Duration(rng.IntN(5)-2)
	}
	var vs []Verdict
	var st holdStats
	for range n {
		tk := &sdclient.Ticket{ID: rng.Int64N(1000), Status: []int{2, 2, 3, 4, 6}[rng.IntN(5)], Priority: 1 + rng.IntN(4)}
		tk.CreatedAt = base.Add(offset(8 * time.Hour))
		tk.UpdatedAt = base.Add(offset(80 * time.Hour))
		if rng.IntN(4) > 0 {
			d := base.Add(offset(3 * time.Hour))
			tk.DueBy = &d
		}
		if rng.IntN(2) > 0 {
			d := base.Add(offset(time.Hour))
			tk.FrDueBy = &d
		}
		if rng.IntN(2) > 0 {
			tk.ResponderID = sdclient.Ptr(int64(12))
		}
		if rng.IntN(3) == 0 {
			tk.CustomFields = map[string]any{"seats": rng.IntN(20), "deadline": base.Add(offset(2 * time.Hour)), "sla": []string{"30m", "2h"}[rng.IntN(2)]}
		}
		start := base.Add(offset(4 * time.Hour))
		all := s.Verdicts(rs, tk, start, nil)
		for i, r := range rs {
			// As a replay does: from each Until on, ask again, so that
			// instants exactly on a threshold are tried too.
			v, now := all[i], start
			for step := 0; ; step++ {
				checkVerdict(t, s, r, tk, now, v, rng, &st)
				if v.Until.IsZero() || step == 3 {
					break
				}
				now = v.Until
				vs = s.Verdicts(rs[i:i+1], tk, now, vs)
				v = vs[0]
			}
		}
	}
	return st
}

// checkVerdict checks v, the verdict of r on tk at now, against
// EvaluateRules at now and at instants in [now, Until).
func checkVerdict(t testing.TB, s *Set, r *Rule, tk *sdclient.Ticket, now time.Time, v Verdict, rng *rand.Rand, st *holdStats) {
	t.Helper()
	decides, msg := answer(t, s, r, tk, now)
	if decides != v.Holds || msg != errText(v.Err) {
		t.Fatalf("%s on %s at %v: EvaluateRules decides %v (%q), Verdicts %v (%q)", r.If, ticketTimes(tk), now, decides, msg, v.Holds, errText(v.Err))
	}
	if !v.Until.IsZero() && !v.Until.After(now) {
		t.Fatalf("%s at %v: Until %v is not after now", r.If, now, v.Until)
	}
	// Instants to try: just after now, just before Until, and random
	// ones in between (or beyond, when Until is zero).
	end := v.Until
	if end.IsZero() {
		end = now.Add(1000 * time.Hour)
	} else {
		st.finite++
	}
	checks := []time.Time{now.Add(time.Nanosecond), end.Add(-time.Nanosecond), end.Add(-time.Minute)}
	for range 5 {
		checks = append(checks, now.Add(time.Duration(rng.Int64N(int64(end.Sub(now))))))
	}
	for _, at := range checks {
		if at.Before(now) || !at.Before(end) {
			continue
		}
		st.tried++
		d, m := answer(t, s, r, tk, at)
		if d != decides || m != msg {
			t.Fatalf("%s on %s: at %v Verdicts says %v (%q) until %v, but at %v EvaluateRules says %v (%q)",
				r.If, ticketTimes(tk), now, v.Holds, errText(v.Err), v.Until, at, d, m)
		}
	}
	if !v.Until.IsZero() {
		if d, m := answer(t, s, r, tk, v.Until); d != decides || m != msg {
			st.exact++
		}
	}
}

// ticketTimes describes the fields the property test varies.
func ticketTimes(tk *sdclient.Ticket) string {
	return fmt.Sprintf("ticket priority %d, created %v, updated %v, due %v, fr due %v, custom %v",
		tk.Priority, tk.CreatedAt, tk.UpdatedAt, deref(tk.DueBy), deref(tk.FrDueBy), tk.CustomFields)
}

// BenchmarkVerdicts measures ns per verdict for a rule whose if reads
// now() and for a time-free one, over realistic tickets.
func BenchmarkVerdicts(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"time", ruleFile(verdictRule("r", "priority:>1", `now() - ticket.updated_at > duration("4h") && ticket.priority >= 2`, "seen"))},
		{"overdue", ruleFile(verdictRule("r", "priority:>1", `has_due(ticket) && ticket.due_by < now()`, "seen"))},
		{"time-free", ruleFile(verdictRule("r", "priority:>1", `ticket.priority >= 2 && ticket.responder_id == 0`, "seen"))},
		// A whole file per call, as a replay asks about a new version of
		// a ticket: the environment is built once for all rules.
		{"50-rules", benchRules(50)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := mustLoad(b, bc.src)
			rs := s.Rules()
			tickets := benchTickets(1000)
			var vs []Verdict
			b.ReportAllocs()
			b.ResetTimer()
			n, timed := 0, 0
			for i := 0; i < b.N; i++ {
				vs = s.Verdicts(rs, tickets[i%len(tickets)], fixtureNow, vs)
				n += len(vs)
				for j := range vs {
					if !vs[j].Until.IsZero() {
						timed++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/verdict")
			b.ReportMetric(100*float64(timed)/float64(n), "%timed")
		})
		// The same (rules, ticket) pairs through EvaluateRules, which
		// renders the actions of those that fire: the cost to compare.
		b.Run(bc.name+"/EvaluateRules", func(b *testing.B) {
			s := mustLoad(b, bc.src)
			rs := s.Rules()
			tickets := benchTickets(1000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.EvaluateRules(rs, tickets[i%len(tickets):i%len(tickets)+1], fixtureNow)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/verdict")
		})
	}
}

// The example file's rules that read now() all do it in ways Verdicts
// follows: a replay skips their tickets until a threshold, never
// re-evaluating them every minute.
func TestVerdictsFollowExampleRules(t *testing.T) {
	s := loadExample(t)
	n := 0
	for _, r := range s.Rules() {
		if r.cond == nil || !r.cond.usesNow {
			continue
		}
		n++
		if a := r.cond.now; a == nil || a.opaque || len(a.atoms) == 0 {
			t.Errorf("rule %s: if %q reads now() in a way Verdicts does not follow", r.Name, r.If)
		}
	}
	if n == 0 {
		t.Fatal("the example file has no rule whose if reads now()")
	}
}

// Verdicts answers in the order of the rules it is given, says which
// query failed, reuses out, and says nothing holds of a nil ticket
// (Evaluate skips it).
func TestVerdictsOrderAndReuse(t *testing.T) {
	s := mustLoad(t, ruleFile(
		verdictRule("urgent", "priority:4", "", "u")+
			verdictRule("overdue", "status:open", `ticket.due_by < now()`, "o")+
			verdictRule("any", "status:open", "", "a")))
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	due := now.Add(time.Hour)
	tk := &sdclient.Ticket{ID: 1, Status: 2, Priority: 2, DueBy: &due}
	rs := []*Rule{s.Rule("any"), s.Rule("overdue"), s.Rule("urgent")}
	out := make([]Verdict, 5)
	got := s.Verdicts(rs, tk, now, out)
	// overdue's if says no until due; urgent's query does not hold
	want := []Verdict{{Holds: true}, {Until: due.Add(time.Nanosecond)}, {QueryFails: true}}
	if len(got) != len(want) || &got[0] != &out[0] {
		t.Fatalf("got %d verdicts (reusing out: %v), want %d in out", len(got), &got[0] == &out[0], len(want))
	}
	for i := range want {
		if got[i].Holds != want[i].Holds || got[i].Err != nil || !got[i].Until.Equal(want[i].Until) || got[i].QueryFails != want[i].QueryFails {
			t.Errorf("rule %s: %+v, want %+v", rs[i].Name, got[i], want[i])
		}
	}
	got = s.Verdicts(rs, nil, now, got)
	if len(got) != len(rs) {
		t.Fatalf("nil ticket: %d verdicts for %d rules", len(got), len(rs))
	}
	for i, v := range got {
		if v != (Verdict{}) {
			t.Errorf("nil ticket, rule %s: %+v, want nothing", rs[i].Name, v)
		}
	}
}

// FuzzVerdictsIf checks the property on arbitrary ifs: whatever an if
// that loads does with now(), its verdict stands until its Until.
func FuzzVerdictsIf(f *testing.F) {
	for _, c := range verdictConds {
		f.Add(c, uint64(1))
	}
	f.Fuzz(func(t *testing.T, cond string, seed uint64) {
		if strings.ContainsAny(cond, "\r\n") || strings.TrimSpace(cond) == "" {
			return
		}
		s, err := Load("f.yaml", []byte(ruleFile(verdictRule("r", "status:open", cond, "seen"))))
		if err != nil {
			return
		}
		checkVerdictsHold(t, s, rand.New(rand.NewPCG(seed, 3)), 3)
	})
}

// TestReadFields lists what a rule's verdict and actions read of a
// ticket, and says when that cannot be listed: a replay skips asking a
// rule again about a change of none of them.
func TestReadFields(t *testing.T) {
	cases := []struct {
		name, rule   string
		query, exprs []string
		all          bool
	}{
		{"query only", `query: "status:open AND tag:'vip'"
    actions: [{note: "seen"}]`, []string{"status:open", "tag"}, nil, false},
		{"if and template", `query: "priority:4"
    if: 'now() - ticket.updated_at > duration("1h")'
    actions: [{note: "{{ ticket.subject }} {{ ticket.id }}"}]`, []string{"priority"}, []string{"updated_at", "subject", "id"}, false},
		{"has_due reads due_by", `query: "status:3"
    if: 'has_due(ticket) && ticket.due_by < now()'
    actions: [{note: "late"}]`, []string{"status"}, []string{"due_by"}, false},
		{"the ticket whole", `query: "status:3"
    if: 'len(string(ticket)) > 0'
    actions: [{note: "x"}]`, []string{"status"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := mustLoad(t, "version: 1\nrules:\n  - name: r\n    "+tc.rule+"\n")
			query, exprs, all := set.Rule("r").ReadFields()
			if all != tc.all {
				t.Fatalf("all = %v, want %v (query %v, exprs %v)", all, tc.all, query, exprs)
			}
			if !slices.Equal(query, tc.query) {
				t.Errorf("query fields %v, want %v", query, tc.query)
			}
			if !tc.all && !slices.Equal(exprs, tc.exprs) {
				t.Errorf("expression fields %v, want %v", exprs, tc.exprs)
			}
		})
	}
}

// VerdictsWith reusing one buffer over tickets that differ, and over one
// ticket at other times, says what Verdicts says of each, for every rule
// of the example file: nothing of one ticket (its tags, custom fields,
// step budget, clock) carries over to another, nor one call's clock to
// the next.
func TestVerdictsWithReusesItsBuffer(t *testing.T) {
	s := loadExample(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	due := now.Add(-time.Hour)
	tickets := []*sdclient.Ticket{
		ticket(1, func(tk *sdclient.Ticket) { tk.Priority, tk.Tags, tk.DueBy = 4, []string{"vip"}, &due }),
		ticket(2, func(tk *sdclient.Ticket) { tk.CustomFields = map[string]any{"site": "Zurich"} }),
		ticket(3, func(tk *sdclient.Ticket) { tk.Status, tk.UpdatedAt = sdclient.StatusPending, now.Add(-48*time.Hour) }),
		nil,
		ticket(4, nil),
	}
	var buf VerdictBuf
	holds := 0
	for round := range 2 {
		for i, tk := range tickets {
			// Asked again at another time, the same ticket gets the
			// environment buf kept of it, at the new now.
			for _, at := range []time.Time{now.Add(time.Duration(round*i) * time.Hour), now.Add(time.Duration(round*i-50) * time.Hour)} {
				got := s.VerdictsWith(&buf, s.Rules(), tk, at, nil)
				want := s.Verdicts(s.Rules(), tk, at, nil)
				for k := range want {
					g, w := got[k], want[k]
					if g.Holds != w.Holds || !g.Until.Equal(w.Until) || (g.Err == nil) != (w.Err == nil) || g.QueryFails != w.QueryFails {
						t.Errorf("round %d, ticket %d, rule %s: got %+v, want %+v", round, i, s.Rules()[k].Name, g, w)
					}
					if w.Holds {
						holds++
					}
				}
			}
		}
	}
	if holds == 0 {
		t.Fatal("no rule holds of any ticket: the test would prove nothing")
	}
}

// A rule's Place is its place in the file, whatever its name: the order
// the planner breaks ties by.
func TestRulePlace(t *testing.T) {
	s := mustLoad(t, ruleFile(
		verdictRule("zeta", "status:open", "", "z")+
			verdictRule("alpha", "priority:4", "", "a")+
			verdictRule("mid", "status:open", "", "m")))
	for want, name := range []string{"zeta", "alpha", "mid"} {
		if got := s.Rule(name).Place(); got != want {
			t.Errorf("%s: place %d, want %d", name, got, want)
		}
	}
}

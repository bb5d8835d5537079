package rules

import (
	"math"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

// Verdict is what a rule says of one ticket at one instant.
type Verdict struct {
	// Holds: the query holds and the if is true, or failed (Err):
	// Evaluate would return a decision.
	Holds bool
	// Err is why the if failed at run time (Evaluate's Decision.Err, same
	// text). An error rendering the actions is not one: Verdicts does not
	// render, so such a rule Holds with a nil Err.
	Err error
	// Until is the first instant after now at which Holds or Err may
	// differ while the ticket stays as it is (it may be earlier than the
	// real change, never later); zero: never, because the if does not
	// read now() or the query does not hold. A query never reads the
	// clock: sdclient/filter has no relative dates (its dates and
	// datetimes are absolute, compared with the ticket's own fields), so
	// its answer changes only with the ticket.
	Until time.Time
	// QueryFails: the query does not hold (the if was not asked). The
	// verdict then changes only with the fields the query reads.
	QueryFails bool
}

// Verdicts evaluates rs on t at now without rendering actions (the
// ticket's expression environment built once, as Evaluate does) and
// appends one Verdict per rule, in the order of rs, to out[:0]. Holds and
// Err are what EvaluateRules says of the if; Until is when that may change
// with time alone, so that a replay can skip a (rule, ticket) until the
// ticket changes or Until comes. Like Evaluate it does no I/O and is safe
// for concurrent use.
//
// Until is computed from the if's atoms that read now(): comparisons of
// times or durations whose one now() is reached through + and - (or a
// time's Add and Sub) only: now() - ticket.updated_at > duration("4h"),
// ticket.due_by < now(), ticket.due_by.Before(now()); and comparisons of
// a number with such a duration's Hours(), Minutes() or Seconds()
// ((now() - ticket.created_at).Hours() > 4), which grow with it. Each side of such an atom moves with time
// at slope +1, -1 or 0, so the instant it flips follows from the two sides'
// values at now; the if is a boolean function of its atoms and of values
// that do not depend on time, so it can change only where an atom flips.
// Any other use of now() (until(), now() passed to a function, a method
// of it such as Hour(), a comparison with a loop's or a let's variable,
// two now() in one comparison) makes Until now + 1ns: evaluate again at
// every instant.
//
// A missing due date is the zero time, two thousand years back: its
// distance to now saturates (time.Time.Sub), which keeps a side monotone
// and moving no faster than the clock, so the computed instant stays
// conservative; a duration sum that overflows makes Until now + 1ns. A
// side of an unusual shape (a custom field, a function's result) runs as
// its own program, whose duration arithmetic is assumed not to wrap
// around (values within ±292 years).
func (s *Set) Verdicts(rs []*Rule, t *sdclient.Ticket, now time.Time, out []Verdict) []Verdict {
	return s.VerdictsWith(&VerdictBuf{}, rs, t, now, out)
}

// VerdictBuf is the scratch of VerdictsWith, reused from call to call so
// that a replay asking millions of times allocates little. It keeps what
// it derived from the last *sdclient.Ticket it was given, so a ticket
// must not change while it is handed to calls with the same buf (a new
// version is a new Ticket). A VerdictBuf is not safe for concurrent use;
// its zero value is ready.
type VerdictBuf struct {
	rec   ticketRecord
	cache termCache
	now   time.Time
	nowFn func() time.Time // returns now
	steps stepCounter
	empty map[string]any // the custom fields of a ticket without any
	// The environment of the ticket last evaluated, boxed once: a replay
	// asks about one version of a ticket many times (at each run, at
	// each probe of a bisection), and boxing its environment anew was a
	// third of what a replay allocated.
	envSet *Set
	envOf  *sdclient.Ticket
	envE   Env
	envAny any
}

// VerdictsWith is Verdicts with buf's scratch.
func (s *Set) VerdictsWith(buf *VerdictBuf, rs []*Rule, t *sdclient.Ticket, now time.Time, out []Verdict) []Verdict {
	out = out[:0]
	if t == nil { // as Evaluate, which skips it
		for range rs {
			out = append(out, Verdict{})
		}
		return out
	}
	m := s.getVM()
	defer s.putVM(m)
	now = now.UTC() // as Evaluate
	buf.setNow(now)
	rec := &buf.rec
	rec.reset(t)
	cache := &buf.cache
	if len(cache.state) != len(s.terms.terms) {
		cache.state = make([]uint8, len(s.terms.terms))
	}
	cache.terms = s.terms.terms
	cache.reset(rec)
	var env any // built on the first rule whose query holds
	var te *TicketEnv
	for _, r := range rs {
		if !s.queryHolds(r, cache, rec) {
			out = append(out, Verdict{QueryFails: true})
			continue
		}
		if r.cond == nil {
			out = append(out, Verdict{Holds: true})
			continue
		}
		if env == nil {
			env, te = buf.env(s, t)
		}
		var v Verdict
		holds, err := r.cond.evalBool(m, env)
		if err != nil {
			v.Holds, v.Err = true, ifError(r, t, err)
		} else {
			v.Holds = holds
		}
		v.Until = r.cond.now.until(m, env, te, now)
		out = append(out, v)
	}
	return out
}

// env is t's expression environment at buf's now, boxed, and its ticket:
// as NewTicketEnv builds it, but built and boxed once for the ticket of
// the calls before, whose new step budget it gets.
func (buf *VerdictBuf) env(s *Set, t *sdclient.Ticket) (any, *TicketEnv) {
	buf.steps = stepCounter{} // this call's budget for the ticket
	if buf.envOf == t && buf.envSet == s {
		return buf.envAny, &buf.envE.Ticket
	}
	e := &buf.envE
	*e = Env{Ticket: ticketFields(t), Now: buf.nowFn}
	e.Ticket.steps = &buf.steps
	if e.Ticket.Tags == nil {
		e.Ticket.Tags = []string{}
	}
	if e.Ticket.CustomFields == nil { // read-only: one empty map will do
		e.Ticket.CustomFields = buf.empty
	}
	ticketEnvWith(&e.Ticket, s.peopleFor())
	buf.envAny, buf.envOf, buf.envSet = *e, t, s
	return buf.envAny, &e.Ticket
}

// setNow readies buf for a call at now.
func (buf *VerdictBuf) setNow(now time.Time) {
	if buf.nowFn == nil {
		buf.nowFn = func() time.Time { return buf.now }
		buf.empty = map[string]any{}
	}
	buf.now = now
}

// nowAnalysis is how an if reads now(), found at load: through atoms
// whose flips can be computed, or not (opaque).
type nowAnalysis struct {
	atoms []nowAtom
	// opaque: now() is read where the analysis cannot bound its effect.
	opaque bool
}

// nowAtom is a comparison `left op right` with exactly one now() in it,
// reached through + and - only: left - right moves with time at slope.
type nowAtom struct {
	op          string // <, <=, >, >=, == or != (Before is <, After >, Equal ==)
	left, right *side
	slope       int // +1 or -1
	// unit, when set, is the method of a duration the atom compares:
	// left.Hours() op right, where right is a number and left the
	// duration that moves with now() at slope.
	unit string
}

// side is one side of an atom. The usual shapes (now(), a ticket's
// date, a constant, + and - of those) are computed here as expr computes
// them, without running a program; any other side is a program of its
// own.
type side struct {
	kind  sideKind
	value tval      // sideConst
	field timeField // sideField
	l, r  *side     // sideAdd, sideSub
	prog  *compiled // sideProg
	num   float64   // sideNum
}

type sideKind uint8

const (
	sideConst sideKind = iota
	sideNow
	sideField
	sideAdd
	sideSub
	sideProg
	sideNum // a number literal (for Hours() and the like)
)

// tval is a time or a duration; ok is false for anything else.
type tval struct {
	t      time.Time
	d      time.Duration
	isTime bool
	ok     bool
}

func toTval(v any) tval {
	switch v := v.(type) {
	case time.Time:
		return tval{t: v, isTime: true, ok: true}
	case time.Duration:
		return tval{d: v, ok: true}
	}
	return tval{}
}

// timeFields are the ticket's dates a side reads without a program.
var timeFields = map[string]timeField{"created_at": createdAt, "updated_at": updatedAt, "due_by": dueBy, "fr_due_by": frDueBy}

type timeField uint8

const (
	createdAt timeField = iota
	updatedAt
	dueBy
	frDueBy
)

func (f timeField) of(e *TicketEnv) time.Time {
	switch f {
	case createdAt:
		return e.CreatedAt
	case updatedAt:
		return e.UpdatedAt
	case dueBy:
		return e.DueBy
	}
	return e.FrDueBy
}

// number evaluates a side that is a number (as expr compares it with a
// float: converted to float64).
func (sd *side) number(m *vm.VM, env any) (float64, bool) {
	switch sd.kind {
	case sideNum:
		return sd.num, true
	case sideProg:
		v, err := sd.prog.run(m, env)
		if err != nil {
			return 0, false
		}
		return toFloat(v)
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float32:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// eval computes the side at now for the ticket of env (e is env's).
func (sd *side) eval(m *vm.VM, env any, e *TicketEnv, now time.Time) tval {
	switch sd.kind {
	case sideConst:
		return sd.value
	case sideNow:
		return tval{t: now, isTime: true, ok: true}
	case sideField:
		return tval{t: sd.field.of(e), isTime: true, ok: true}
	case sideAdd, sideSub:
		return arith(sd.kind, sd.l.eval(m, env, e, now), sd.r.eval(m, env, e, now))
	case sideNum:
		return tval{}
	}
	v, err := sd.prog.run(m, env)
	if err != nil {
		return tval{}
	}
	return toTval(v)
}

// arith is expr's + and - of times and durations (vm/runtime Add and
// Subtract); any other pair is not a tval, and neither is a duration that
// overflows (expr's would wrap around, and the side would no longer move
// steadily with time).
func arith(k sideKind, a, b tval) tval {
	if !a.ok || !b.ok {
		return tval{}
	}
	switch {
	case a.isTime && b.isTime && k == sideSub:
		return tval{d: a.t.Sub(b.t), ok: true} // saturates, which keeps it monotone
	case a.isTime && !b.isTime:
		d, ok := signed(k, b.d)
		if !ok {
			return tval{}
		}
		return tval{t: a.t.Add(d), isTime: true, ok: true}
	case !a.isTime && b.isTime && k == sideAdd:
		return tval{t: b.t.Add(a.d), isTime: true, ok: true}
	case !a.isTime && !b.isTime:
		bd, ok := signed(k, b.d)
		if !ok {
			return tval{}
		}
		d := a.d + bd
		if (bd > 0 && d < a.d) || (bd < 0 && d > a.d) {
			return tval{} // overflowed
		}
		return tval{d: d, ok: true}
	}
	return tval{}
}

// signed is d as the operation k adds it: -d for a subtraction; not ok
// when -d overflows.
func signed(k sideKind, d time.Duration) (time.Duration, bool) {
	if k != sideSub {
		return d, true
	}
	if d == math.MinInt64 {
		return 0, false
	}
	return -d, true
}

// until returns the first instant after now at which an atom of a may
// flip, zero when none can (or a is nil: the if does not read now()).
func (a *nowAnalysis) until(m *vm.VM, env any, e *TicketEnv, now time.Time) time.Time {
	if a == nil {
		return time.Time{}
	}
	soon := now.Add(time.Nanosecond)
	if a.opaque {
		return soon
	}
	var first time.Time
	for i := range a.atoms {
		dist, flips, ok := a.atoms[i].flip(m, env, e, now)
		if !ok {
			return soon
		}
		if !flips {
			continue
		}
		if at := now.Add(dist); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// flip returns how long after now the atom's answer may change (at least
// 1ns), or flips false when it never does; ok is false when its sides are
// not both times or both durations at now, or one failed: the caller then
// assumes the worst.
func (x *nowAtom) flip(m *vm.VM, env any, e *TicketEnv, now time.Time) (dist time.Duration, flips, ok bool) {
	if x.unit != "" {
		return x.flipScaled(m, env, e, now)
	}
	l := x.left.eval(m, env, e, now)
	r := x.right.eval(m, env, e, now)
	var d time.Duration // left - right at now, saturated
	switch {
	case !l.ok || !r.ok || l.isTime != r.isTime:
		return 0, false, false
	case l.isTime:
		d = l.t.Sub(r.t) // saturates, as subSat
	default:
		d = subSat(l.d, r.d)
	}
	dist, flips = flipAfter(d, x.slope, x.op)
	return dist, flips, true
}

// flipScaled is flip for left.Hours() op right (or Minutes, Seconds).
// The method is monotone, so whether the atom holds depends on whether
// the duration is past a threshold, found by bisection over every
// duration; from there it is flipAfter's comparison of durations.
func (x *nowAtom) flipScaled(m *vm.VM, env any, e *TicketEnv, now time.Time) (dist time.Duration, flips, ok bool) {
	d := x.left.eval(m, env, e, now)
	c, isNum := x.right.number(m, env)
	if !d.ok || d.isTime || !isNum {
		return 0, false, false
	}
	scale := durationUnits[x.unit]
	holds := func(v time.Duration) bool { return compareFloat(scale(v), x.op, c) }
	// soonest merges the flips of `d op' threshold` for each threshold.
	soonest := func(op string, threshold time.Duration, found bool) {
		if !found || threshold == math.MinInt64 { // holds always or never
			return
		}
		if dt, f := flipAfter(subSat(d.d, threshold), x.slope, op); f && (!flips || dt < dist) {
			dist, flips = dt, true
		}
	}
	switch x.op {
	case ">", ">=": // holds from the first duration where it holds
		t, found := firstTrue(holds)
		soonest(">=", t, found)
	case "<", "<=": // holds until the first duration where it does not
		t, found := firstTrue(func(v time.Duration) bool { return !holds(v) })
		soonest("<", t, found)
	default: // == and !=: the durations whose scale is c are [lo, hi)
		lo, found := firstTrue(func(v time.Duration) bool { return scale(v) >= c })
		soonest(">=", lo, found)
		hi, found := firstTrue(func(v time.Duration) bool { return scale(v) > c })
		soonest("<", hi, found)
	}
	return dist, flips, true
}

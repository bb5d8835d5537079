package oncall

import (
	"fmt"
	"strings"
	"time"
)

// Shift is one stretch of time during which one member of a schedule is on
// call: a rotation shift, or the part of it left by overrides, or an
// override.
type Shift struct {
	Schedule string
	Member   string
	Start    time.Time // inclusive
	End      time.Time // exclusive
	Override bool
}

// wall returns t's reading on the schedule's wall clock, as a UTC time, so
// that adding hours to it is wall-clock arithmetic.
func (s *Schedule) wall(t time.Time) time.Time {
	l := t.In(s.Location)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant returns the instant at which the schedule's wall clock reads w.
// A reading skipped by a spring-forward change maps to the end of the gap;
// a reading repeated by a fall-back change maps to its first occurrence.
func (s *Schedule) instant(w time.Time) time.Time {
	t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), s.Location)
	if s.wall(t).Equal(w) {
		// A reading that occurs twice (fall-back) maps to its first
		// occurrence, whichever Go picked.
		for _, d := range []time.Duration{time.Hour, 30 * time.Minute} {
			if e := t.Add(-d); s.wall(e).Equal(w) {
				return e
			}
		}
		return t
	}
	// w does not exist locally (a spring-forward gap): the handoff happens
	// at the first instant the clock reads w or later, found by bisection
	// (the wall clock only moves forward across a gap).
	lo, hi := t.Add(-3*time.Hour), t.Add(3*time.Hour)
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if s.wall(mid).Before(w) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi.Truncate(time.Second)
}

// boundary returns the instant shift k starts.
func (s *Schedule) boundary(k int64) time.Time {
	return s.instant(s.anchor.Add(time.Duration(k) * s.Rotation))
}

// slot returns the rotation shift containing t (overrides ignored).
func (s *Schedule) slot(t time.Time) (int64, time.Time, time.Time) {
	k := floorDiv(s.wall(t).Sub(s.anchor), s.Rotation)
	// The wall-clock estimate can be one off around a clock change.
	for guard := 0; guard < 8 && s.boundary(k).After(t); guard++ {
		k--
	}
	for guard := 0; guard < 8 && !s.boundary(k+1).After(t); guard++ {
		k++
	}
	return k, s.boundary(k), s.boundary(k + 1)
}

// memberOf returns the member of rotation shift k: the next in the rota
// after the member of the shift before, counting only shifts that exist.
//
// A shift is empty when a spring-forward gap swallows its whole wall-clock
// interval: with an hourly rotation, the shift from 02:00 to 03:00 on the
// night the clock jumps from 02:00 to 03:00. Its member is not skipped:
// whoever's handoff fell into the gap starts at the first instant after it
// (03:00) and keeps the hour, the later handoffs of the day stay on the
// wall clock (04:00, 05:00, ...), and each member after them moves up one
// place. So the rota order never breaks and nobody has a zero-length
// shift; the price is that the pattern by time of day moves by one member
// at each such change. Rotations whose handoffs cannot fall twice into one
// gap (a 2-hour rotation, or any handoff not on the hour across a one-hour
// gap) never have an empty shift: their handoff in the gap simply happens
// at its end and the shift before it is that much shorter.
func (s *Schedule) memberOf(k int64) string {
	n := int64(len(s.Members))
	i := s.rotaIndex(k)
	return s.Members[((i%n)+n)%n]
}

// rotaIndex returns the place in the rota of rotation shift k (shift 0
// has place 0): k less the empty shifts between shift 0 and shift k.
func (s *Schedule) rotaIndex(k int64) int64 {
	if k >= 0 {
		return k - s.emptyShifts(0, k)
	}
	return k + s.emptyShifts(k, 0)
}

// emptyShifts counts the rotation shifts j in [lo, hi) that start and end
// at the same instant because a spring-forward gap swallows them: every
// boundary whose wall-clock reading lies in a gap [a, b) happens at the
// gap's end, so shift j is empty when a <= start_j and end_j <= b. It
// walks the zone's transitions between the two shifts (two a year in a
// zone with daylight saving time, none in a fixed zone).
func (s *Schedule) emptyShifts(lo, hi int64) int64 {
	if lo >= hi {
		return 0
	}
	to := s.boundary(hi)
	var n int64
	x := s.boundary(lo).Add(-time.Nanosecond) // a gap ending at shift lo's start counts
	for guard := 0; guard < 1<<20; guard++ {
		_, end := x.In(s.Location).ZoneBounds()
		if end.IsZero() || end.After(to) || !end.After(x) {
			break
		}
		_, before := end.Add(-time.Nanosecond).In(s.Location).Zone()
		_, after := end.In(s.Location).Zone()
		if after > before {
			b := s.wall(end)
			a := b.Add(-time.Duration(after-before) * time.Second)
			first := max(ceilDiv(a.Sub(s.anchor), s.Rotation), lo)
			last := min(floorDiv(b.Sub(s.anchor), s.Rotation)-1, hi-1)
			if last >= first {
				n += last - first + 1
			}
		}
		x = end
	}
	return n
}

// floorDiv is d/r rounded down, for r > 0.
func floorDiv(d, r time.Duration) int64 {
	q := int64(d / r)
	if d%r != 0 && d < 0 {
		q--
	}
	return q
}

// ceilDiv is d/r rounded up, for r > 0.
func ceilDiv(d, r time.Duration) int64 {
	q := int64(d / r)
	if d%r != 0 && d > 0 {
		q++
	}
	return q
}

// OnCall returns the shift under way at t: the override covering t if any,
// otherwise the rotation's shift, shortened to the overrides around it.
func (s *Schedule) OnCall(t time.Time) Shift {
	for _, o := range s.Overrides {
		if !t.Before(o.From) && t.Before(o.To) {
			return Shift{Schedule: s.Name, Member: o.Member, Start: o.From, End: o.To, Override: true}
		}
	}
	k, start, end := s.slot(t)
	for _, o := range s.Overrides {
		if !o.To.After(t) && o.To.After(start) {
			start = o.To
		}
		if o.From.After(t) && o.From.Before(end) {
			end = o.From
		}
	}
	return Shift{Schedule: s.Name, Member: s.memberOf(k), Start: start, End: end}
}

// Next returns the shift that follows the one under way at t.
func (s *Schedule) Next(t time.Time) Shift { return s.OnCall(s.OnCall(t).End) }

// Shifts returns the shifts that overlap [from, to), in order, at most max
// of them; a calendar for the chat and for tests.
func (s *Schedule) Shifts(from, to time.Time, max int) []Shift {
	var out []Shift
	for t := from; t.Before(to) && len(out) < max; {
		sh := s.OnCall(t)
		out = append(out, sh)
		t = sh.End
	}
	return out
}

// Status is who is on call in one schedule: now and next.
type Status struct {
	Schedule string
	TimeZone string
	Now      Shift
	Next     Shift
}

// WhoIsOnCall reports, for every schedule in file order, who is on call at
// now and who comes next: the data of the /oncall command.
func (c *Config) WhoIsOnCall(now time.Time) []Status {
	if c == nil {
		return nil
	}
	out := make([]Status, 0, len(c.Schedules))
	for _, s := range c.Schedules {
		cur := s.OnCall(now)
		out = append(out, Status{Schedule: s.Name, TimeZone: s.Location.String(), Now: cur, Next: s.OnCall(cur.End)})
	}
	return out
}

// RenderStatus renders WhoIsOnCall as plain text, one schedule a line, with
// times in each schedule's zone:
//
//	it-primary: alice@example.com until Mon 2026-03-30 09:00 CEST, then bob@example.com
func RenderStatus(st []Status) string {
	return RenderStatusWith(st, func(member string) string { return member })
}

// RenderStatusWith is RenderStatus with every member written by mention,
// so that a chat can show members as mentions (Slack's <@U...>) while the
// console keeps the plain text. Besides what mention returns, the lines
// hold only schedule names ([a-z0-9-]), times and words: nothing a chat
// would read as markup.
func RenderStatusWith(st []Status, mention func(member string) string) string {
	if len(st) == 0 {
		return "No on-call schedules are configured."
	}
	var b strings.Builder
	for _, x := range st {
		loc, err := time.LoadLocation(x.TimeZone)
		if err != nil {
			loc = time.UTC
		}
		over := ""
		if x.Now.Override {
			over = " (override)"
		}
		nextOver := ""
		if x.Next.Override {
			nextOver = " (override)"
		}
		fmt.Fprintf(&b, "%s: %s%s until %s, then %s%s until %s\n", x.Schedule,
			mention(x.Now.Member), over, x.Now.End.In(loc).Format("Mon 2006-01-02 15:04 MST"),
			mention(x.Next.Member), nextOver, x.Next.End.In(loc).Format("Mon 2006-01-02 15:04 MST"))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

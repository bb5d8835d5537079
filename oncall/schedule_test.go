package oncall_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/oncall"
)

// parse loads the oncall: section of a whole rules file.
func parse(t testing.TB, src string) (*oncall.Config, []oncall.PosError) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	var n *yaml.Node
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "oncall" {
				n = root.Content[i+1]
			}
		}
	}
	return oncall.ParseConfig("rules.yaml", n)
}

func mustParse(t testing.TB, src string) *oncall.Config {
	t.Helper()
	cfg, errs := parse(t, src)
	if len(errs) > 0 {
		var lines []string
		for _, e := range errs {
			lines = append(lines, e.Error())
		}
		t.Fatalf("unexpected errors:\n%s", strings.Join(lines, "\n"))
	}
	return cfg
}

func schedule(t testing.TB, zone, rotation, handoff, start, extra string) *oncall.Schedule {
	t.Helper()
	src := fmt.Sprintf(`oncall:
  schedules:
    - name: s
      time_zone: %s
      rotation: %s
      handoff: "%s"
      start: %s
      members: [alice@example.com, bob@example.com, U0123ABC]
%s`, zone, rotation, handoff, start, extra)
	return mustParse(t, src).Schedule("s")
}

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Handoffs follow the local wall clock across both DST changes, in both
// hemispheres' conventions, for weekly, daily and 12-hour rotations.
func TestRotationAcrossDST(t *testing.T) {
	type shift struct {
		name       string
		at         time.Time
		member     string
		start, end time.Time
		hours      float64
	}
	for _, sc := range []struct {
		zone, rot, handoff, day string
		shifts                  []shift
	}{
		// Zurich: CET (+1) -> CEST (+2) on 2026-03-29 02:00, back on 2026-10-25 03:00.
		{"Europe/Zurich", "1w", "09:00", "2026-01-05", []shift{
			{"zurich weekly spring", utc("2026-03-29 12:00"), "U0123ABC", utc("2026-03-23 08:00"), utc("2026-03-30 07:00"), 167},
			{"zurich weekly autumn", utc("2026-10-25 12:00"), "U0123ABC", utc("2026-10-19 07:00"), utc("2026-10-26 08:00"), 169},
			{"zurich weekly after spring", utc("2026-03-30 07:00"), "alice@example.com", utc("2026-03-30 07:00"), utc("2026-04-06 07:00"), 168},
			{"before start runs backwards", utc("2026-01-01 00:00"), "U0123ABC", utc("2025-12-29 08:00"), utc("2026-01-05 08:00"), 168},
		}},
		{"Europe/Zurich", "1d", "02:30", "2026-03-01", []shift{
			{"zurich daily handoff in the gap", utc("2026-03-29 00:00"), "alice@example.com", utc("2026-03-28 01:30"), utc("2026-03-29 01:00"), 23.5},
		}},
		// New York: EST (-5) -> EDT (-4) on 2026-03-08 02:00, back on 2026-11-01 02:00.
		{"America/New_York", "1w", "09:00", "2026-01-05", []shift{
			{"new york weekly spring", utc("2026-03-08 12:00"), "U0123ABC", utc("2026-03-02 14:00"), utc("2026-03-09 13:00"), 167},
			{"new york weekly autumn", utc("2026-11-01 12:00"), "alice@example.com", utc("2026-10-26 13:00"), utc("2026-11-02 14:00"), 169},
		}},
		{"America/New_York", "12h", "08:00", "2026-01-01", []shift{
			{"new york 12h night spring", utc("2026-03-08 05:00"), "U0123ABC", utc("2026-03-08 01:00"), utc("2026-03-08 12:00"), 11},
			{"new york 12h night autumn", utc("2026-11-01 05:00"), "bob@example.com", utc("2026-11-01 00:00"), utc("2026-11-01 13:00"), 13},
		}},
		{"America/New_York", "1d", "01:30", "2026-10-01", []shift{
			{"new york daily handoff repeated hour", utc("2026-11-01 06:00"), "bob@example.com", utc("2026-11-01 05:30"), utc("2026-11-02 06:30"), 25},
		}},
	} {
		s := schedule(t, sc.zone, sc.rot, sc.handoff, sc.day, "")
		for _, tc := range sc.shifts {
			t.Run(tc.name, func(t *testing.T) {
				got := s.OnCall(tc.at)
				if got.Member != tc.member || !got.Start.Equal(tc.start) || !got.End.Equal(tc.end) || got.Override {
					t.Errorf("OnCall(%v) = %s %v..%v override=%v; want %s %v..%v", tc.at, got.Member, got.Start.UTC(), got.End.UTC(), got.Override, tc.member, tc.start, tc.end)
				}
				if h := got.End.Sub(got.Start).Hours(); h != tc.hours {
					t.Errorf("shift lasts %vh; want %vh", h, tc.hours)
				}
				// Every instant of the shift reports the same shift.
				for _, at := range []time.Time{got.Start, got.End.Add(-time.Nanosecond), got.Start.Add(got.End.Sub(got.Start) / 2)} {
					if again := s.OnCall(at); again != got {
						t.Errorf("OnCall(%v) = %+v; want the same shift %+v", at, again, got)
					}
				}
				next := s.Next(tc.at)
				if !next.Start.Equal(got.End) || next.Member == "" {
					t.Errorf("Next = %+v; want the shift starting at %v", next, got.End)
				}
			})
		}
	}
}

// Local handoff times stay put over a whole year: every shift of a weekly
// Zurich rotation starts at 09:00 local on a Monday, members in turn.
func TestRotationYearInvariant(t *testing.T) {
	s := schedule(t, "Europe/Zurich", "1w", "09:00", "2026-01-05", "")
	shifts := s.Shifts(utc("2026-01-05 08:00"), utc("2027-01-04 08:00"), 100)
	if len(shifts) != 52 {
		t.Fatalf("%d shifts in a year; want 52", len(shifts))
	}
	members := []string{"alice@example.com", "bob@example.com", "U0123ABC"}
	for i, sh := range shifts {
		l := sh.Start.In(s.Location)
		if l.Weekday() != time.Monday || l.Hour() != 9 || l.Minute() != 0 {
			t.Errorf("shift %d starts %v; want Monday 09:00 local", i, l)
		}
		if sh.Member != members[i%3] {
			t.Errorf("shift %d is %s; want %s", i, sh.Member, members[i%3])
		}
		if i > 0 && !shifts[i-1].End.Equal(sh.Start) {
			t.Errorf("gap between shift %d and %d", i-1, i)
		}
	}
}

func TestOverrides(t *testing.T) {
	s := schedule(t, "Europe/Zurich", "1w", "09:00", "2026-01-05", `      overrides:
        - {member: carol@example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
        - {member: bob@example.com, from: "2026-04-07T10:00", to: "2026-04-08T10:00"}
`)
	for _, tc := range []struct {
		at         time.Time
		member     string
		start, end time.Time
		override   bool
	}{
		// The rotation's shift is cut short where the override begins.
		{utc("2026-03-28 12:00"), "U0123ABC", utc("2026-03-23 08:00"), utc("2026-03-28 17:00"), false},
		// The override spans the spring-forward change; its bounds are local.
		{utc("2026-03-28 17:00"), "carol@example.com", utc("2026-03-28 17:00"), utc("2026-03-30 07:00"), true},
		{utc("2026-03-29 12:00"), "carol@example.com", utc("2026-03-28 17:00"), utc("2026-03-30 07:00"), true},
		{utc("2026-03-30 07:00"), "alice@example.com", utc("2026-03-30 07:00"), utc("2026-04-06 07:00"), false},
		// An override inside a shift splits it in two.
		{utc("2026-04-07 07:59"), "bob@example.com", utc("2026-04-06 07:00"), utc("2026-04-07 08:00"), false},
		{utc("2026-04-07 08:00"), "bob@example.com", utc("2026-04-07 08:00"), utc("2026-04-08 08:00"), true},
		{utc("2026-04-08 08:00"), "bob@example.com", utc("2026-04-08 08:00"), utc("2026-04-13 07:00"), false},
	} {
		got := s.OnCall(tc.at)
		if got.Member != tc.member || !got.Start.Equal(tc.start) || !got.End.Equal(tc.end) || got.Override != tc.override {
			t.Errorf("OnCall(%v) = %s %v..%v override=%v; want %s %v..%v override=%v", tc.at, got.Member,
				got.Start.UTC(), got.End.UTC(), got.Override, tc.member, tc.start, tc.end, tc.override)
		}
	}
	if n := s.Next(utc("2026-03-25 12:00")); n.Member != "carol@example.com" || !n.Override {
		t.Errorf("Next before the override = %+v; want carol's override", n)
	}
	if n := s.Next(utc("2026-03-29 12:00")); n.Member != "alice@example.com" || !n.Start.Equal(utc("2026-03-30 07:00")) {
		t.Errorf("Next during the override = %+v; want alice from 2026-03-30 07:00 UTC", n)
	}
}

func TestWhoIsOnCall(t *testing.T) {
	cfg := mustParse(t, fixture(t, "whoisoncall.yaml"))
	now := utc("2026-03-29 12:00")
	st := cfg.WhoIsOnCall(now)
	if len(st) != 2 || st[0].Schedule != "it-primary" || st[1].Schedule != "network" {
		t.Fatalf("WhoIsOnCall = %+v", st)
	}
	if st[0].Now.Member != "carol@example.com" || !st[0].Now.Override || st[0].Next.Member != "alice@example.com" {
		t.Errorf("it-primary = %+v", st[0])
	}
	// 2026-03-29 08:00 EDT is 12:00 UTC: the day shift has just begun.
	if st[1].Now.Member != "U0NET1" || !st[1].Now.Start.Equal(now) || st[1].Next.Member != "U0NET2" {
		t.Errorf("network = %+v", st[1])
	}
	want := "it-primary: carol@example.com (override) until Mon 2026-03-30 09:00 CEST, then alice@example.com until Mon 2026-04-06 09:00 CEST\n" +
		"network: U0NET1 until Sun 2026-03-29 20:00 EDT, then U0NET2 until Mon 2026-03-30 08:00 EDT"
	if got := oncall.RenderStatus(st); got != want {
		t.Errorf("RenderStatus =\n%s\nwant\n%s", got, want)
	}
	if got := oncall.RenderStatus(nil); got != "No on-call schedules are configured." {
		t.Errorf("RenderStatus(nil) = %q", got)
	}
	// A chat renders members its own way; the rest of the lines is the same.
	mention := func(m string) string {
		if strings.HasPrefix(m, "U") {
			return "<@" + m + ">"
		}
		return "[" + m + "]"
	}
	want = "it-primary: [carol@example.com] (override) until Mon 2026-03-30 09:00 CEST, then [alice@example.com] until Mon 2026-04-06 09:00 CEST\n" +
		"network: <@U0NET1> until Sun 2026-03-29 20:00 EDT, then <@U0NET2> until Mon 2026-03-30 08:00 EDT"
	if got := oncall.RenderStatusWith(st, mention); got != want {
		t.Errorf("RenderStatusWith =\n%s\nwant\n%s", got, want)
	}
	if got := oncall.RenderStatusWith(nil, mention); got != "No on-call schedules are configured." {
		t.Errorf("RenderStatusWith(nil) = %q", got)
	}
}

// Around every DST change of a year, in zones that change by an hour or by
// half an hour, forwards and back, any rotation and a handoff inside the
// changed hour: each instant has exactly one shift that contains it,
// consecutive shifts tile time without gaps, overlaps or empty shifts,
// every shift starts at a handoff time on the wall clock or at the end of
// a skipped hour, and the members follow one another in rota order (a
// member whose sub-day shift the skipped hour swallows is not skipped).
func TestShiftsTileTimeAcrossDST(t *testing.T) {
	for _, zone := range []string{"Europe/Zurich", "America/New_York", "Australia/Lord_Howe", "Australia/Sydney"} {
		for _, rot := range []string{"1h", "5h", "12h", "1d", "1w"} {
			for _, handoff := range []string{"00:00", "02:30", "01:45"} {
				s := schedule(t, zone, rot, handoff, "2026-01-01", "")
				for _, w := range dstWindows(t, s.Location, 2026) {
					from, to := w.Add(-30*time.Hour), w.Add(30*time.Hour)
					shifts := s.Shifts(from, to, 1000)
					for i, sh := range shifts {
						if !sh.End.After(sh.Start) {
							t.Fatalf("%s %s %s: empty shift %+v", zone, rot, handoff, sh)
						}
						if i > 0 && !shifts[i-1].End.Equal(sh.Start) {
							t.Fatalf("%s %s %s: shift %d ends %v, next starts %v", zone, rot, handoff, i-1, shifts[i-1].End, sh.Start)
						}
						if i > 0 && sh.Member != successor(shifts[i-1].Member) {
							t.Fatalf("%s %s %s: %s's shift from %v follows %s's: want %s's (a member was skipped)",
								zone, rot, handoff, sh.Member, sh.Start.In(s.Location), shifts[i-1].Member, successor(shifts[i-1].Member))
						}
						if i > 0 && !onHandoff(s, sh.Start, handoff) && !gapEnd(s.Location, sh.Start) {
							t.Fatalf("%s %s %s: shift starts at %v, neither a handoff nor the end of a skipped hour", zone, rot, handoff, sh.Start.In(s.Location))
						}
					}
					for at := from; at.Before(to); at = at.Add(7 * time.Minute) {
						sh := s.OnCall(at)
						if at.Before(sh.Start) || !at.Before(sh.End) {
							t.Fatalf("%s %s %s: OnCall(%v) = %v..%v does not contain it", zone, rot, handoff, at, sh.Start, sh.End)
						}
					}
				}
			}
		}
	}
}

// dstWindows returns the instants at which loc's UTC offset changes in year.
func dstWindows(t *testing.T, loc *time.Location, year int) []time.Time {
	t.Helper()
	var out []time.Time
	at := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	_, off := at.In(loc).Zone()
	for ; at.Year() == year; at = at.Add(15 * time.Minute) {
		if _, o := at.In(loc).Zone(); o != off {
			out = append(out, at)
			off = o
		}
	}
	if len(out) != 2 {
		t.Fatalf("%s: %d offset changes in %d; want 2", loc, len(out), year)
	}
	return out
}

// An hourly rotation whose handoff falls on the hour the spring-forward
// change skips: the member whose 02:00 handoff does not exist starts at
// 03:00, the first instant after the gap, for a full hour; the later
// handoffs of the day stay on the hour; nobody is skipped: the rota goes
// on in order.
func TestHourlyRotationSpringGap(t *testing.T) {
	s := schedule(t, "Europe/Zurich", "1h", "00:00", "2026-03-01", "")
	// 2026-03-29 00:00 CET (23:00 UTC the day before) is shift 672: alice.
	shifts := s.Shifts(utc("2026-03-28 23:00"), utc("2026-03-29 04:00"), 10)
	want := []struct {
		member string
		start  time.Time
		local  string
	}{
		{"alice@example.com", utc("2026-03-28 23:00"), "00:00 CET"},
		{"bob@example.com", utc("2026-03-29 00:00"), "01:00 CET"},
		{"U0123ABC", utc("2026-03-29 01:00"), "03:00 CEST"}, // handoff 02:00 does not exist
		{"alice@example.com", utc("2026-03-29 02:00"), "04:00 CEST"},
		{"bob@example.com", utc("2026-03-29 03:00"), "05:00 CEST"},
	}
	if len(shifts) != len(want) {
		t.Fatalf("%d shifts, want %d: %+v", len(shifts), len(want), shifts)
	}
	for i, w := range want {
		sh := shifts[i]
		if sh.Member != w.member || !sh.Start.Equal(w.start) || sh.End.Sub(sh.Start) != time.Hour {
			t.Errorf("shift %d = %s %v..%v; want %s from %v for 1h", i, sh.Member, sh.Start.UTC(), sh.End.UTC(), w.member, w.start)
		}
		if l := sh.Start.In(s.Location).Format("15:04 MST"); l != w.local {
			t.Errorf("shift %d starts %s local; want %s", i, l, w.local)
		}
	}
	// The rotation goes on in order afterwards, and runs back in order
	// before the schedule's start (and across earlier gaps) as well.
	for _, at := range []time.Time{utc("2026-03-30 12:00"), utc("2026-10-25 00:30"), utc("2027-04-01 00:00"), utc("2025-03-30 01:00")} {
		prev := s.OnCall(at.Add(-time.Hour))
		cur := s.OnCall(at)
		if next := successor(prev.Member); cur.Member != next {
			t.Errorf("at %v: %s follows %s; want %s", at, cur.Member, prev.Member, next)
		}
	}
	if got := s.OnCall(utc("2026-02-28 23:30")); got.Member != "alice@example.com" {
		t.Errorf("the first shift is %s's; want alice's", got.Member)
	}
}

// successor is the member after m in the test schedules' rota.
func successor(m string) string {
	members := []string{"alice@example.com", "bob@example.com", "U0123ABC"}
	for i, x := range members {
		if x == m {
			return members[(i+1)%len(members)]
		}
	}
	return ""
}

// onHandoff reports whether t reads a handoff time of s (started on
// 2026-01-01 at handoff) on s's wall clock.
func onHandoff(s *oncall.Schedule, t time.Time, handoff string) bool {
	l := t.In(s.Location)
	wall := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
	h, err := time.Parse("15:04", handoff)
	if err != nil {
		panic(err)
	}
	anchor := time.Date(2026, 1, 1, h.Hour(), h.Minute(), 0, 0, time.UTC)
	return wall.Sub(anchor)%s.Rotation == 0
}

// gapEnd reports whether loc's clock jumps forward at t.
func gapEnd(loc *time.Location, t time.Time) bool {
	_, before := t.Add(-time.Second).In(loc).Zone()
	_, after := t.In(loc).Zone()
	return after > before
}

// BenchmarkOnCallHourly measures who is on call in an hourly rotation a year
// after its start, across two skipped hours to count.
func BenchmarkOnCallHourly(b *testing.B) {
	s := schedule(b, "Europe/Zurich", "1h", "00:00", "2026-01-01", "")
	at := utc("2027-06-01 12:00")
	for b.Loop() {
		if s.OnCall(at).Member == "" {
			b.Fatal("nobody on call")
		}
	}
}

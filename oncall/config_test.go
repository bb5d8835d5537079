package oncall_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/oncall"
	"gopkg.in/yaml.v3"
)

func TestParseConfig(t *testing.T) {
	cfg := mustParse(t, fixture(t, "example.yaml"))
	s := cfg.Schedule("it-primary")
	if s == nil || s.Location.String() != "Europe/Zurich" || s.Rotation != 7*24*time.Hour || s.Handoff != 9*time.Hour ||
		!s.Start.Equal(utc("2026-01-05 08:00")) || len(s.Members) != 3 || s.Line != 4 {
		t.Fatalf("schedule = %+v", s)
	}
	if len(s.Overrides) != 2 || !s.Overrides[0].From.Equal(utc("2026-03-28 17:00")) || !s.Overrides[0].To.Equal(utc("2026-03-30 07:00")) ||
		!s.Overrides[1].From.Equal(utc("2026-04-01 08:00")) || s.Overrides[1].Member != "dave@example.com" {
		t.Errorf("overrides = %+v", s.Overrides)
	}
	p := cfg.Policy("it-urgent")
	if p == nil || p.Repeat != 1 || len(p.Levels) != 3 {
		t.Fatalf("policy = %+v", p)
	}
	want := []oncall.Level{
		{Kind: oncall.TargetSchedule, Name: "it-primary", Schedule: s, After: 10 * time.Minute, Line: 17},
		{Kind: oncall.TargetPerson, Name: "boss@example.com", After: 15 * time.Minute, Line: 18},
		{Kind: oncall.TargetGroup, Name: "S0GROUP", After: 15 * time.Minute, Line: 19},
	}
	for i, lv := range p.Levels {
		if lv != want[i] {
			t.Errorf("level %d = %+v; want %+v", i+1, lv, want[i])
		}
	}
	if q := cfg.Policy("quiet"); q == nil || q.Repeat != 0 || q.Levels[0].Name != "@it-oncall" {
		t.Errorf("quiet = %+v", q)
	}
	if cfg.Policy("nope") != nil || cfg.Schedule("nope") != nil {
		t.Error("lookup of an unknown name succeeded")
	}
	// No oncall: section, or an empty one, is an empty configuration.
	for _, src := range []string{"version: 1\n", "oncall:\n", "oncall: {}\n"} {
		if cfg := mustParse(t, src); len(cfg.Schedules)+len(cfg.Policies) != 0 {
			t.Errorf("%q gave %+v", src, cfg)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{"everything at once", fixture(t, "errors.yaml"), []string{
			`rules.yaml:4:18: oncall schedule "it-primary": time_zone: unknown time zone "Europe/Zurch": want an IANA name such as Europe/Zurich or UTC`,
			`rules.yaml:5:17: oncall schedule "it-primary": rotation: 0h is zero: want a positive length such as 12h, 1d or 1w`,
			`rules.yaml:6:16: oncall schedule "it-primary": handoff: want a local time of day such as "09:00", got the string "9am"`,
			`rules.yaml:7:14: oncall schedule "it-primary": start: want a date such as 2026-01-05, got the string "next monday"`,
			`rules.yaml:8:16: oncall schedule "it-primary": members: empty: want at least one e-mail address or Slack user id`,
			`rules.yaml:9:7: oncall schedule "it-primary": unknown key "colour" in schedule (want one of name, time_zone, rotation, handoff, start, members, overrides)`,
			`rules.yaml:10:13: oncall schedule "it-primary": duplicate schedule name (first defined at line 3)`,
			`rules.yaml:14:36: oncall schedule "it-primary": member: "not a person" is neither an e-mail address nor a Slack user id such as U0123ABC`,
			`rules.yaml:15:7: oncall schedule: missing time_zone: (an IANA time zone such as Europe/Zurich or UTC)`,
			`rules.yaml:15:7: oncall schedule: missing rotation: (the length of one shift, such as 12h, 1d or 1w)`,
			`rules.yaml:15:7: oncall schedule: missing start: (the date of the first shift, such as 2026-01-05)`,
			`rules.yaml:15:7: oncall schedule: missing members: (a list of e-mail addresses or Slack user ids)`,
			`rules.yaml:15:13: oncall schedule: name "Bad_Name": want lower-case letters, digits and '-' only`,
			`rules.yaml:16:7: oncall schedule: missing name`,
			`rules.yaml:16:7: oncall schedule: missing rotation: (the length of one shift, such as 12h, 1d or 1w)`,
			`rules.yaml:16:7: oncall schedule: missing start: (the date of the first shift, such as 2026-01-05)`,
			`rules.yaml:16:7: oncall schedule: missing members: (a list of e-mail addresses or Slack user ids)`,
			`rules.yaml:24:11: oncall schedule "ok": override 2 (dave@example.com, 2026-03-29T00:00 to 2026-03-29T12:00) overlaps the override at line 23 (carol@example.com, 2026-03-28T18:00 to 2026-03-30T09:00)`,
			`rules.yaml:25:68: oncall schedule "ok": override 3: to 2026-04-01T10:00 is not after from 2026-04-02T10:00`,
			`rules.yaml:26:11: oncall schedule "ok": override 4: missing to`,
			`rules.yaml:26:45: oncall schedule "ok": override 4 from: want a local time such as "2026-03-28T18:00", got the string "tomorrow"`,
			`rules.yaml:29:15: oncall policy "it-urgent": repeat: want a whole number from 0 to 10, got the number -1`,
			`rules.yaml:31:22: oncall policy "it-urgent": level 1: unknown schedule "it-primry" (known: it-primary, ok)`,
			`rules.yaml:32:36: oncall policy "it-urgent": level 2: user and group are mutually exclusive: one target per level`,
			`rules.yaml:33:19: oncall policy "it-urgent": level 3 group: "everyone" is not a Slack user group: want an id such as S0123ABC or a @handle`,
			`rules.yaml:33:36: oncall policy "it-urgent": level 3 after: 30s is too short: want at least 1m`,
			`rules.yaml:34:11: oncall policy "it-urgent": level 4: missing after: (how long to wait for an acknowledgement, such as 10m)`,
			`rules.yaml:35:11: oncall policy "it-urgent": level 5: missing schedule, user or group (whom to page)`,
			`rules.yaml:37:15: oncall policy "empty": levels: empty: want at least one level`,
			`rules.yaml:38:7: oncall policy "nolevels": missing levels: (a list of {schedule|user|group: ..., after: DURATION})`,
			`rules.yaml:39:3: oncall: unknown key "extra" in the oncall section (want one of schedules, policies)`,
		}},
		{"section not a mapping", "oncall: [a]\n", []string{
			`rules.yaml:1:9: oncall: the oncall section: want a mapping, got a list`,
		}},
		{"schedules not a list", "oncall:\n  schedules: it-primary\n", []string{
			`rules.yaml:2:14: oncall: schedules: want a list of schedules, got the string "it-primary"`,
		}},
		{"schedule not a mapping", "oncall:\n  schedules:\n    - it-primary\n", []string{
			`rules.yaml:3:7: oncall schedule: want a mapping with name, time_zone, rotation, start and members, got the string "it-primary"`,
		}},
		{"rotation forms", sched("rotation: 1 week", "rotation: 53w", "rotation: 7", "rotation: 0d0w"), []string{
			`rules.yaml:5:17: oncall schedule "s1": rotation: invalid length "1 week": want a length such as 12h, 1d, 1w or 1d12h (units h, d, w)`,
			`rules.yaml:11:17: oncall schedule "s2": rotation: 53w is too long: want at most 52w`,
			`rules.yaml:17:17: oncall schedule "s3": rotation: want a length such as 12h, 1d, 1w or 1d12h (units h, d, w), got the number 7`,
			`rules.yaml:23:17: oncall schedule "s4": rotation: 0d0w is zero: want a positive length such as 12h, 1d or 1w`,
		}},
		{"start out of range", sched("start: 0000-01-01", "start: 2300-01-01", "start: 1970-01-01"), []string{
			`rules.yaml:7:14: oncall schedule "s1": start: 0000-01-01 is out of range: want a date from 1970 to 2199`,
			`rules.yaml:13:14: oncall schedule "s2": start: 2300-01-01 is out of range: want a date from 1970 to 2199`,
		}},
		{"zone and handoff", sched("handoff: \"24:00\"", "handoff: 9", "time_zone: Local", "time_zone: 2"), []string{
			`rules.yaml:6:16: oncall schedule "s1": handoff: want a local time of day such as "09:00", got the string "24:00"`,
			`rules.yaml:12:16: oncall schedule "s2": handoff: want a local time of day such as "09:00", got the number 9`,
			`rules.yaml:16:18: oncall schedule "s3": time_zone: unknown time zone "Local": want an IANA name such as Europe/Zurich or UTC`,
			`rules.yaml:22:18: oncall schedule "s4": time_zone: want a string, got the number 2`,
		}},
		{"overlap touching is fine, containment is not", sched(`overrides:
        - {member: a@x.io, from: "2026-03-01T09:00", to: "2026-03-02T09:00"}
        - {member: b@x.io, from: "2026-03-02T09:00", to: "2026-03-03T09:00"}
        - {member: c@x.io, from: "2026-03-02T12:00", to: "2026-03-02T13:00"}`), []string{
			`rules.yaml:12:11: oncall schedule "s1": override 3 (c@x.io, 2026-03-02T12:00 to 2026-03-02T13:00) overlaps the override at line 11 (b@x.io, 2026-03-02T09:00 to 2026-03-03T09:00)`,
		}},
		{"policy levels", `oncall:
  policies:
    - name: p
      levels:
        - {schedule: nowhere, after: 10m, colour: red}
        - {user: 5, after: 1h}
        - {user: a@x.io, after: 25h}
        - {user: a@x.io, after: 10}
        - {user: a@x.io, after: soon}
      repeat: 11
    - levels: nothing
`, []string{
			`rules.yaml:5:22: oncall policy "p": level 1: unknown schedule "nowhere" (none are defined)`,
			`rules.yaml:5:43: oncall policy "p": unknown key "colour" in level 1 (want one of schedule, user, group, after)`,
			`rules.yaml:6:18: oncall policy "p": level 2 user: want an e-mail address or a Slack user id such as U0123ABC, got the number 5`,
			`rules.yaml:7:33: oncall policy "p": level 3 after: 25h is too long: want at most 24h`,
			`rules.yaml:8:33: oncall policy "p": level 4 after: want a duration such as 10m or 1h, got the number 10`,
			`rules.yaml:9:33: oncall policy "p": level 5 after: invalid duration "soon": want a duration such as 10m or 1h`,
			`rules.yaml:10:15: oncall policy "p": repeat: want a whole number from 0 to 10, got the number 11`,
			`rules.yaml:11:7: oncall policy: missing name`,
			`rules.yaml:11:15: oncall policy: levels: want a list of {schedule|user|group: ..., after: DURATION}, got the string "nothing"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, errs := parse(t, tc.src)
			if cfg != nil {
				t.Errorf("config %+v returned with errors", cfg)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// sched returns a file whose schedules are valid but for one line each
// (replaced, or added when its key is not a base one); they are named s1,
// s2, ... in order.
func sched(lines ...string) string {
	var b strings.Builder
	b.WriteString("oncall:\n  schedules:\n")
	for i, l := range lines {
		b.WriteString(schedItem(i+1, l))
	}
	return b.String()
}

func schedItem(n int, line string) string {
	base := map[string]string{
		"time_zone": "time_zone: UTC",
		"rotation":  "rotation: 1w",
		"handoff":   `handoff: "09:00"`,
		"start":     "start: 2026-01-05",
		"members":   "members: [alice@example.com]",
	}
	key, _, _ := strings.Cut(line, ":")
	var b strings.Builder
	b.WriteString("    - name: s" + string(rune('0'+n)) + "\n")
	for _, k := range []string{"time_zone", "rotation", "handoff", "start", "members"} {
		v := base[k]
		if k == key {
			v = line
		}
		b.WriteString("      " + v + "\n")
	}
	if _, known := base[key]; !known {
		b.WriteString("      " + line + "\n")
	}
	return b.String()
}

// fixture returns the text of testdata/name: the on-call sections the
// tests share, each written once.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzParseConfig(f *testing.F) {
	f.Add(fixture(f, "example.yaml"))
	f.Add("oncall:\n  schedules:\n    - {name: a, time_zone: UTC, rotation: 1h, start: 2026-01-01, members: [U0AA]}\n  policies:\n    - {name: p, repeat: 10, levels: [{schedule: a, after: 1m}]}\n")
	f.Add("oncall: &a\n  schedules: *a\n")
	// Once wrapped the rotation arithmetic (a shift in the year -293).
	f.Add("oncall: {schedules: [{name: a, time_zone: America/New_York, rotation: 1d, start: 0000-01-01, members: [0@0]}]}")
	f.Add("oncall:\n  schedules:\n    - {name: a, time_zone: America/New_York, rotation: 1d, handoff: \"02:30\", start: 2026-03-08, members: [a@b.c], overrides: [{member: x@y.z, from: \"2026-03-08T02:30\", to: \"2026-03-08T03:30\"}]}\n")
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		root := doc.Content[0]
		n := root
		if root.Kind == yaml.MappingNode && len(root.Content) >= 2 {
			n = root.Content[1]
		}
		cfg, errs := oncall.ParseConfig("f.yaml", n)
		if (cfg == nil) == (len(errs) == 0) {
			t.Fatalf("config %v with %d errors", cfg != nil, len(errs))
		}
		for _, e := range errs {
			if e.Line < 1 || e.Col < 1 || e.File != "f.yaml" || !strings.HasPrefix(e.Msg, "oncall") {
				t.Fatalf("badly positioned error %+v", e)
			}
		}
		if cfg == nil {
			return
		}
		// A valid configuration always answers who is on call, and each
		// shift contains the instant asked about.
		at := time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)
		for _, st := range cfg.WhoIsOnCall(at) {
			if st.Now.Member == "" || st.Now.Start.After(at) || !st.Now.End.After(at) || !st.Next.Start.Equal(st.Now.End) {
				t.Fatalf("status %+v at %v", st, at)
			}
		}
		for _, p := range cfg.Policies {
			pg := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: 1, Policy: p.Name}, at)
			for i := 0; ; i++ {
				if _, ok := pg.Advance(p, at); !ok {
					break
				}
				pg.Sent(pg.Step, 0, at)
				if i > (oncall.MaxRepeat+1)*oncall.MaxLevels {
					t.Fatal("escalation never ends")
				}
			}
		}
	})
}

func TestPolicyInvolves(t *testing.T) {
	cfg := mustParse(t, fixture(t, "involves.yaml"))
	for _, tc := range []struct {
		name, policy, email, slackID string
		want                         bool
	}{
		{"schedule member by e-mail", "it-urgent", "alice@example.com", "UALICE", true},
		{"e-mail matches whatever the case", "it-urgent", "ALICE@example.COM", "", true},
		{"e-mail with stray spaces", "it-urgent", " alice@example.com ", "", true},
		{"schedule member by Slack id", "it-urgent", "someone@example.com", "U0123ABC", true},
		{"Slack id alone", "it-urgent", "", "U0123ABC", true},
		{"Slack ids match exactly", "it-urgent", "", "u0123abc", false},
		{"override member", "it-urgent", "carol@example.com", "UCAROL", true},
		{"user: level by e-mail", "it-urgent", "boss@example.com", "", true},
		{"user: level by Slack id", "it-urgent", "", "U0BOSS", true},
		{"member of a schedule the policy does not name", "it-urgent", "nina@example.com", "UNINA", false},
		{"outsider", "it-urgent", "mallory@example.com", "UMALLORY", false},
		{"a Slack id is not an e-mail", "it-urgent", "U0123ABC", "", false},
		{"an e-mail is not a Slack id", "it-urgent", "", "alice@example.com", false},
		{"nobody", "it-urgent", "", "", false},
		{"group levels involve nobody", "groups-only", "alice@example.com", "U0123ABC", false},
		{"unknown policy", "gone", "alice@example.com", "U0123ABC", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cfg.Policy(tc.policy).Involves(tc.email, tc.slackID); got != tc.want {
				t.Errorf("policy %s Involves(%q, %q) = %v, want %v", tc.policy, tc.email, tc.slackID, got, tc.want)
			}
		})
	}
}

// mapGroups resolves groups from a map and counts the lookups.
type mapGroups struct {
	members map[string][]string
	calls   int
}

func (m *mapGroups) GroupMembers(_ context.Context, group string) ([]string, error) {
	m.calls++
	ids, ok := m.members[group]
	if !ok {
		return nil, errors.New("no_such_subteam")
	}
	return ids, nil
}

// The people of a group: level may act on the policy's pages: they were
// paged through the group.
func TestPolicyInvolvesWithGroups(t *testing.T) {
	cfg := mustParse(t, fixture(t, "involves.yaml"))
	g := &mapGroups{members: map[string][]string{"S0GROUP": {"UGRACE"}, "@it-oncall": {"UHANDLE"}}}
	for _, tc := range []struct {
		name, policy, email, slackID string
		want, wantErr                bool
	}{
		{"member of the group level by Slack id", "it-urgent", "grace@example.com", "UGRACE", true, false},
		{"member of a group given by @handle", "groups-only", "", "UHANDLE", true, false},
		{"a group member of another policy", "groups-only", "", "UGRACE", false, false},
		{"schedule member without asking Slack", "it-urgent", "alice@example.com", "", true, false},
		{"outsider", "it-urgent", "mallory@example.com", "UMALLORY", false, false},
		{"no Slack id: groups cannot tell", "it-urgent", "grace@example.com", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cfg.Policy(tc.policy).InvolvesWithGroups(t.Context(), tc.email, tc.slackID, g)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("policy %s InvolvesWithGroups(%q, %q) = %v, %v; want %v (error %v)", tc.policy, tc.email, tc.slackID, got, err, tc.want, tc.wantErr)
			}
		})
	}
	// Involves alone still counts no group member.
	if cfg.Policy("it-urgent").Involves("grace@example.com", "UGRACE") {
		t.Error("Involves counts a group member")
	}
	// A person the rota names is found without a lookup.
	g.calls = 0
	if ok, _ := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "U0BOSS", g); !ok || g.calls != 0 {
		t.Errorf("user level: ok %v after %d group lookups, want true after none", ok, g.calls)
	}
	// A group that cannot be resolved counts nobody and says so.
	broken := &mapGroups{}
	ok, err := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "UGRACE", broken)
	if ok || err == nil || !strings.Contains(err.Error(), "S0GROUP") {
		t.Errorf("unresolvable group: %v, %v; want false and an error naming S0GROUP", ok, err)
	}
	// nil resolver: Involves.
	if ok, err := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "UGRACE", nil); ok || err != nil {
		t.Errorf("nil resolver: %v, %v", ok, err)
	}
	if got := cfg.Policy("it-urgent").Groups(); len(got) != 1 || got[0] != "S0GROUP" {
		t.Errorf("Groups = %q", got)
	}
	var none *oncall.Policy
	if ok, err := none.InvolvesWithGroups(t.Context(), "", "UGRACE", g); ok || err != nil || none.Groups() != nil {
		t.Errorf("nil policy: %v, %v", ok, err)
	}
}

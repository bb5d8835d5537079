package rules

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// setSummary prints what a loaded set does, without line numbers: its
// channels, each rule's fields, the on-call section and the plan over the
// fixture tickets.
func setSummary(t *testing.T, s *Set) string {
	t.Helper()
	var b strings.Builder
	ch := s.Channels()
	names := make([]string, 0, len(ch))
	for k := range ch {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "channel %s=%s\n", k, ch[k])
	}
	for _, r := range s.Rules() {
		fmt.Fprintf(&b, "rule %s query=%q if=%q every=%s cron=%q once=%+v\n", r.Name, r.Query, r.If, r.Every, r.Cron, r.Once)
	}
	if oc := s.OnCall(); oc != nil {
		for _, sc := range oc.Schedules {
			fmt.Fprintf(&b, "schedule %s %s rotation=%s handoff=%s start=%s members=%v", sc.Name, sc.Location, sc.Rotation, sc.Handoff, sc.Start, sc.Members)
			for _, o := range sc.Overrides {
				fmt.Fprintf(&b, " override=%s[%s,%s)", o.Member, o.From, o.To)
			}
			b.WriteString("\n")
		}
		for _, p := range oc.Policies {
			fmt.Fprintf(&b, "policy %s repeat=%d", p.Name, p.Repeat)
			for _, lv := range p.Levels {
				fmt.Fprintf(&b, " [%s %s after %s]", lv.Kind, lv.Name, lv.After)
			}
			b.WriteString("\n")
		}
	}
	tickets := fixtureTickets(t)
	if err := WritePlan(&b, Plan(s, tickets, fixtureNow)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMergeKeysLoadLikeWrittenOut checks that a file sharing parts through
// anchors, aliases and merge keys loads into exactly the rules of the same
// file written out in full.
func TestMergeKeysLoadLikeWrittenOut(t *testing.T) {
	const head = "version: 1\nchannels: {oncall: \"#it-oncall\", desk: \"#it-desk\"}\n"
	tests := []struct {
		name, merged, written string
	}{
		{"defaults from x- keys, explicit keys win, merges in actions", head + `
x-defaults: &defaults
  every: 5m
  once: episode
x-open: &open
  query: "status:open"
rules:
  - <<: *defaults
    name: urgent
    query: "priority:4"
    actions: [{note: "urgent {{ ticket.id }}"}]
  - <<: [*open, *defaults]
    name: overdue
    if: has_due(ticket) && ticket.due_by < now()
    once: ticket
    actions:
      - set: &escalate {priority: 4, tags: [overdue]}
      - alert: &deskalert
          channel: desk
          text: "Overdue #{{ ticket.id }}"
  - name: unassigned
    <<: *open
    query: "status:open AND agent_id:0"
    if: now() - ticket.created_at > duration("15m")
    actions:
      - alert: {<<: *deskalert, mention: "@it"}
      - set: {<<: *escalate, status: 2}
`, head + `
rules:
  - name: urgent
    query: "priority:4"
    every: 5m
    once: episode
    actions: [{note: "urgent {{ ticket.id }}"}]
  - name: overdue
    query: "status:open"
    if: has_due(ticket) && ticket.due_by < now()
    every: 5m
    once: ticket
    actions:
      - set: {priority: 4, tags: [overdue]}
      - alert: {channel: desk, text: "Overdue #{{ ticket.id }}"}
  - name: unassigned
    query: "status:open AND agent_id:0"
    if: now() - ticket.created_at > duration("15m")
    actions:
      - alert: {channel: desk, text: "Overdue #{{ ticket.id }}", mention: "@it"}
      - set: {priority: 4, tags: [overdue], status: 2}
`},
		{"the earlier of several merged mappings wins", head + `
x-fast: &fast {every: 1m, once: ticket}
x-slow: &slow {every: 1h, once: every 4h, if: "ticket.priority >= High"}
x-both: &both [*fast, *slow]
rules:
  - <<: [*fast, *slow]
    name: a
    query: status:open
    actions: [{note: hi}]
  - <<: [*slow, *fast]
    name: b
    query: status:open
    actions: [{note: hi}]
  - <<: *both
    name: c
    query: status:open
    actions: [{note: hi}]
`, head + `
rules:
  - {name: a, query: status:open, every: 1m, once: ticket, if: "ticket.priority >= High", actions: [{note: hi}]}
  - {name: b, query: status:open, every: 1h, once: every 4h, if: "ticket.priority >= High", actions: [{note: hi}]}
  - {name: c, query: status:open, every: 1m, once: ticket, if: "ticket.priority >= High", actions: [{note: hi}]}
`},
		{"nested merges", head + `
x-base: &base {every: 2m, once: ticket, query: "status:open"}
x-team: &team
  <<: *base
  query: "status:open AND group_id:7"
  every: 10m
rules:
  - <<: *team
    name: team
    actions: [{reply: "{{ ticket.subject }}"}]
  - <<: *base
    name: base
    actions: [{reply: "{{ ticket.subject }}"}]
`, head + `
rules:
  - {name: team, query: "status:open AND group_id:7", every: 10m, once: ticket, actions: [{reply: "{{ ticket.subject }}"}]}
  - {name: base, query: "status:open", every: 2m, once: ticket, actions: [{reply: "{{ ticket.subject }}"}]}
`},
		{"aliases of scalars and lists", head + `
x-q: &q "status:open AND priority:4"
rules:
  - name: a
    query: *q
    if: &cond |
      ticket.responder_id == 0
    actions:
      - set: {tags: &tags [paged, urgent]}
      - note: &text "Paged {{ ticket.id }}"
  - name: b
    query: *q
    if: *cond
    cron: "*/5 * * * *"
    actions: [{set: {tags: *tags}}, {reply: *text}]
`, head + `
rules:
  - name: a
    query: "status:open AND priority:4"
    if: "ticket.responder_id == 0\n"
    actions: [{set: {tags: [paged, urgent]}}, {note: "Paged {{ ticket.id }}"}]
  - name: b
    query: "status:open AND priority:4"
    if: "ticket.responder_id == 0\n"
    cron: "*/5 * * * *"
    actions: [{set: {tags: [paged, urgent]}}, {reply: "Paged {{ ticket.id }}"}]
`},
		{"a rule merging an earlier rule under a name of its own", head + `
rules:
  - &first
    name: first
    query: status:open
    every: 3m
    once: ticket
    actions: [{set: {custom_fields: &cf {location: HQ, floor: 3}}}]
  - <<: *first
    name: second
    actions: [{set: {custom_fields: {<<: *cf, floor: 4}}}]
`, head + `
rules:
  - {name: first, query: status:open, every: 3m, once: ticket, actions: [{set: {custom_fields: {location: HQ, floor: 3}}}]}
  - {name: second, query: status:open, every: 3m, once: ticket, actions: [{set: {custom_fields: {location: HQ, floor: 4}}}]}
`},
		{"merges in the oncall section", head + `
x-shift: &shift {time_zone: Europe/Zurich, rotation: 1w, handoff: "09:00", start: 2025-01-06}
x-level: &level {after: 10m}
oncall:
  schedules:
    - <<: *shift
      name: primary
      members: [alice@example.com, bob@example.com]
    - <<: *shift
      name: secondary
      rotation: 2w
      members: [erin@example.com]
  policies:
    - name: urgent
      levels:
        - {<<: *level, schedule: primary}
        - {<<: *level, schedule: secondary, after: 20m}
rules:
  - name: page
    query: "status:open AND priority:4"
    actions: [{page: {policy: urgent}}]
`, head + `
oncall:
  schedules:
    - {name: primary, time_zone: Europe/Zurich, rotation: 1w, handoff: "09:00", start: 2025-01-06, members: [alice@example.com, bob@example.com]}
    - {name: secondary, time_zone: Europe/Zurich, rotation: 2w, handoff: "09:00", start: 2025-01-06, members: [erin@example.com]}
  policies:
    - name: urgent
      levels:
        - {schedule: primary, after: 10m}
        - {schedule: secondary, after: 20m}
rules:
  - name: page
    query: "status:open AND priority:4"
    actions: [{page: {policy: urgent}}]
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, err := Load("merged.yaml", []byte(tt.merged))
			if err != nil {
				t.Fatalf("merged file does not load:\n%v", err)
			}
			written, err := Load("written.yaml", []byte(tt.written))
			if err != nil {
				t.Fatalf("written-out file does not load:\n%v", err)
			}
			got, want := setSummary(t, merged), setSummary(t, written)
			if got != want {
				t.Errorf("merged file loads differently:\n%s\nwritten out:\n%s", got, want)
			}
			if !strings.Contains(want, "fires") {
				t.Errorf("no rule fires on the fixture tickets: the comparison proves little:\n%s", want)
			}
		})
	}
}

// TestMergeExampleRulesFile checks that the merge keys of
// rules.example.yaml change nothing: its rules equal those of the file
// with every merge written out by yaml.v3's own decoder.
func TestMergeExampleRulesFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("<<: *")) {
		t.Skip("rules.example.yaml uses no merge key")
	}
	// yaml.v3 applies merge keys when decoding into Go values.
	var v map[string]any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatal(err)
	}
	for k := range v {
		if strings.HasPrefix(k, "x-") {
			delete(v, k)
		}
	}
	out, err := yaml.Marshal(datesAsStrings(v))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("<<")) {
		t.Fatalf("written-out file still merges:\n%s", out)
	}
	written, err := Load("written.yaml", out)
	if err != nil {
		t.Fatalf("written-out example does not load:\n%v\n%s", err, out)
	}
	if got, want := setSummary(t, loadExample(t)), setSummary(t, written); got != want {
		t.Errorf("example loads differently from its written-out form:\n%s\nwritten out:\n%s", got, want)
	}
}

// datesAsStrings turns the dates that decoding made time.Time back into
// the strings of the file (schedules' start:).
func datesAsStrings(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = datesAsStrings(e)
		}
	case []any:
		for i, e := range x {
			x[i] = datesAsStrings(e)
		}
	case time.Time:
		return x.Format(time.DateOnly)
	}
	return v
}

// TestMergeBounded checks that aliases and merge keys cannot make loading
// blow up: nodes are shared rather than copied, each mapping is expanded
// once, and the pairs merge keys copy are capped.
func TestMergeBounded(t *testing.T) {
	// A billion laughs of lists (9^9 strings expanded) and of merges.
	var b strings.Builder
	b.WriteString("version: 1\nx-l0: &l0 [a, a, a, a, a, a, a, a, a]\nx-m0: &m0 {a: 1, b: 2}\n")
	for i := 1; i <= 9; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "x-l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(p+", ", 9), ", "))
		p = fmt.Sprintf("*m%d", i-1)
		fmt.Fprintf(&b, "x-m%d: &m%d {<<: [%s], c%d: 3}\n", i, i, strings.TrimSuffix(strings.Repeat(p+", ", 9), ", "), i)
	}
	b.WriteString("x-cycle: &cycle {b: {<<: *cycle}, c: [*cycle]}\n")
	b.WriteString("rules:\n  - {<<: *m9, name: a, query: status:open, actions: [{set: {tags: *l9}}]}\n")
	_, err := Load("f.yaml", []byte(b.String()))
	// Each merged key is refused once, where it is written; each of the 9
	// lists in tags once.
	const unknown = `: rule "a": unknown key %q in rule (want one of name, query, if, every, cron, catch_up, once, group_over, max_firings_per_cycle, priority, actions, digest)`
	want := []string{fmt.Sprintf("f.yaml:3:12"+unknown, "a"), fmt.Sprintf("f.yaml:3:18"+unknown, "b")}
	for i := 1; i <= 9; i++ {
		if i == 8 {
			for range 9 {
				want = append(want, `f.yaml:18:7: rule "a": set tags: want a string, got a list`)
			}
		}
		want = append(want, fmt.Sprintf("f.yaml:%d:63"+unknown, 2*i+3, fmt.Sprintf("c%d", i)))
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("alias bomb: got\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}

	// A chain of mappings each merging the one before copies
	// quadratically many pairs: the cap stops it with one error.
	b.Reset()
	b.WriteString("version: 1\nx-c0: &c0 {k0: 0}\n")
	n := 600 // 600*601/2 pairs > maxMergedPairs
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "x-c%d: &c%d {<<: *c%d, k%d: %d}\n", i, i, i-1, i, i)
	}
	b.WriteString("rules: []\n")
	_, err = Load("f.yaml", []byte(b.String()))
	var le *LoadError
	if !errors.As(err, &le) || len(le.Errors) != 1 || !strings.Contains(le.Errors[0].Msg, fmt.Sprintf("merges more than %d keys in all", maxMergedPairs)) {
		t.Errorf("merge chain: got %v, want one error about the cap", err)
	}
}

package rules

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

func mustLoad(t testing.TB, src string, opts ...Option) *Set {
	t.Helper()
	s, err := Load("t.yaml", []byte(src), opts...)
	if err != nil {
		t.Fatalf("load:\n%v", err)
	}
	return s
}

func ticket(id int64, mod func(*sdclient.Ticket)) *sdclient.Ticket {
	t := &sdclient.Ticket{
		ID: id, Subject: fmt.Sprintf("ticket %d", id), Status: sdclient.StatusOpen, Priority: sdclient.PriorityMedium,
		RequesterID: 500, CreatedAt: fixtureNow.Add(-time.Hour), UpdatedAt: fixtureNow.Add(-30 * time.Minute),
	}
	if mod != nil {
		mod(t)
	}
	return t
}

func TestLoadRuleSettings(t *testing.T) {
	s := mustLoad(t, `
version: 1
channels: {oncall: "#it-oncall", ops: C0123ABCD}
rules:
  - name: a
    query: status:open
    actions: [{note: hi}]
  - name: b
    query: priority:4
    cron: "*/5 * * * *"
    once: ticket
    actions:
      - set: {priority: 4, tags: [x, y]}
      - note: n
      - set: {status: 3, priority: 4, custom_fields: {cf_site: HQ}}
      - assign: ana@example.com
      - alert: {channel: ops, text: t}
  - name: c
    query: priority:4
    every: 90s
    once: every 4h
    actions:
      - assign: 12
      - alert: {channel: "#adhoc", text: t, mention: "@x"}
  - name: d
    query: status:3
    cron: "0 9 * * 1-5"
    catch_up: 20m
    actions: [{reply: hi}]
  - name: e
    query: status:3
    cron: "0 9 * * 1-5"
    catch_up: 0s
    actions: [{reply: hi}]
`)
	if got := len(s.Rules()); got != 5 {
		t.Fatalf("%d rules, want 5", got)
	}
	for name, want := range map[string]time.Duration{"a": 0, "b": DefaultCatchUp, "c": 0, "d": 20 * time.Minute, "e": 0} {
		if got := s.Rule(name).CatchUp; got != want {
			t.Errorf("rule %s: catch_up %v, want %v", name, got, want)
		}
	}
	a, b, c := s.Rule("a"), s.Rule("b"), s.Rule("c")
	if a.Every != time.Minute || a.Cron != "" || a.Once != (Once{Mode: OnceEpisode}) || a.Line != 5 {
		t.Errorf("rule a: every %v cron %q once %+v line %d; want 1m, none, episode, line 5", a.Every, a.Cron, a.Once, a.Line)
	}
	if b.Every != 0 || b.Cron != "*/5 * * * *" || b.Once != (Once{Mode: OnceTicket}) {
		t.Errorf("rule b: every %v cron %q once %+v", b.Every, b.Cron, b.Once)
	}
	if c.Every != 90*time.Second || c.Once != (Once{Mode: OnceEvery, Period: 4 * time.Hour}) {
		t.Errorf("rule c: every %v once %+v", c.Every, c.Once)
	}
	if s.Rule("nope") != nil {
		t.Error("Rule(nope) is not nil")
	}
	if ch := s.Channels(); ch["oncall"] != "#it-oncall" || ch["ops"] != "C0123ABCD" || len(ch) != 2 {
		t.Errorf("channels %v", ch)
	}

	ds := s.EvaluateRule(b, []*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) { t.Priority = 4 })}, fixtureNow)
	if len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("decisions %+v", ds)
	}
	acts := ds[0].Actions
	kinds := []ActionKind{}
	for _, x := range acts {
		kinds = append(kinds, x.Kind)
	}
	if !reflect.DeepEqual(kinds, []ActionKind{ActionUpdate, ActionNote, ActionAlert}) {
		t.Fatalf("action kinds %v: every set and assign must merge into the first update", kinds)
	}
	want := &sdclient.TicketUpdate{
		Status: sdclient.Ptr(3), Priority: sdclient.Ptr(4), Tags: &[]string{"x", "y"},
		CustomFields: map[string]any{"cf_site": "HQ"},
	}
	if !reflect.DeepEqual(acts[0].Update, want) || acts[0].AssignEmail != "ana@example.com" {
		t.Errorf("update %+v assign %q", acts[0].Update, acts[0].AssignEmail)
	}
	if acts[2].Channel != "C0123ABCD" {
		t.Errorf("alert channel %q, want the alias resolved to C0123ABCD", acts[2].Channel)
	}
	// A decision's update is the caller's to change.
	*acts[0].Update.Priority = 1
	ds = s.EvaluateRule(b, []*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) { t.Priority = 4 })}, fixtureNow)
	if *ds[0].Actions[0].Update.Priority != 4 {
		t.Error("changing a decision's update changed the rule")
	}

	ds = s.EvaluateRule(c, []*sdclient.Ticket{ticket(2, func(t *sdclient.Ticket) { t.Priority = 4 })}, fixtureNow)
	if got := ds[0].Actions[0].Update.ResponderID; got == nil || *got != 12 {
		t.Errorf("assign: 12 gave responder_id %v", got)
	}
	if a := ds[0].Actions[1]; a.Channel != "#adhoc" || a.Mention != "@x" {
		t.Errorf("alert %+v", a)
	}
}

func TestLoadEmptyRulesAndCustomFields(t *testing.T) {
	s := mustLoad(t, "version: 1\nrules:\n")
	if len(s.Rules()) != 0 {
		t.Error("rules found in an empty list")
	}
	src := "version: 1\nrules:\n  - name: a\n    query: \"cf_site:'HQ' AND status:open\"\n    actions: [{note: hi}]\n"
	if _, err := Load("t.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), `t.yaml:4:13: rule "a": query: unknown field "cf_site"`) {
		t.Errorf("unknown custom field: got %v", err)
	}
	s = mustLoad(t, src, WithCustomFields(map[string]filter.Kind{"cf_site": filter.KindString}))
	ds := s.Evaluate([]*sdclient.Ticket{
		ticket(1, func(t *sdclient.Ticket) { t.CustomFields = map[string]any{"cf_site": "hq"} }),
		ticket(2, func(t *sdclient.Ticket) { t.CustomFields = map[string]any{"cf_site": "Annex"} }),
		ticket(3, nil),
	}, fixtureNow)
	if len(ds) != 1 || ds[0].TicketID != 1 {
		t.Errorf("custom field query matched %v, want ticket 1", ids(ds))
	}
}

func ids(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s#%d", d.Rule, d.TicketID))
	}
	return out
}

func TestBlockScalarPositions(t *testing.T) {
	src := `version: 1
rules:
  - name: a
    query: status:open
    if: >
      ticket.priority >= High
      && ticket.statuss == Open
    actions:
      - reply: |
          Hello {{ ticket.subject }},

          this is {{ ticket.nope }}.
`
	_, err := Load("t.yaml", []byte(src))
	want := `t.yaml:7:17: rule "a": if: type ticket has no field statuss
t.yaml:12:29: rule "a": reply: template: type ticket has no field nope`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestEvaluateConditionsAndCodes(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: urgent-old
    query: status:open AND priority:4
    if: now() - ticket.created_at > duration("15m") && ticket.responder_id == 0
    actions: [{note: "n"}]
  - name: named-codes
    query: priority:3 OR priority:4
    if: ticket.priority >= High && ticket.status == Pending && is_open(ticket.status) && "vip" in ticket.tags
    actions: [{note: "n"}]
  - name: overdue
    query: status:open
    if: has_due(ticket) && ticket.due_by < now()
    actions: [{note: "n"}]
  - name: no-if
    query: status:5
    actions: [{note: "n"}]
`)
	due := fixtureNow.Add(-time.Minute)
	tickets := []*sdclient.Ticket{
		ticket(1, func(t *sdclient.Ticket) { t.Priority = 4; t.CreatedAt = fixtureNow.Add(-16 * time.Minute) }),
		ticket(2, func(t *sdclient.Ticket) { t.Priority = 4; t.CreatedAt = fixtureNow.Add(-14 * time.Minute) }),
		ticket(3, func(t *sdclient.Ticket) { t.Priority = 4; t.ResponderID = sdclient.Ptr(int64(9)) }),
		ticket(4, func(t *sdclient.Ticket) { t.Priority = 3; t.Status = 3; t.Tags = []string{"vip"} }),
		ticket(5, func(t *sdclient.Ticket) { t.Priority = 3; t.Status = 3 }),
		ticket(6, func(t *sdclient.Ticket) { t.DueBy = &due }),
		ticket(7, func(t *sdclient.Ticket) { t.Status = 13; d := fixtureNow.Add(time.Minute); t.DueBy = &d }),
		ticket(8, func(t *sdclient.Ticket) { t.Status = 13; t.DueBy = &due }), // custom open status
		ticket(9, func(t *sdclient.Ticket) { t.Status = 4; t.DueBy = &due }),  // resolved: not open
		ticket(10, func(t *sdclient.Ticket) { t.Status = 5 }),
	}
	got := ids(s.Evaluate(tickets, fixtureNow))
	want := []string{"urgent-old#1", "named-codes#4", "overdue#6", "overdue#8", "no-if#10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	// The same rules at another clock: now() is the evaluation's, not the wall clock's.
	got = ids(s.EvaluateRule(s.Rule("urgent-old"), tickets[:2], fixtureNow.Add(time.Hour)))
	if want := []string{"urgent-old#1", "urgent-old#2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("an hour later fired %v, want %v", got, want)
	}
}

// has_tag matches tags in any case, as the desk's tag: query term does;
// "x" in ticket.tags is exact.
func TestHasTag(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: vpn
    query: status:open
    if: has_tag(ticket, "VPN")
    actions: [{note: "n"}]
  - name: vpn-exact
    query: status:open
    if: '"VPN" in ticket.tags'
    actions: [{note: "n"}]
`)
	tickets := []*sdclient.Ticket{
		ticket(1, func(t *sdclient.Ticket) { t.Tags = []string{"vpn"} }),
		ticket(2, func(t *sdclient.Ticket) { t.Tags = []string{"other", "VPN"} }),
		ticket(3, func(t *sdclient.Ticket) { t.Tags = []string{"vpn-legacy"} }),
		ticket(4, func(t *sdclient.Ticket) {}),
	}
	got := ids(s.Evaluate(tickets, fixtureNow))
	if want := []string{"vpn#1", "vpn#2", "vpn-exact#2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	if _, err := Load("f.yaml", []byte("version: 1\nrules:\n  - name: x\n    query: status:open\n    if: has_tag(ticket, 3)\n    actions: [{note: n}]\n")); err == nil {
		t.Error("has_tag(ticket, 3) loaded; want a load error")
	}
}

func TestRuntimeErrorYieldsDecision(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: first-tag
    query: status:open
    if: ticket.tags[0] == "vip"
    actions: [{note: "n"}]
  - name: bad-template
    query: status:open
    actions: [{note: "{{ ticket.custom_fields.site.name }}"}]
`)
	ds := s.Evaluate([]*sdclient.Ticket{
		ticket(1, func(t *sdclient.Ticket) {
			t.Tags = []string{"vip"}
			t.CustomFields = map[string]any{"site": map[string]any{"name": "HQ"}}
		}),
		ticket(2, func(t *sdclient.Ticket) { t.CustomFields = map[string]any{"site": "HQ"} }),
	}, fixtureNow)
	if got, want := ids(ds), []string{"first-tag#1", "bad-template#1", "first-tag#2", "bad-template#2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	if ds[0].Err != nil || ds[1].Err != nil || ds[1].Actions[0].Text != "HQ" {
		t.Errorf("ticket 1: %+v %+v", ds[0], ds[1])
	}
	for _, d := range ds[2:] {
		if d.Err == nil || len(d.Actions) != 0 {
			t.Errorf("%s#%d: want an error and no actions, got err %v actions %v", d.Rule, d.TicketID, d.Err, d.Actions)
		}
	}
	if msg := ds[2].Err.Error(); !strings.Contains(msg, `rule "first-tag" on ticket 2: if:`) || !strings.Contains(msg, "out of range") {
		t.Errorf("error %q does not say which rule, ticket and what", msg)
	}
}

// A run-time error is one line (it goes to logs and to `rules test`) that
// points into the rules file, not into the expression.
func TestRuntimeErrorPositionedInFile(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("seats"),
		"    if: ticket.priority > 1 && ticket.custom_fields.seats > 10",
		"    actions: [{note: x}]",
		ruleHead("note"),
		"    actions:",
		"      - note: |",
		"          Site: {{ ticket.custom_fields.site.name }}",
		ruleHead("alert"),
		`    actions: [{alert: {channel: oncall, text: "ok", mention: "{{ ticket.tags[3] }}"}}]`))
	ds := s.Evaluate([]*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) {
		t.CustomFields = map[string]any{"site": "HQ"}
	})}, fixtureNow)
	want := []string{
		`rule "seats" on ticket 1: if: t.yaml:6:59: invalid operation: <nil> > int (a custom field the ticket does not have is nil: give it a default, e.g. (ticket.custom_fields.seats ?? 0) > 10)`,
		`rule "note" on ticket 1: note: t.yaml:12:46: invalid operation: int(string)`,
		`rule "alert" on ticket 1: alert: t.yaml:15:77: index out of range: 3 (array length is 0)`,
	}
	if len(ds) != len(want) {
		t.Fatalf("decisions %v, want %d", ids(ds), len(want))
	}
	for i, d := range ds {
		if d.Err == nil || d.Err.Error() != want[i] {
			t.Errorf("error %d:\n%v\nwant:\n%s", i, d.Err, want[i])
		}
	}
	if x := s.Explain(ds[0].Ticket, fixtureNow)[0]; x.Err == nil || x.Err.Error() != strings.TrimPrefix(want[0], `rule "seats" on ticket 1: `) {
		t.Errorf("explain: %v", x.Err)
	}
}

func TestTemplateRendering(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: a
    query: status:open
    actions:
      - note: "#{{ ticket.id }} {{ticket.subject}} created {{ ticket.created_at }}, age {{ now() - ticket.created_at }}"
      - note: "due [{{ ticket.due_by }}] site [{{ ticket.custom_fields.site }}] none [{{ ticket.custom_fields.none }}] nil [{{ nil }}]"
      - note: "tags {{ ticket.tags }} p={{ ticket.priority == Urgent }} {{ 1.5 }} {{ now() }} {{ duration('36h') }} {{ ticket.responder_id }}"
      - note: "no placeholders at all"
`)
	zurich := time.FixedZone("CET", 3600)
	tk := ticket(42, func(t *sdclient.Ticket) {
		t.Subject = "Printer"
		t.CreatedAt = time.Date(2025, 3, 10, 8, 55, 29, 0, zurich) // 07:55:29Z: 2h4m31s before now
		t.Tags = []string{"a", "b"}
		t.Priority = 4
		t.CustomFields = map[string]any{"site": "HQ", "none": nil}
	})
	ds := s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow)
	wantActionTexts(t, ds,
		"#42 Printer created 2025-03-10T07:55:29Z, age 2h5m",
		"due [] site [HQ] none [] nil []",
		"tags a, b p=true 1.5 2025-03-10T10:00:00Z 1d12h 0",
		"no placeholders at all",
	)
	for d, want := range map[time.Duration]string{
		0: "0m", 29 * time.Second: "0m", 31 * time.Second: "1m", 45 * time.Minute: "45m",
		2*time.Hour + 4*time.Minute + 31*time.Second: "2h5m", 3 * time.Hour: "3h", -90 * time.Minute: "-1h30m",
		25*time.Hour + 5*time.Minute: "1d1h5m", 24 * time.Hour: "1d", 8510*time.Hour + 25*time.Minute: "354d14h",
		47*time.Hour + 59*time.Minute + 40*time.Second: "2d", -(50*time.Hour + 20*time.Minute): "-2d2h",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDurationFolding(t *testing.T) {
	c, errs := compileExpr(`now() - ticket.created_at > duration("15m") && ticket.priority >= Urgent`, true)
	if errs != nil {
		t.Fatal(errs)
	}
	dis := c.prog.Disassemble()
	if strings.Contains(dis, "duration") || strings.Contains(dis, `"15m"`) {
		t.Errorf("duration(\"15m\") is not folded:\n%s", dis)
	}
	if !strings.Contains(dis, "15m0s") {
		t.Errorf("folded constant 15m0s not in program:\n%s", dis)
	}
	if !c.usesNow || !reflect.DeepEqual(c.fields, []string{"created_at", "priority"}) {
		t.Errorf("refs: now %v fields %v", c.usesNow, c.fields)
	}
	// A non-constant argument still works at run time.
	c, errs = compileExpr(`duration(ticket.custom_fields.sla) > duration("1h")`, true)
	if errs != nil {
		t.Fatal(errs)
	}
	env := Env{Ticket: TicketEnv{CustomFields: map[string]any{"sla": "2h"}}, Now: time.Now}
	if ok, err := c.evalBool(newVM(), env); err != nil || !ok {
		t.Errorf("dynamic duration: %v %v", ok, err)
	}
	// A bad literal is a load error at its position.
	_, errs = compileExpr(`ticket.priority > 1 || now() > ticket.due_by + duration("2 days")`, true)
	if len(errs) != 1 || errs[0].Off != 56 || !strings.Contains(errs[0].Msg, `invalid duration "2 days"`) {
		t.Errorf("bad literal: %+v", errs)
	}
}

func TestExplain(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: urgent-unassigned
    query: status:open AND agent_id:0 AND priority:4
    if: now() - ticket.created_at > duration("5m") && ticket.group_id != 7
    actions: [{note: "paged {{ ticket.id }}"}]
  - name: broken
    query: status:open
    if: ticket.tags[0] == "x"
    actions: [{note: "n"}]
`)
	tk := ticket(5, func(t *sdclient.Ticket) { t.Priority = 3; t.CreatedAt = fixtureNow.Add(-10 * time.Minute) })
	xs := s.Explain(tk, fixtureNow)
	if len(xs) != 2 {
		t.Fatalf("%d explanations, want 2", len(xs))
	}
	x := xs[0]
	wantTerms := []TermResult{{"status:open", true}, {"agent_id:0", true}, {"priority:4", false}}
	if x.QueryHolds || !reflect.DeepEqual(x.Terms, wantTerms) {
		t.Errorf("query holds %v terms %+v; want false %+v", x.QueryHolds, x.Terms, wantTerms)
	}
	wantVals := []NamedValue{{"ticket.created_at", fixtureNow.Add(-10 * time.Minute)}, {"ticket.group_id", int64(0)}, {"now()", fixtureNow}}
	if !x.IfHolds || !reflect.DeepEqual(x.Values, wantVals) || x.Fires || x.Err != nil {
		t.Errorf("if holds %v values %+v fires %v err %v", x.IfHolds, x.Values, x.Fires, x.Err)
	}
	if xs[1].Err == nil || xs[1].Fires {
		t.Errorf("broken rule: err %v fires %v", xs[1].Err, xs[1].Fires)
	}

	tk.Priority = 4
	x = s.Explain(tk, fixtureNow)[0]
	if !x.Fires || len(x.Actions) != 1 || x.Actions[0].Text != "paged 5" {
		t.Errorf("fires %v actions %+v", x.Fires, x.Actions)
	}
	var buf bytes.Buffer
	if err := WriteExplanation(&buf, s.Explain(tk, fixtureNow)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rule urgent-unassigned on ticket #5: FIRES",
		"  query holds: status:open AND agent_id:0 AND priority:4",
		"    holds priority:4",
		"    ticket.created_at = 2025-03-10T09:50:00Z",
		"    ticket.group_id = 0",
		"    now() = 2025-03-10T10:00:00Z",
		"  note: paged 5",
		"rule broken on ticket #5: ERROR",
		"  error: if: ",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestExpandQuery(t *testing.T) {
	s := mustLoad(t, `
version: 1
rules:
  - name: a
    query: status:open AND agent_id:0
    actions: [{note: n}]
  - name: b
    query: priority:4
    actions: [{note: n}]
`)
	a := s.Rule("a")
	e, err := a.ExpandQuery([]int{2, 3, 12})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), "(status:2 OR status:3 OR status:12) AND agent_id:0"; got != want {
		t.Errorf("expanded %q, want %q", got, want)
	}
	if a.QueryExpr().String() != "status:open AND agent_id:0" {
		t.Errorf("expanding changed the rule's query: %s", a.QueryExpr())
	}
	if _, err := a.ExpandQuery(nil); err == nil || !strings.Contains(err.Error(), `rule "a"`) {
		t.Errorf("no open statuses: %v", err)
	}
	if e, err := s.Rule("b").ExpandQuery(nil); err != nil || e.String() != "priority:4" {
		t.Errorf("query without macro: %v %v", e, err)
	}
	many := make([]int, 60)
	for i := range many {
		many[i] = 1000 + i
	}
	_, err = a.ExpandQuery(many)
	if err == nil || !strings.Contains(err.Error(), `rule "a": expanded query is`) || !strings.Contains(err.Error(), "limit of 512") {
		t.Errorf("too long: %v", err)
	}
}

func TestReadTickets(t *testing.T) {
	const a = `{"id": 1, "subject": "a", "status": 2, "priority": 1, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z"}`
	const b = `{"id": 2, "subject": "", "status": 2, "priority": 1, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z"}`
	for _, in := range []string{
		`[` + a + `, ` + b + `]`,
		` {"tickets": [` + a + `, ` + b + `], "total": 2}`,
	} {
		ts, err := ReadTickets(strings.NewReader(in))
		if err != nil || len(ts) != 2 || ts[0].ID != 1 || ts[0].Subject != "a" || ts[1].ID != 2 {
			t.Errorf("%s: %v %v", in, ts, err)
		}
	}
	for _, in := range []string{``, `{"ticket": {"id": 1}}`, `[{"id": "x"}]`, `42`, `[null]`} {
		if _, err := ReadTickets(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// A fixture ticket without a field the desk always sends is refused, with
// the ticket's index and id and the fields it lacks.
func TestReadTicketsRequiredFields(t *testing.T) {
	const ok = `{"id": 1, "subject": "a", "status": 2, "priority": 1, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z"}`
	tests := []struct{ in, want string }{
		{`[` + ok + `, {"id": 2, "subject": "b", "status": 2, "priority": 1, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z"}]`,
			`read tickets: ticket [1] (id 2): missing required field updated_at (every ticket needs id, subject, status, priority, requester_id, created_at, updated_at, as the desk sends them)`},
		{`{"tickets": [{"subject": "a", "status": null}]}`,
			`read tickets: ticket [0]: missing required fields id, status, priority, requester_id, created_at, updated_at (every ticket needs id, subject, status, priority, requester_id, created_at, updated_at, as the desk sends them)`},
		{`[` + ok + `, null, 3]`,
			"read tickets: ticket [1] is null\nread tickets: ticket [2]: want an object, got a number"},
		{`[{"id": 7, "subject": "a", "status": "open", "priority": 1, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z"}]`,
			`read tickets: ticket [0] (id 7): json: cannot unmarshal string into Go struct field Ticket.status of type int`},
	}
	for _, tt := range tests {
		_, err := ReadTickets(strings.NewReader(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
	many := make([]string, 15)
	for i := range many {
		many[i] = `{"id": 1}`
	}
	_, err := ReadTickets(strings.NewReader("[" + strings.Join(many, ",") + "]"))
	if err == nil || strings.Count(err.Error(), "\n") != 10 || !strings.HasSuffix(err.Error(), "read tickets: and more") {
		t.Errorf("many: %v", err)
	}
}

func TestConcurrentEvaluate(t *testing.T) {
	s := loadExample(t)
	tickets := benchTickets(500)
	want := s.Evaluate(tickets, fixtureNow)
	if len(want) == 0 {
		t.Fatal("no decisions to compare")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				got := s.Evaluate(tickets, fixtureNow)
				if !reflect.DeepEqual(ids(got), ids(want)) {
					errs <- errors.New("concurrent evaluation differs from sequential")
					return
				}
				_ = s.Explain(tickets[i], fixtureNow)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestWritePlanErrorsAndEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePlan(&buf, nil); err != nil || buf.String() != "no rule fires\n" {
		t.Errorf("empty plan %q %v", buf.String(), err)
	}
	buf.Reset()
	tk := ticket(7, nil)
	err := WritePlan(&buf, []Decision{{Rule: "r", TicketID: 7, Ticket: tk, Err: errors.New("boom")}})
	want := "ticket #7 \"ticket 7\"\n  r: ERROR: boom\n\n1 decision(s) on 1 ticket(s)\n"
	if err != nil || buf.String() != want {
		t.Errorf("plan\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestExplainClosedTicket(t *testing.T) {
	s := loadExample(t)
	tk := ticket(9, func(t *sdclient.Ticket) { t.Status = sdclient.StatusResolved; t.Priority = 4 })
	x := s.Explain(tk, fixtureNow)[2] // unassigned-15m: status:open AND agent_id:0
	want := []TermResult{{"status:open", false}, {"agent_id:0", true}}
	if x.Rule != "unassigned-15m" || x.QueryHolds || x.Fires || !reflect.DeepEqual(x.Terms, want) {
		t.Errorf("%+v", x)
	}
}

func TestEvaluateRuleOfAnotherSet(t *testing.T) {
	a := mustLoad(t, "version: 1\nrules:\n  - {name: x, query: 'priority:1', actions: [{note: n}]}\n  - {name: y, query: 'priority:4', actions: [{note: n}]}\n")
	b := mustLoad(t, "version: 1\nrules:\n  - {name: y, query: 'priority:4 AND status:open', actions: [{note: n}]}\n")
	got := ids(a.EvaluateRule(b.Rule("y"), []*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) { t.Priority = 4 })}, fixtureNow))
	if !reflect.DeepEqual(got, []string{"y#1"}) {
		t.Errorf("got %v", got)
	}
}

// A ticket without a due date does not match a comparison of its due date:
// `ticket.due_by < now()` reads "overdue", and the missing date (the zero
// time) must not make it hold.
func TestMissingDueDateComparesFalse(t *testing.T) {
	due := fixtureNow.Add(-time.Hour)
	withDue := ticket(1, func(t *sdclient.Ticket) { t.DueBy, t.FrDueBy = &due, &due })
	without := ticket(2, nil)
	tests := []struct {
		cond         string
		withDue, not bool // whether it holds on each ticket
	}{
		{`ticket.due_by < now()`, true, false},
		{`ticket.fr_due_by <= now()`, true, false},
		{`now() - ticket.due_by > duration("30m")`, true, false},
		{`ticket.due_by.Before(now())`, true, false},
		{`now().After(ticket.fr_due_by)`, true, false},
		{`ticket.due_by.Sub(now()) < duration("1h")`, true, false},
		{`!(ticket.due_by < now())`, false, true},
		{`ticket.due_by > now()`, false, false},
		{`ticket.due_by.IsZero()`, false, true},
		{`ticket.due_by.IsZero() == true`, false, true},
		{`!has_due(ticket) || ticket.due_by < now()`, true, true},
		{`ticket.due_by < now() ? true : false`, true, false},
		{`ticket.created_at < now()`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			s := mustLoad(t, ruleFile("  - name: r", "    query: status:open", "    if: '"+tt.cond+"'", "    actions: [{note: x}]"))
			got := ids(s.Evaluate([]*sdclient.Ticket{withDue, without}, fixtureNow))
			var want []string
			if tt.withDue {
				want = append(want, "r#1")
			}
			if tt.not {
				want = append(want, "r#2")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fires on %v, want %v", got, want)
			}
		})
	}
}

// Templates print every time alike (RFC3339, UTC) whatever offset the desk
// or the clock used, and a time the template converts to a zone itself is
// printed in that zone, not turned back to UTC.
func TestTemplateTimeZones(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("r"),
		"    actions:",
		`      - note: "due {{ ticket.due_by }} at {{ ticket.due_by.Format('15:04') }}, now {{ now() }}"`,
		`      - note: "local {{ ticket.due_by.In(timezone('America/New_York')) }}"`,
		`      - note: "{{ ticket.created_at.Hour() }}h {{ now().Format('Jan 2 15:04') }}"`))
	plus1 := time.FixedZone("", 3600)
	due := time.Date(2025, 3, 12, 17, 0, 0, 0, plus1) // 16:00Z, 12:00 in New York
	tk := ticket(1, func(t *sdclient.Ticket) {
		t.DueBy = &due
		t.CreatedAt = time.Date(2025, 3, 10, 8, 0, 0, 0, plus1)
	})
	now := fixtureNow.In(time.FixedZone("", -5*3600))
	ds := s.Evaluate([]*sdclient.Ticket{tk}, now)
	wantActionTexts(t, ds,
		"due 2025-03-12T16:00:00Z at 16:00, now 2025-03-10T10:00:00Z",
		"local 2025-03-12T12:00:00-04:00",
		"7h Mar 10 10:00",
	)
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute: "30m", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s",
		time.Hour + 30*time.Second: "1h0m30s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// wantActionTexts checks that ds is one decision, without error, whose
// actions have the texts want, in order.
func wantActionTexts(t *testing.T, ds []Decision, want ...string) {
	t.Helper()
	if len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("%+v", ds)
	}
	for i, a := range ds[0].Actions {
		if a.Text != want[i] {
			t.Errorf("action %d: %q, want %q", i, a.Text, want[i])
		}
	}
}

package rules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient"
)

type fakePeople struct {
	calls int
}

func (f *fakePeople) Requester(id int64) (Person, bool) {
	f.calls++
	if id == 500 {
		return Person{Name: "Rita Requester", Email: "rita@example.com"}, true
	}
	return Person{}, false
}

func (f *fakePeople) Agent(id int64) (Person, bool) {
	f.calls++
	if id == 12 {
		return Person{Name: "Andy Agent", Email: "andy@example.com"}, true
	}
	return Person{}, false
}

func (f *fakePeople) Group(id int64) (GroupInfo, bool) {
	f.calls++
	if id == 7 {
		return GroupInfo{Name: "Network"}, true
	}
	return GroupInfo{}, false
}

// Rules see the names of the requester, the agent and the group, and the
// description as text; unknown ones are "".
func TestPeopleAndDescriptionInExpressions(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("a"),
		`    if: 'ticket.group.name == "Network" && ticket.description_text contains "switch"'`,
		"    actions:",
		`      - note: "{{ ticket.requester.name }} <{{ ticket.requester.email }}>, agent {{ ticket.agent.name }} ({{ ticket.agent.email }}), group {{ ticket.group.name }}"`,
	))
	if !s.NeedsPeople() {
		t.Fatal("NeedsPeople is false")
	}
	tk := ticket(1, func(t *sdclient.Ticket) {
		t.GroupID, t.ResponderID = sdclient.Ptr[int64](7), sdclient.Ptr[int64](12)
		t.DescriptionText = "The core switch is down"
	})
	if ds := s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow); len(ds) != 0 {
		t.Fatalf("without People the group has no name, yet the rule fired: %+v", ds)
	}
	p := &fakePeople{}
	s.UsePeople(p)
	ds := s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow)
	if len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("%+v", ds)
	}
	want := "Rita Requester <rita@example.com>, agent Andy Agent (andy@example.com), group Network"
	if got := ds[0].Actions[0].Text; got != want {
		t.Errorf("note %q\nwant %q", got, want)
	}
	// An unassigned ticket: the agent is empty, and not looked up.
	tk.ResponderID = nil
	p.calls = 0
	ds = s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow)
	if len(ds) != 1 || !strings.Contains(ds[0].Actions[0].Text, "agent  ()") || p.calls != 2 {
		t.Errorf("unassigned: calls %d, %+v", p.calls, ds)
	}
	// Explain shows the values.
	for _, x := range s.Explain(tk, fixtureNow) {
		b, _ := json.Marshal(x)
		if !strings.Contains(string(b), "Network") {
			t.Errorf("explain lacks the group's name: %s", b)
		}
	}
}

// A set whose expressions do not read people never asks for them.
func TestNoPeopleNeeded(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("a"),
		`    actions: [{note: "{{ ticket.subject }} {{ ticket.description_text }}"}]`))
	if s.NeedsPeople() {
		t.Fatal("NeedsPeople is true")
	}
	p := &fakePeople{}
	s.UsePeople(p)
	if ds := s.Evaluate([]*sdclient.Ticket{ticket(1, nil)}, fixtureNow); len(ds) != 1 || p.calls != 0 {
		t.Errorf("calls %d, %+v", p.calls, ds)
	}
}

func TestTrimDescription(t *testing.T) {
	long := strings.Repeat("é", MaxDescriptionText+5)
	got := NewTicketEnv(&sdclient.Ticket{DescriptionText: long}).DescriptionText
	if n := len([]rune(got)); n != MaxDescriptionText {
		t.Errorf("kept %d characters", n)
	}
	if TrimDescription("short") != "short" {
		t.Error("short text changed")
	}
}

// Values of set: may be templates, rendered per ticket and checked at load.
func TestSetTemplates(t *testing.T) {
	s := mustLoad(t, ruleFile(
		ruleHead("a"),
		"    actions:",
		`      - set: {category: "{{ ticket.custom_fields.site }}", sub_category: Printers, type: "{{ ticket.priority == Urgent ? 'Incident' : 'Service Request' }}"}`,
		`      - set: {tags: [auto, "site-{{ ticket.custom_fields.site }}", "{{ ticket.custom_fields.none ?? '' }}"], custom_fields: {owner: "{{ ticket.requester_id }}", seats: 3}}`,
	))
	tk := ticket(1, func(t *sdclient.Ticket) {
		t.Priority = sdclient.PriorityUrgent
		t.CustomFields = map[string]any{"site": "HQ"}
	})
	ds := s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow)
	if len(ds) != 1 || ds[0].Err != nil || len(ds[0].Actions) != 1 {
		t.Fatalf("%+v", ds)
	}
	b, _ := json.Marshal(ds[0].Actions[0].Update)
	want := `{"type":"Incident","category":"HQ","sub_category":"Printers","tags":["auto","site-HQ"],"custom_fields":{"owner":"500","seats":3}}`
	if string(b) != want {
		t.Errorf("update %s\nwant   %s", b, want)
	}
	// The loaded rule is untouched: another ticket renders its own.
	tk2 := ticket(2, func(t *sdclient.Ticket) { t.CustomFields = map[string]any{"site": "Annex"} })
	ds = s.Evaluate([]*sdclient.Ticket{tk2, tk}, fixtureNow)
	if len(ds) != 2 || *ds[0].Actions[0].Update.Category != "Annex" || *ds[1].Actions[0].Update.Category != "HQ" ||
		*ds[0].Actions[0].Update.Type != "Service Request" {
		t.Errorf("%+v", ds)
	}
}

func TestSetTemplateLoadErrors(t *testing.T) {
	_, err := Load("f.yaml", []byte(ruleFile(
		ruleHead("a"),
		"    actions:",
		`      - set: {category: "{{ ticket.site }}", tags: ["x-{{ ticket.nope }}"]}`,
		`      - set: {custom_fields: {owner: "{{ ticket.requester_id + }}"}}`,
	)))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`f.yaml:7:36: rule "a": set category: template: type ticket has no field site`,
		`f.yaml:7:66: rule "a": set tags: template: type ticket has no field nope`,
		`f.yaml:8:63: rule "a": set custom_fields owner: template: unexpected token EOF`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %s in\n%v", want, err)
		}
	}
}

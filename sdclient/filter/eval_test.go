package filter

import (
	"testing"
	"time"
)

func at(s string) Value {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return DateTime(t)
}

// ticket is a typical ticket as a Record: open, urgent, unassigned, two tags.
func ticket() Values {
	return Values{
		"status":       {Number(2)},
		"priority":     {Number(4)},
		"agent_id":     {Number(0)},
		"group_id":     nil,
		"requester_id": {Number(21004158707)},
		"email":        {String("Ann.Lee@Example.com")},
		"type":         {String("Incident")},
		"tag":          {String("VPN"), String("network")},
		"created_at":   {at("2024-01-05T10:00:00Z")},
		"updated_at":   {at("2024-01-31T23:59:59.999999999Z")},
		"due_by":       {at("2024-02-01T00:00:00Z")},
		"is_vip":       {Bool(true)},
		"cf_code":      {String("42")},
		"cf_when":      {String("2024-01-05")},
		"cf_null":      {Null()},
	}
}

func TestEval(t *testing.T) {
	cases := []struct {
		src  string
		want bool
	}{
		// equality, numbers bare or quoted
		{"status:2", true},
		{"status:3", false},
		{"status:'2'", true},
		{"status:'02'", true},
		{"status:'two'", false},
		{"priority:>4", true},
		{"priority:>5", false},
		{"priority:<4", true},
		{"priority:<3", false},
		{"priority:>'3'", true},
		{"requester_id:21004158707", true},
		// a number field holding a string value, and the reverse
		{"cf_code:42", true},
		{"cf_code:'42'", true},
		{"cf_code:>40", true},
		{"cf_code:<41", false},
		{"cf_code:>'40'", true},
		// 0 == null for _id fields, both ways
		{"agent_id:0", true},
		{"agent_id:null", true},
		{"agent_id:'0'", true},
		{"agent_id:7", false},
		{"agent_id:>0", false},
		{"agent_id:<1", false},
		{"group_id:null", true},
		{"group_id:0", true},
		{"department_id:null", true}, // absent field
		{"requester_id:null", false},
		{"requester_id:0", false},
		{"status:0", false}, // not an _id field: 0 is just 0
		{"status:null", false},
		{"cf_null:null", true},
		{"cf_null:'x'", false},
		// strings, case-insensitively; tags match if any tag does
		{"type:'incident'", true},
		{"type:'Incident'", true},
		{"type:'Incident '", false},
		{"email:'ann.lee@example.com'", true},
		{"tag:'vpn'", true},
		{"tag:'NETWORK'", true},
		{"tag:'printer'", false},
		{"tag:null", false},
		{"type:>'A'", false}, // no ordering on strings
		// dates: inclusive, a date-only value covers its UTC day
		{"created_at:'2024-01-05'", true},
		{"created_at:'2024-01-04'", false},
		{"created_at:'2024-01-06'", false},
		{"created_at:2024-01-05", true},
		{"created_at:>'2024-01-05'", true},
		{"created_at:>'2024-01-06'", false},
		{"created_at:<'2024-01-05'", true},
		{"created_at:<'2024-01-04'", false},
		{"updated_at:<'2024-01-31'", true}, // last nanosecond of the day
		{"updated_at:'2024-01-31'", true},
		{"updated_at:>'2024-02-01'", false},
		{"due_by:<'2024-01-31'", false}, // midnight after the day
		{"due_by:'2024-02-01'", true},
		{"due_by:>'2024-02-01'", true},
		// datetimes compare exactly
		{"created_at:'2024-01-05T10:00:00Z'", true},
		{"created_at:'2024-01-05T12:00:00+02:00'", true},
		{"created_at:'2024-01-05T10:00:01Z'", false},
		{"created_at:>'2024-01-05T10:00:00Z'", true},
		{"created_at:>'2024-01-05T10:00:01Z'", false},
		{"created_at:<'2024-01-05T10:00:00Z'", true},
		{"created_at:<'2024-01-05T09:59:59Z'", false},
		{"created_at:null", false},
		{"due_by:5", false},
		// a string field holding a date compares as a date
		{"cf_when:'2024-01-05'", true},
		{"cf_when:>'2024-01-06'", false},
		{"cf_when:<'2024-01-05T00:00:00Z'", true},
		// booleans
		{"is_vip:true", true},
		{"is_vip:false", false},
		{"is_vip:'TRUE'", true},
		{"is_vip:>true", false},
		// words never match, not even a matching text
		{"type:Incident", false},
		{"status:open", false},
		// null with a range never matches
		{"group_id:>null", false},
		// AND / OR / parentheses
		{"status:2 AND priority:4", true},
		{"status:2 AND priority:3", false},
		{"status:3 OR priority:4", true},
		{"status:3 OR priority:3", false},
		{"(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3 AND created_at:<'2026-01-01'", true},
		{"(status:3 OR status:12) AND agent_id:0", false},
		{"status:3 OR (priority:4 AND tag:'vpn')", true},
		{"status:3 OR (priority:4 AND tag:'x')", false},
		{"(status:3 OR priority:4) AND (tag:'x' OR type:'incident')", true},
		{"unknown_field:1", false},
		{"unknown_field:null", true},
	}
	rec := ticket()
	for _, c := range cases {
		e, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if got := e.Eval(rec); got != c.want {
			t.Errorf("%s: Eval = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestEvalEmptyGroups(t *testing.T) {
	rec := ticket()
	if !(&And{}).Eval(rec) {
		t.Error("empty And should match")
	}
	if (&Or{}).Eval(rec) {
		t.Error("empty Or should not match")
	}
}

func TestEvalNoTags(t *testing.T) {
	e, _ := Parse("tag:null")
	if !e.Eval(Values{"tag": nil}) {
		t.Error("tag:null should match a ticket without tags")
	}
	if e.Eval(Values{"tag": {String("a")}}) {
		t.Error("tag:null should not match a ticket with a tag")
	}
}

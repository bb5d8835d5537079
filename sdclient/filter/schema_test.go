package filter

import (
	"errors"
	"strings"
	"testing"
)

func testSchema() Schema {
	return TicketSchema(map[string]Kind{
		"is_vip":      KindBool,
		"cf_count":    KindNumber,
		"cf_location": KindString,
		"cf_go_live":  KindDate,
		"cf_any":      KindNull, // unknown type: anything goes
		"status":      KindString,
	})
}

func TestValidateOK(t *testing.T) {
	for _, src := range []string{
		"status:2",
		"status:'2'",
		"priority:>3 AND priority:<'4'",
		"agent_id:0", "agent_id:null", "group_id:null", "workspace_id:null", "impact:null", "urgency:null",
		"email:'a@example.com'",
		"type:'Incident'", "type:null",
		"tag:'vpn'", "tag:null", "tag:'2024-01-31'",
		"created_at:>'2024-01-01' AND created_at:<2024-01-31",
		"due_by:'2024-01-31T09:00:00Z'", "due_by:null", "fr_due_by:<'2024-01-31'",
		"updated_at:'2024-01-31'",
		"is_vip:true", "is_vip:'false'", "is_vip:null",
		"cf_count:>10", "cf_location:'Berlin'", "cf_go_live:<'2025-01-01'",
		"cf_any:1", "cf_any:'x'", "cf_any:>3", "cf_any:<'2024-01-01'",
		"(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3 AND created_at:<'2026-01-01'",
	} {
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if err := testSchema().Validate(e); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", src, err)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		src  string
		want []string // every error, in order
	}{
		{"stauts:2", []string{`filter: column 1: unknown field "stauts" (did you mean "status"?)`}},
		{"Status:2", []string{`filter: column 1: unknown field "Status" (did you mean "status"?)`}},
		{"responder_id:7", []string{`filter: column 1: unknown field "responder_id" (did you mean "agent_id"?)`}},
		{"tags:'vpn'", []string{`filter: column 1: unknown field "tags" (did you mean "tag"?)`}},
		{"subject:'vpn'", []string{`filter: column 1: unknown field "subject"`}},
		{"status:open", []string{`filter: column 1: unquoted value open: quote strings, and status expects a number (expand deskbot macros such as status:open before sending)`}},
		{"type:Incident", []string{`filter: column 1: unquoted value Incident: quote strings, e.g. type:'Incident'`}},
		{"priority:'high'", []string{`filter: column 1: priority expects a number, found 'high'`}},
		{"priority:true", []string{`filter: column 1: priority expects a number, found true`}},
		{"agent_id:'2024-01-01'", []string{`filter: column 1: agent_id expects a number, found '2024-01-01'`}},
		{"type:5", []string{`filter: column 1: type expects a single-quoted string, found 5 (write '5')`}},
		{"tag:true", []string{`filter: column 1: tag expects a single-quoted string, found true (write 'true')`}},
		{"created_at:5", []string{`filter: column 1: created_at expects a date such as '2024-01-31' or an RFC3339 datetime such as '2024-01-31T09:00:00Z', found 5`}},
		{"created_at:'yesterday'", []string{`filter: column 1: created_at expects a date such as '2024-01-31' or an RFC3339 datetime such as '2024-01-31T09:00:00Z', found 'yesterday'`}},
		{"is_vip:1", []string{`filter: column 1: is_vip expects true or false, found 1`}},
		{"tag:>'a'", []string{`filter: column 1: :> needs a number or a date, but tag is a string field`}},
		{"email:<'a'", []string{`filter: column 1: :< needs a number or a date, but email is a string field`}},
		{"is_vip:>true", []string{`filter: column 1: :> needs a number or a date, but is_vip is a bool field`}},
		{"cf_any:>'abc'", []string{`filter: column 1: :> needs a number or a date, found 'abc'`}},
		{"status:null", []string{`filter: column 1: status cannot be null, so status:null never matches`}},
		{"created_at:null", []string{`filter: column 1: created_at cannot be null, so created_at:null never matches`}},
		{"requester_id:null", []string{`filter: column 1: requester_id cannot be null, so requester_id:null never matches`}},
		{"agent_id:>null", []string{`filter: column 1: null cannot be compared with :>; use agent_id:null`}},
		// every problem, each at its own column
		{"status:2 AND (stauts:3 OR priority:'x') AND tag:>'a'", []string{
			`filter: column 15: unknown field "stauts" (did you mean "status"?)`,
			`filter: column 27: priority expects a number, found 'x'`,
			`filter: column 45: :> needs a number or a date, but tag is a string field`,
		}},
	}
	s := testSchema()
	for _, c := range cases {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.src, err)
		}
		err = s.Validate(e)
		if err == nil {
			t.Errorf("Validate(%q) = nil, want %q", c.src, c.want)
			continue
		}
		if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("Validate(%q)\n got %q\nwant %q", c.src, got, c.want)
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field == "" {
			t.Errorf("Validate(%q): %v holds no *FieldError with a field", c.src, err)
		}
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	s := testSchema()
	cases := []struct {
		e    Expr
		want string
	}{
		{tm("tag", OpEq, String(`a" OR "b`)), `filter: column 1: the value of tag contains '"', which would end the query's outer double quotes`},
		{tm("tag:1 OR x", OpEq, Number(2)), `filter: column 1: invalid field name "tag:1 OR x": want a letter or '_' followed by letters, digits or '_'`},
		{tm("AND", OpEq, Number(2)), `filter: column 1: invalid field name "AND": want a letter or '_' followed by letters, digits or '_'`},
		{&And{}, "filter: column 1: empty filter expression"},
		{nil, "filter: column 1: empty filter expression"},
	}
	for _, c := range cases {
		err := s.Validate(c.e)
		if err == nil || err.Error() != c.want {
			t.Errorf("Validate(%v) = %v, want %s", c.e, err, c.want)
		}
	}
}

func TestSchemaFields(t *testing.T) {
	s := TicketSchema(map[string]Kind{"cf_x": KindNumber, "status": KindString})
	f, ok := s.Field("status")
	if !ok || f.Kind != KindNumber || f.Nullable {
		t.Errorf("status = %+v, %v: a custom field must not redefine a standard one", f, ok)
	}
	if f, ok := s.Field("cf_x"); !ok || f.Kind != KindNumber || !f.Nullable {
		t.Errorf("cf_x = %+v, %v", f, ok)
	}
	fields := s.Fields()
	if len(fields) != 18 {
		t.Errorf("got %d fields, want 17 standard + 1 custom", len(fields))
	}
	for i := 1; i < len(fields); i++ {
		if fields[i-1].Name >= fields[i].Name {
			t.Errorf("Fields not sorted: %s before %s", fields[i-1].Name, fields[i].Name)
		}
	}
	var zero Schema
	e, _ := Parse("status:2")
	if zero.Validate(e) == nil {
		t.Error("the zero Schema should know no fields")
	}
	custom := NewSchema(FieldSpec{Name: "risk", Kind: KindNumber})
	if err := custom.Validate(e); err == nil || !strings.Contains(err.Error(), `unknown field "status"`) {
		t.Errorf("NewSchema without status: %v", err)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"status", "status", 0}, {"stauts", "status", 1}, {"priorty", "priority", 1}, {"kitten", "sitting", 3}} {
		if got := distance(c.a, c.b); got != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

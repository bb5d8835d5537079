package filter

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func tm(field string, op Op, v Value) *Term { return &Term{Field: field, Op: op, Value: v} }
func and(xs ...Expr) *And                   { return &And{Exprs: xs} }
func or(xs ...Expr) *Or                     { return &Or{Exprs: xs} }

// validCases are well-formed expressions, their trees and canonical text.
var validCases = []struct {
	src   string
	want  Expr
	canon string
}{
	{"status:2", tm("status", OpEq, Number(2)), "status:2"},
	{"  status:2\t", tm("status", OpEq, Number(2)), "status:2"},
	{"priority:>3", tm("priority", OpGte, Number(3)), "priority:>3"},
	{"priority:<3", tm("priority", OpLte, Number(3)), "priority:<3"},
	{"priority:-1", tm("priority", OpEq, Number(-1)), "priority:-1"},
	{"priority:007", tm("priority", OpEq, Number(7)), "priority:7"},
	{"priority:'4'", tm("priority", OpEq, String("4")), "priority:'4'"},
	{"agent_id: 0", tm("agent_id", OpEq, Number(0)), "agent_id:0"},
	{"agent_id:< 1", tm("agent_id", OpLte, Number(1)), "agent_id:<1"},
	{"agent_id: > 1", tm("agent_id", OpGte, Number(1)), "agent_id:>1"},
	{"agent_id:null", tm("agent_id", OpEq, Null()), "agent_id:null"},
	{"agent_id:NULL", tm("agent_id", OpEq, Null()), "agent_id:null"},
	{"is_vip:true", tm("is_vip", OpEq, Bool(true)), "is_vip:true"},
	{"is_vip:False", tm("is_vip", OpEq, Bool(false)), "is_vip:false"},
	{"tag:'vpn'", tm("tag", OpEq, String("vpn")), "tag:'vpn'"},
	{"tag:''", tm("tag", OpEq, String("")), "tag:''"},
	{"type:'Service Request'", tm("type", OpEq, String("Service Request")), "type:'Service Request'"},
	{`tag:'it\'s'`, tm("tag", OpEq, String("it's")), `tag:'it\'s'`},
	{`tag:'C:\\temp'`, tm("tag", OpEq, String(`C:\temp`)), `tag:'C:\\temp'`},
	{"tag:'a AND b OR (c)'", tm("tag", OpEq, String("a AND b OR (c)")), "tag:'a AND b OR (c)'"},
	{"tag:'null'", tm("tag", OpEq, String("null")), "tag:'null'"},
	{"tag:'ünï'", tm("tag", OpEq, String("ünï")), "tag:'ünï'"},
	{"created_at:>'2024-01-01'", tm("created_at", OpGte, Date(2024, 1, 1)), "created_at:>'2024-01-01'"},
	{"created_at:<2024-01-31", tm("created_at", OpLte, Date(2024, 1, 31)), "created_at:<'2024-01-31'"},
	{"due_by:'2024-01-31T09:30:00Z'", tm("due_by", OpEq, DateTime(time.Date(2024, 1, 31, 9, 30, 0, 0, time.UTC))), "due_by:'2024-01-31T09:30:00Z'"},
	{"due_by:>'2024-01-31T09:30:00.5+02:00'", tm("due_by", OpGte, DateTime(time.Date(2024, 1, 31, 7, 30, 0, 5e8, time.UTC))), "due_by:>'2024-01-31T07:30:00.5Z'"},
	{"due_by:2024-01-31T09:30:00Z", tm("due_by", OpEq, DateTime(time.Date(2024, 1, 31, 9, 30, 0, 0, time.UTC))), "due_by:'2024-01-31T09:30:00Z'"},
	{"status:open", tm("status", OpEq, Word("open")), "status:open"},
	{"email:a.b+c@example.com", tm("email", OpEq, Word("a.b+c@example.com")), "email:a.b+c@example.com"},
	{"custom_field_1:'x'", tm("custom_field_1", OpEq, String("x")), "custom_field_1:'x'"},
	{"_x:1", tm("_x", OpEq, Number(1)), "_x:1"},
	{"priority:4 OR priority:3", or(tm("priority", OpEq, Number(4)), tm("priority", OpEq, Number(3))), "priority:4 OR priority:3"},
	{"a:1 AND b:2 AND c:3", and(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2)), tm("c", OpEq, Number(3))), "a:1 AND b:2 AND c:3"},
	{"(a:1 AND b:2) AND c:3", and(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2)), tm("c", OpEq, Number(3))), "a:1 AND b:2 AND c:3"},
	{"a:1 OR (b:2 OR (c:3))", or(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2)), tm("c", OpEq, Number(3))), "a:1 OR b:2 OR c:3"},
	{"((a:1))", tm("a", OpEq, Number(1)), "a:1"},
	{"agent_id:7 AND (status:2 OR status:3)", and(tm("agent_id", OpEq, Number(7)), or(tm("status", OpEq, Number(2)), tm("status", OpEq, Number(3)))), "agent_id:7 AND (status:2 OR status:3)"},
	{"(a:1 AND b:2) OR (c:3 AND (d:4 OR e:5))",
		or(and(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2))), and(tm("c", OpEq, Number(3)), or(tm("d", OpEq, Number(4)), tm("e", OpEq, Number(5))))),
		"(a:1 AND b:2) OR (c:3 AND (d:4 OR e:5))"},
	{"(a:1)AND(b:2)", and(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2))), "a:1 AND b:2"},
	{"a:1\nAND\tb:'x'", and(tm("a", OpEq, Number(1)), tm("b", OpEq, String("x"))), "a:1 AND b:'x'"},
	{"(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3 AND created_at:<'2026-01-01'",
		and(or(tm("status", OpEq, Number(2)), tm("status", OpEq, Number(3)), tm("status", OpEq, Number(12))),
			tm("agent_id", OpEq, Number(0)), tm("priority", OpGte, Number(3)), tm("created_at", OpLte, Date(2026, 1, 1))),
		"(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3 AND created_at:<'2026-01-01'"},
}

func TestParseValid(t *testing.T) {
	for _, c := range validCases {
		t.Run(c.src, func(t *testing.T) {
			got, err := Parse(c.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.src, err)
			}
			if !Equal(got, c.want) {
				t.Errorf("Parse(%q) = %s, want %s", c.src, got, c.want)
			}
			if s := got.String(); s != c.canon {
				t.Errorf("String() = %q, want %q", s, c.canon)
			}
			back, err := Parse(got.String())
			if err != nil || !Equal(back, got) || back.String() != got.String() {
				t.Errorf("round trip of %q: %v, %v", got.String(), back, err)
			}
		})
	}
}

func TestParsePositions(t *testing.T) {
	src := "  status:2 AND (agent_id:0 OR\ttag:'x')"
	e, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, x := range Terms(e) {
		got = append(got, x.Pos)
		if !strings.HasPrefix(src[x.Pos:], x.Field+":") {
			t.Errorf("Pos %d of %s does not point at its field", x.Pos, x.Field)
		}
	}
	if want := []int{2, 16, 30}; !equalInts(got, want) {
		t.Errorf("positions = %v, want %v", got, want)
	}

	// ParseQuoted counts from the opening quote.
	e, err = ParseQuoted(`"status:2 AND agent_id:0"`)
	if err != nil {
		t.Fatal(err)
	}
	if p := Terms(e)[1].Pos; p != 14 {
		t.Errorf("quoted Pos = %d, want 14", p)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errorCases are malformed expressions with the exact column and message.
var errorCases = []struct {
	src string
	col int
	msg string
}{
	{"", 1, "expected a term or '(', found end of input"},
	{"   ", 4, "expected a term or '(', found end of input"},
	{"status", 7, `expected ':' after field "status", found end of input`},
	{"status 2", 8, `expected ':' after field "status", found "2"`},
	{"status :2", 7, `expected ':' right after field "status", found space (remove the space before ':')`},
	{"status=2", 7, `expected ':' after field "status", found "="`},
	{"status!:2", 7, `expected ':' after field "status", found "!"`},
	{"status:", 8, `expected a value after "status:", found end of input`},
	{"priority:>)", 11, `expected a value after "priority:>", found ")"`},
	{"(priority:> )", 13, `expected a value after "priority:>", found ")"`},
	{"priority:>=3", 11, `expected a value after "priority:>", found "=" (:> and :< are already inclusive; there is no >=)`},
	{"status::2", 8, `expected a value after "status:", found ":"`},
	{"status:AND", 8, `expected a value after "status:", found AND`},
	{`type:"Incident"`, 6, `expected a value after "type:", found '"' (quote values with single quotes)`},
	{"x:1 AND y:'abc", 11, "unterminated string starting at column 11"},
	{`tag:'abc\`, 5, "unterminated string starting at column 5"},
	{`tag:'a\nb'`, 7, `invalid escape \n in the string starting at column 5: only \' and \\ are allowed`},
	{`tag:'say "hi"'`, 10, `double quote in the string starting at column 5: the desk wraps the whole query in double quotes, so a value cannot contain '"'`},
	{"tag:'a'b", 8, `expected a space, ')' or end of input after the value of "tag", found "b"`},
	{"status:2;", 9, `expected a space, ')' or end of input after the value of "status", found ";"`},
	{"status:2 status:3", 10, `expected AND, OR or end of input after a term, found "status"`},
	{"status:2 AND x:1 x", 18, `expected AND, OR or end of input after a term, found "x"`},
	{"(status:2 status:3)", 11, `expected AND, OR or ')' after a term, found "status"`},
	{`"status:2" AND "x:1"`, 1, `expected a term or '(', found '"' (the whole query goes inside one pair of double quotes; quote values with single quotes)`},
	{`status:2 "`, 10, `expected AND, OR or end of input after a term, found '"' (the whole query goes inside one pair of double quotes; quote values with single quotes)`},
	{"a:1 and b:2", 5, `expected AND or OR, found "and" (the keywords are uppercase)`},
	{"a:1 Or b:2", 5, `expected AND or OR, found "Or" (the keywords are uppercase)`},
	{"a:1 AND", 8, "expected a term or '(' after AND, found end of input"},
	{"a:1 OR OR b:2", 8, "expected a term, found OR"},
	{"AND a:1", 1, "expected a term, found AND"},
	{"a:1 AND b:2 OR c:3", 13, "OR after AND (column 5) at the same level: an OR group combined with AND must be parenthesized, e.g. a:1 AND (b:2 OR c:3)"},
	{"a:1 OR b:2 AND c:3", 12, "AND after OR (column 5) at the same level: an OR group combined with AND must be parenthesized, e.g. a:1 AND (b:2 OR c:3)"},
	{"(a:1", 5, "expected ')' to close '(' at column 1, found end of input"},
	{"((a:1) AND b:2", 15, "expected ')' to close '(' at column 1, found end of input"},
	{"a:1)", 4, "unbalanced ')'"},
	{"(a:1))", 6, "unbalanced ')'"},
	{")", 1, `expected a term or '(', found ")"`},
	{"()", 2, `expected a term or '(' after '(', found ")"`},
	{"a:1 AND ()", 10, `expected a term or '(' after '(', found ")"`},
	{"1:2", 1, `expected a term or '(', found "1"`},
	{"é:2", 1, `expected a term or '(', found "é"`},
	{"priority:99999999999999999999", 10, "number 99999999999999999999 is out of range"},
	{"created_at:'2024-02-30'", 12, `invalid date "2024-02-30": want a valid date yyyy-mm-dd`},
	{"created_at:2024-13-01", 12, `invalid date "2024-13-01": want a valid date yyyy-mm-dd`},
	{"due_by:'2024-01-31T25:00:00Z'", 8, `invalid date "2024-01-31T25:00:00Z": want an RFC3339 datetime such as 2024-01-31T09:00:00Z`},
	{"due_by:'0000-01-01T00:00:00+01:00'", 8, `invalid date "0000-01-01T00:00:00+01:00": want a datetime between years 0000 and 9999 in UTC`},
	{strings.Repeat("(", 101) + "a:1" + strings.Repeat(")", 101), 101, "parentheses nested more than 100 deep"},
}

func TestParseErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.src, func(t *testing.T) {
			e, err := Parse(c.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", c.src, e)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if se.Pos+1 != c.col || se.Msg != c.msg {
				t.Errorf("Parse(%q)\n got column %d: %s\nwant column %d: %s", c.src, se.Pos+1, se.Msg, c.col, c.msg)
			}
			if want := "filter: column " + itoa(c.col) + ": " + c.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func itoa(n int) string { return Number(int64(n)).String() }

func TestParseQuoted(t *testing.T) {
	cases := []struct {
		q       string
		want    string // canonical text, or
		wantErr string // the error
	}{
		{q: `"status:2 AND agent_id:null"`, want: "status:2 AND agent_id:null"},
		{q: `" priority:4 "`, want: "priority:4"},
		{q: `status:2`, wantErr: `filter: column 1: the query must be enclosed in double quotes, e.g. query="status:2 AND priority:4"`},
		{q: `"status:2`, wantErr: `filter: column 1: the query must be enclosed in double quotes, e.g. query="status:2 AND priority:4"`},
		{q: `"`, wantErr: `filter: column 1: the query must be enclosed in double quotes, e.g. query="status:2 AND priority:4"`},
		{q: `""`, wantErr: "filter: column 2: expected a term or '(', found end of input"},
		{q: `"status"`, wantErr: `filter: column 8: expected ':' after field "status", found end of input`},
		{q: `"requester_id:1" AND "status:2"`, wantErr: `filter: column 16: expected a space, ')' or end of input after the value of "requester_id", found '"' (the whole query goes inside one pair of double quotes; quote values with single quotes)`},
		{q: `"tag:'a"b'"`, wantErr: `filter: column 8: double quote in the string starting at column 6: the desk wraps the whole query in double quotes, so a value cannot contain '"'`},
		{q: `"` + strings.Repeat("a", MaxLen-4) + `:'x'"`, want: strings.Repeat("a", MaxLen-4) + ":'x'"},
		{q: `"` + strings.Repeat("a", MaxLen-3) + `:'x'"`, wantErr: "filter: column 1: query is 513 characters long; the desk accepts at most 512 between the double quotes"},
	}
	for _, c := range cases {
		e, err := ParseQuoted(c.q)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("ParseQuoted(%.40q) error = %v, want %s", c.q, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseQuoted(%.40q): %v", c.q, err)
			continue
		}
		if e.String() != c.want {
			t.Errorf("ParseQuoted(%.40q) = %s, want %s", c.q, e, c.want)
		}
	}
	_, err := ParseQuoted(`"` + strings.Repeat("x", MaxLen+1) + `"`)
	if !errors.Is(err, ErrTooLong) {
		t.Errorf("too long query: %v does not wrap ErrTooLong", err)
	}
}

package filter

import (
	"testing"
	"time"
)

// expandOpen is the deskbot macro expansion of status:open.
func expandOpen(t *Term) (Expr, bool) {
	if t.Field != "status" || t.Value.Kind != KindWord || t.Value.Str != "open" {
		return nil, false
	}
	return or(tm("status", OpEq, Number(2)), tm("status", OpEq, Number(3)), tm("status", OpEq, Number(12))), true
}

func TestRewrite(t *testing.T) {
	cases := []struct {
		src, want string
	}{
		{"status:open", "status:2 OR status:3 OR status:12"},
		{"status:open AND agent_id:0 AND priority:4", "(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:4"},
		{"status:open OR priority:4", "status:2 OR status:3 OR status:12 OR priority:4"},
		{"priority:4 AND (status:open OR tag:'x')", "priority:4 AND (status:2 OR status:3 OR status:12 OR tag:'x')"},
		{"(status:open AND tag:'a') OR priority:4", "((status:2 OR status:3 OR status:12) AND tag:'a') OR priority:4"},
		{"status:2 AND priority:4", "status:2 AND priority:4"},
	}
	for _, c := range cases {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.src, err)
		}
		before := e.String()
		got := Rewrite(e, expandOpen)
		if got.String() != c.want {
			t.Errorf("Rewrite(%q) = %q, want %q", c.src, got, c.want)
		}
		// The result is normal: it equals the parse of its own text.
		back, err := Parse(got.String())
		if err != nil || !Equal(back, got) {
			t.Errorf("Rewrite(%q) = %#v is not normalized (reparse %v, %v)", c.src, got, back, err)
		}
		if e.String() != before {
			t.Errorf("Rewrite modified its input: %q became %q", before, e)
		}
		if err := TicketSchema(nil).Validate(got); err != nil {
			t.Errorf("Validate(%q): %v", got, err)
		}
	}
}

func TestRewriteAndReplacement(t *testing.T) {
	// An And put in place of a term in an And is merged; in an Or it stays a group.
	repl := func(t *Term) (Expr, bool) {
		if t.Field != "recent" {
			return nil, false
		}
		return and(tm("created_at", OpGte, Date(2024, 1, 1)), tm("created_at", OpLte, Date(2024, 1, 31))), true
	}
	for src, want := range map[string]string{
		"recent:x AND status:2": "created_at:>'2024-01-01' AND created_at:<'2024-01-31' AND status:2",
		"recent:x OR status:2":  "(created_at:>'2024-01-01' AND created_at:<'2024-01-31') OR status:2",
	} {
		e, _ := Parse(src)
		if got := Rewrite(e, repl).String(); got != want {
			t.Errorf("Rewrite(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestRewriteDropAndCopy(t *testing.T) {
	e, _ := Parse("status:2 AND (relative:x OR tag:'a')")
	dropRelative := func(t *Term) (Expr, bool) { return nil, t.Field == "relative" }
	got := Rewrite(e, dropRelative)
	if got.String() != "status:2 AND tag:'a'" {
		t.Errorf("dropping a term: %q", got)
	}
	if x := Rewrite(e, func(*Term) (Expr, bool) { return nil, true }); x != nil {
		t.Errorf("dropping every term = %v, want nil", x)
	}

	// The result shares no terms with the input or with the replacement.
	repl := tm("priority", OpEq, Number(4))
	out := Rewrite(e, func(t *Term) (Expr, bool) {
		if t.Field == "relative" {
			return repl, true
		}
		return nil, false
	})
	for _, x := range Terms(out) {
		x.Value = Number(99)
	}
	if e.String() != "status:2 AND (relative:x OR tag:'a')" || repl.Value.Num != 4 {
		t.Errorf("Rewrite result aliases its input: %s, %s", e, repl)
	}
}

func TestTermsOrder(t *testing.T) {
	e, _ := Parse("a:1 AND (b:2 OR (c:3 AND d:4)) AND e:5")
	var got string
	for _, x := range Terms(e) {
		got += x.Field
	}
	if got != "abcde" {
		t.Errorf("Terms order = %s", got)
	}
	if Terms(nil) != nil {
		t.Error("Terms(nil) should be empty")
	}
}

func TestStringBuiltInCode(t *testing.T) {
	cases := []struct {
		e    Expr
		want string
	}{
		{and(tm("a", OpEq, Number(1)), and(tm("b", OpEq, Number(2)), tm("c", OpEq, Number(3)))), "a:1 AND b:2 AND c:3"},
		{or(and(tm("a", OpEq, Number(1))), or(tm("b", OpEq, Number(2)))), "a:1 OR b:2"},
		{and(or(tm("a", OpEq, Number(1)), tm("b", OpEq, Number(2))), and()), "a:1 OR b:2"},
		{and(), ""},
		{tm("tag", OpEq, String(`back\slash 'quote'`)), `tag:'back\\slash \'quote\''`},
		{tm("due_by", OpLte, DateTime(time.Date(2024, 1, 31, 9, 0, 0, 0, time.FixedZone("CET", 3600)))), "due_by:<'2024-01-31T08:00:00Z'"},
		{tm("x", OpEq, Value{Kind: Kind(42)}), "x:<invalid value>"},
	}
	for _, c := range cases {
		if got := c.e.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

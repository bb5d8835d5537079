package filter

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestEncode(t *testing.T) {
	cases := []struct {
		src  string
		want string
	}{
		{"priority:4 OR priority:3", "%22priority%3A4%20OR%20priority%3A3%22"},
		{"created_at:>'2020-01-01'", "%22created_at%3A%3E%272020-01-01%27%22"},
		{"agent_id:null", "%22agent_id%3Anull%22"},
		{"type:'Service Request'", "%22type%3A%27Service%20Request%27%22"},
		{"tag:'a+b&c=d#e%f'", "%22tag%3A%27a%2Bb%26c%3Dd%23e%25f%27%22"},
		{`tag:'it\'s'`, "%22tag%3A%27it%5C%27s%27%22"},
		{"agent_id:7 AND (status:2 OR status:3)", "%22agent_id%3A7%20AND%20%28status%3A2%20OR%20status%3A3%29%22"},
		{"  status:2\nAND   priority:4 ", "%22status%3A2%20AND%20priority%3A4%22"}, // canonical text is sent
	}
	for _, c := range cases {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.src, err)
		}
		got, err := Encode(e)
		if err != nil {
			t.Errorf("Encode(%q): %v", c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("Encode(%q)\n got %s\nwant %s", c.src, got, c.want)
		}
		if strings.ContainsAny(got, "+ \"'") {
			t.Errorf("Encode(%q) = %s holds a raw '+', space or quote", c.src, got)
		}
		// What the desk decodes reads back as the same expression.
		q, err := url.QueryUnescape(got)
		if err != nil {
			t.Fatalf("QueryUnescape(%s): %v", got, err)
		}
		back, err := ParseQuoted(q)
		if err != nil || !Equal(back, e) {
			t.Errorf("desk reads %s back as %v, %v; want %s", q, back, err, e)
		}
	}
}

func TestEncodeLength(t *testing.T) {
	// "tag:'" + n x's + "'" is n+6 bytes.
	mk := func(n int) Expr { return tm("tag", OpEq, String(strings.Repeat("x", n))) }
	if _, err := Encode(mk(MaxLen - 6)); err != nil {
		t.Errorf("Encode of exactly %d bytes: %v", MaxLen, err)
	}
	if err := CheckLen(mk(MaxLen - 6)); err != nil {
		t.Errorf("CheckLen of exactly %d bytes: %v", MaxLen, err)
	}
	for name, err := range map[string]error{
		"CheckLen": CheckLen(mk(MaxLen - 5)),
		"Encode":   func() error { _, err := Encode(mk(MaxLen - 5)); return err }(),
	} {
		if err == nil || err.Error() != "filter: query is 513 characters long; the desk accepts at most 512" {
			t.Errorf("%s of 513 bytes: %v", name, err)
		}
		var le *LengthError
		if !errors.Is(err, ErrTooLong) || !errors.As(err, &le) || le.Len != 513 {
			t.Errorf("%s: %v is not a *LengthError{513} wrapping ErrTooLong", name, err)
		}
	}

	// Macro expansion is what makes queries long: 120 open statuses.
	e, _ := Parse("status:open AND agent_id:0")
	x := Rewrite(e, func(t *Term) (Expr, bool) {
		if t.Value.Kind != KindWord {
			return nil, false
		}
		var ids []Expr
		for i := range 120 {
			ids = append(ids, tm("status", OpEq, Number(int64(1000+i))))
		}
		return &Or{Exprs: ids}, true
	})
	if err := CheckLen(x); !errors.Is(err, ErrTooLong) {
		t.Errorf("CheckLen of %d bytes: %v", len(x.String()), err)
	}
}

func TestEncodeRejects(t *testing.T) {
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"double quote breaking out", and(tm("status", OpEq, Number(2)), tm("tag", OpEq, String(`x'" OR "status:5`))),
			`filter: encode: the value of tag contains '"', which would end the query's outer double quotes`},
		{"injected field", tm("status:2 OR agent_id", OpEq, Number(5)),
			`filter: encode: invalid field name "status:2 OR agent_id": want a letter or '_' followed by letters, digits or '_'`},
		{"keyword field", tm("OR", OpEq, Number(5)),
			`filter: encode: invalid field name "OR": want a letter or '_' followed by letters, digits or '_'`},
		{"macro", tm("status", OpEq, Word("open")),
			"filter: encode: unquoted value open in status: quote strings, and expand deskbot macros such as status:open before sending"},
		{"empty", &Or{}, "filter: encode: empty expression"},
		{"nil", nil, "filter: encode: empty expression"},
		{"year out of range", tm("due_by", OpEq, DateTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))),
			"filter: encode: due_by:'10000-01-01T00:00:00Z' does not read back as the same expression"},
		{"invalid kind", tm("status", OpEq, Value{Kind: KindNumber + 100}),
			"filter: encode: status:<invalid value> does not read back: filter: column 17: expected AND, OR or end of input after a term, found \"value\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Encode(c.e)
			if err == nil || err.Error() != c.want {
				t.Errorf("Encode = %q, %v\nwant error %s", got, err, c.want)
			}
		})
	}
}

func TestEncodeBuiltInCode(t *testing.T) {
	// Trees built in code are normalized, and a String that looks like a
	// date goes out as the same text.
	e := and(and(tm("agent_id", OpEq, Number(7)), or(tm("status", OpEq, Number(2)))), tm("tag", OpEq, String("2024-01-31")))
	got, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := "%22agent_id%3A7%20AND%20status%3A2%20AND%20tag%3A%272024-01-31%27%22"; got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
}

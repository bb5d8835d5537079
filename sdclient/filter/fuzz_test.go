package filter

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever parses prints
// canonically: the text reads back to an equal tree that prints the same,
// Encode either fails cleanly or produces what the desk reads back as the
// same expression, and Validate and Eval do not panic.
func FuzzParse(f *testing.F) {
	for _, c := range validCases {
		f.Add(c.src)
	}
	for _, c := range errorCases {
		f.Add(c.src)
	}
	f.Add(`tag:'a\\b\'c' OR (x:-0 AND y:2024-02-29T23:59:59.999+14:00)`)
	schema := TicketSchema(map[string]Kind{"is_vip": KindBool, "cf": KindNull})
	rec := ticket()
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", src, err)
			}
			if e != nil {
				t.Fatalf("Parse(%q) returned both %v and %v", src, e, err)
			}
			return
		}
		text := e.String()
		if strings.Contains(text, `"`) {
			t.Fatalf("Parse(%q) printed %q with a double quote", src, text)
		}
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", src, text, err)
		}
		if !Equal(back, e) {
			t.Fatalf("Parse(%q) = %#v; its text %q reads back as %#v", src, e, text, back)
		}
		if back.String() != text {
			t.Fatalf("%q prints as %q the second time", text, back.String())
		}
		if len(Terms(back)) != len(Terms(e)) {
			t.Fatalf("%q: term count changed", text)
		}
		if enc, err := Encode(e); err == nil {
			q, err := url.QueryUnescape(enc)
			if err != nil {
				t.Fatalf("Encode(%q) = %q does not unescape: %v", text, enc, err)
			}
			if strings.Contains(enc, "+") || strings.Contains(enc, " ") {
				t.Fatalf("Encode(%q) = %q has a '+' or a space", text, enc)
			}
			d, err := ParseQuoted(q)
			if err != nil || !Equal(d, e) {
				t.Fatalf("Encode(%q): the desk reads %q as %v, %v", text, q, d, err)
			}
		}
		_ = schema.Validate(e)
		_ = e.Eval(rec)
		_ = Rewrite(e, func(t *Term) (Expr, bool) { return nil, false })
	})
}

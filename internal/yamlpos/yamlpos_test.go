package yamlpos

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// parse parses src and returns its source and top-level mapping.
func parse(t *testing.T, src string) (*Source, *yaml.Node) {
	t.Helper()
	var doc yaml.Node
	if err := Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	s := NewSource([]byte(src))
	s.Index(&doc)
	return s, doc.Content[0]
}

// Pos follows a value offset back through quotes, escapes, folding and
// block scalars to the file's line and column.
func TestPos(t *testing.T) {
	tests := []struct {
		name, src string
		off       int
		line, col int
	}{
		{"plain", "k: abc def\n", 4, 1, 8},
		{"double quoted escape", `k: "a\tb"` + "\n", 2, 1, 8},
		{"single quoted doubled quote", "k: 'it''s'\n", 3, 1, 9},
		{"folded plain", "k: abc\n  def\n", 4, 2, 3},
		{"literal block", "k: |\n  ab\n  cd\n", 3, 3, 3},
		{"block with indicator", "k: |2\n    ab\n", 2, 2, 5},
		{"past the end: the scalar itself", "k: ab\n", 9, 1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, root := parse(t, tt.src)
			line, col := s.Pos(root.Content[1], tt.off)
			if line != tt.line || col != tt.col {
				t.Errorf("Pos(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
			}
		})
	}
}

// Mapping reports unknown, duplicate and non-scalar keys where they are,
// each in the style its Keys ask for, and leaves them out.
func TestMapping(t *testing.T) {
	src := "a: 1\nb: 2\na: 3\nzz: 4\nzz: 5\n[x]: 6\n"
	tests := []struct {
		name string
		keys Keys
		want []string
	}{
		{"rules style", Keys{Allowed: []string{"a", "b"}, Hint: func(k string) string { return " (hint " + k + ")" }}, []string{
			`f.yaml:3:1: duplicate key "a" (first at line 1)`,
			`f.yaml:4:1: unknown key "zz" in the test (want one of a, b) (hint zz)`,
			`f.yaml:5:1: duplicate key "zz" (first at line 4)`,
			`f.yaml:6:1: the test: want a plain key, got a list`}},
		{"oncall style", Keys{Allowed: []string{"a", "b"}, ScopeDuplicates: true, UnknownTwice: true}, []string{
			`f.yaml:3:1: the test: duplicate key "a" (first at line 1)`,
			`f.yaml:4:1: unknown key "zz" in the test (want one of a, b)`,
			`f.yaml:5:1: unknown key "zz" in the test (want one of a, b)`,
			`f.yaml:6:1: the test: want a plain key, got a list`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, root := parse(t, src)
			r := &Reporter{File: "f.yaml"}
			pairs, ok := r.Mapping(root, "the test", tt.keys)
			if !ok || len(pairs) != 2 || Strict(root, pairs) {
				t.Fatalf("pairs %v, ok %v", pairs, ok)
			}
			var got []string
			for _, e := range r.Errors() {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A problem is one line, its scope before the message; Unscoped moves
// the scope into the message and keeps the text.
func TestErrorText(t *testing.T) {
	r := &Reporter{File: "f.yaml", Scope: `rule "a"`}
	r.At(0, 0, "bad %s", "x\ny")
	e := r.Errors()[0]
	if got, want := e.Error(), `f.yaml:1:1: rule "a": bad x\ny`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if u := e.Unscoped(); u.Error() != e.Error() || u.Msg != `rule "a": bad x\ny` {
		t.Errorf("Unscoped() = %+v", u)
	}
}

// yaml.v3 counts the lines of some parser errors from 0: SyntaxProblem
// counts from 1.
func TestSyntaxProblem(t *testing.T) {
	var doc yaml.Node
	err := Unmarshal([]byte("a: [b\nc: d\n"), &doc)
	if line, msg := SyntaxProblem(err); line != 2 || msg != "did not find expected ',' or ']'" {
		t.Errorf("SyntaxProblem = %d, %q", line, msg)
	}
	if line, msg := SyntaxProblem(errors.New("yaml: something")); line != 1 || msg != "something" {
		t.Errorf("SyntaxProblem = %d, %q", line, msg)
	}
}

// An unquoted {{ }} is found after key: or -, outside quotes and
// comments, and Fix quotes it.
func TestFindUnquotedTemplates(t *testing.T) {
	lines := []string{
		`note: {{ ticket.id }} is late # comment`,
		`quoted: "{{ ticket.id }}"`,
		`# note: {{ x }}`,
		`alert: {text: {{ ticket.subject }}, channel: x}`,
	}
	got := FindUnquotedTemplates(lines)
	if len(got) != 2 || got[0].Line != 1 || got[0].Key != "note" || got[0].Text != "{{ ticket.id }} is late" ||
		got[1].Line != 4 || got[1].Key != "text" || got[1].Rest != ", channel: x}" {
		t.Fatalf("FindUnquotedTemplates = %+v", got)
	}
	if fixed := got[1].Fix(lines[3]); fixed != `alert: {text: "{{ ticket.subject }}", channel: x}` {
		t.Errorf("Fix = %s", fixed)
	}
}

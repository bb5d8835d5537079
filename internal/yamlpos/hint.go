package yamlpos

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// An unquoted `{{ ... }}` is a YAML flow mapping: `note: {{ ticket.id }}`
// loads as a mapping whose only key is another mapping, and `note: {{
// ticket.id }} is late` is not YAML at all. Both get a message that says to
// quote the text, with the quoted text to write.

// QuoteHint is the message for an unquoted template: key (may be "") and
// the text as written.
func QuoteHint(key, text string) string {
	w := Quote(text)
	if key != "" {
		w = key + ": " + w
	}
	return "{{ }} must be quoted in YAML: write " + w
}

// Quote writes s as a YAML double-quoted scalar.
func Quote(s string) string {
	return strconv.Quote(s) // Go's escapes are YAML's (\" \\ \n \t \uXXXX)
}

// IsUnquotedTemplate reports whether n is what YAML makes of an unquoted
// {{ ... }}: a flow mapping whose only key is itself a mapping.
func IsUnquotedTemplate(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 || len(n.Content) != 2 {
		return false
	}
	k := Resolve(n.Content[0])
	return k.Kind == yaml.MappingNode
}

// TemplateHint returns the message for node n, an unquoted template
// (IsUnquotedTemplate): its text read back from the file, and the key
// written before it on its line, if any.
func (s *Source) TemplateHint(n *yaml.Node) string {
	line := s.line(n.Line)
	start := n.Column - 1
	if line == nil || start < 0 || start >= len(line) || line[start] != '{' {
		return QuoteHint("", "{{ ... }}")
	}
	end, depth := len(line), 0
	for i := start; i < len(line); i++ {
		switch line[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 {
			end = i + 1
			break
		}
	}
	return QuoteHint(keyBefore(line, start), string(line[start:end]))
}

// keyBefore returns the plain key written just before column start of
// line (`key: ` or `key:`), or "".
func keyBefore(line []rune, start int) string {
	i := start - 1
	for i >= 0 && (line[i] == ' ' || line[i] == '\t') {
		i--
	}
	if i < 0 || line[i] != ':' {
		return ""
	}
	j := i
	for j > 0 && isKeyRune(line[j-1]) {
		j--
	}
	return string(line[j:i])
}

func isKeyRune(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// UnquotedTemplate is a value written as an unquoted {{ ... }} on one line.
type UnquotedTemplate struct {
	Line, Col int    // 1-based, of the {{
	Key       string // the key before it, or ""
	Text      string // the value: the rest of the line, comment excluded
	Rest      string // what follows the value in a flow collection
	Start     int    // rune offset of the {{ in the line
}

// Fix returns line (the template's) with the template quoted.
func (t UnquotedTemplate) Fix(line string) string {
	r := []rune(line)
	return string(r[:t.Start]) + Quote(t.Text) + t.Rest
}

// FindUnquotedTemplates finds, line by line, values that start with {{
// outside quotes: after `key:` or a list's `-`, in block context; at most
// one a line.
func FindUnquotedTemplates(lines []string) []UnquotedTemplate {
	var out []UnquotedTemplate
	for i, s := range lines {
		if t, ok := unquotedTemplateIn([]rune(s)); ok {
			t.Line = i + 1
			out = append(out, t)
		}
	}
	return out
}

// unquotedTemplateIn finds the first value of line r that starts with {{
// outside quotes.
func unquotedTemplateIn(r []rune) (UnquotedTemplate, bool) {
	var st lineState
	for j := 0; j+1 < len(r); {
		next, open := st.step(r, j)
		if open {
			if k := indicatorBefore(r, j); k >= 0 {
				return st.template(r, j, k), true
			}
		}
		j = next
	}
	return UnquotedTemplate{}, false
}

// lineState is what a scan of one line has passed: an open quote, and
// the flow collections ({...}, [...]) open.
type lineState struct {
	quote rune
	depth int
}

// step reads r[j]: it returns the index to read next, and whether r[j]
// starts a {{ outside quotes.
func (st *lineState) step(r []rune, j int) (next int, open bool) {
	c := r[j]
	switch {
	case st.quote != 0:
		if c == st.quote {
			st.quote = 0
		} else if c == '\\' && st.quote == '"' {
			return j + 2, false
		}
		return j + 1, false
	case c == '#' && (j == 0 || r[j-1] == ' ' || r[j-1] == '\t'):
		return len(r), false // a comment
	case c == '"' || c == '\'':
		if j == 0 || strings.ContainsRune(" \t:[{,-", r[j-1]) {
			st.quote = c
		}
		return j + 1, false
	case c != '{' || r[j+1] != '{':
		switch c {
		case '{', '[':
			st.depth++
		case '}', ']':
			st.depth = max(st.depth-1, 0)
		}
		return j + 1, false
	}
	return j + 1, true
}

// indicatorBefore returns the index of the : or - that the {{ at j
// follows after at least one blank, or -1.
func indicatorBefore(r []rune, j int) int {
	k := j - 1
	for k >= 0 && (r[k] == ' ' || r[k] == '\t') {
		k--
	}
	if k < 0 || (r[k] != ':' && r[k] != '-') || k == j-1 {
		return -1
	}
	return k
}

// template reads the unquoted template at j, after the indicator at k.
func (st *lineState) template(r []rune, j, k int) UnquotedTemplate {
	text, rest := strings.TrimSpace(stripComment(string(r[j:]))), ""
	if st.depth > 0 {
		// In a flow collection the value ends at a , or the collection's
		// end outside the {{ }}.
		m := flowValueEnd(r, j)
		text, rest = strings.TrimSpace(string(r[j:m])), string(r[m:])
	}
	key := ""
	if r[k] == ':' {
		key = keyBefore(r, j)
	}
	return UnquotedTemplate{Col: j + 1, Key: key, Text: text, Rest: rest, Start: j}
}

// flowValueEnd returns where the value starting at j of a flow collection
// ends: at a , or the collection's end outside braces.
func flowValueEnd(r []rune, j int) int {
	m, braces := j, 0
	for ; m < len(r); m++ {
		switch {
		case r[m] == '{':
			braces++
		case r[m] == '}' && braces == 0:
			return m
		case r[m] == '}':
			braces--
		case braces == 0 && (r[m] == ',' || r[m] == ']'):
			return m
		}
	}
	return m
}

// stripComment drops a trailing # comment (a # after a blank).
func stripComment(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i]
		}
	}
	return s
}

package rules

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// An unquoted `{{ ... }}` is a YAML flow mapping: `note: {{ ticket.id }}`
// loads as a mapping whose only key is another mapping, and `note: {{
// ticket.id }} is late` is not YAML at all. Both get a message that says to
// quote the text, with the quoted text to write.

// quoteHint is the message for an unquoted template: key (may be "") and
// the text as written.
func quoteHint(key, text string) string {
	w := yamlQuote(text)
	if key != "" {
		w = key + ": " + w
	}
	return "{{ }} must be quoted in YAML: write " + w
}

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	return strconv.Quote(s) // Go's escapes are YAML's (\" \\ \n \t \uXXXX)
}

// isUnquotedTemplate reports whether n is what YAML makes of an unquoted
// {{ ... }}: a flow mapping whose only key is itself a mapping.
func isUnquotedTemplate(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 || len(n.Content) != 2 {
		return false
	}
	k := resolve(n.Content[0])
	return k.Kind == yaml.MappingNode
}

// templateHint returns the message for node n, an unquoted template
// (isUnquotedTemplate): its text read back from the file, and the key
// written before it on its line, if any.
func (l *loader) templateHint(n *yaml.Node) string {
	if n.Line < 1 || n.Line > len(l.lines) {
		return quoteHint("", "{{ ... }}")
	}
	line := []rune(l.lines[n.Line-1])
	start := n.Column - 1
	if start < 0 || start >= len(line) || line[start] != '{' {
		return quoteHint("", "{{ ... }}")
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
	return quoteHint(keyBefore(line, start), string(line[start:end]))
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

// unquotedTemplate is a value written as an unquoted {{ ... }} on one line.
type unquotedTemplate struct {
	line, col int    // 1-based, of the {{
	key       string // the key before it, or ""
	text      string // the value: the rest of the line, comment excluded
	rest      string // what follows the value in a flow collection
	start     int    // rune offset of the {{ in the line
}

var (
	ruleNameLineRE = regexp.MustCompile(`^\s*(?:-\s+)?name:\s*["']?([a-z0-9-]+)["']?\s*(?:#.*)?$`)
	ruleStartRE    = regexp.MustCompile(`^\s*-\s`)
)

// findUnquotedTemplates finds, line by line, values that start with {{
// outside quotes: after `key:` or a list's `-`, in block context.
func findUnquotedTemplates(lines []string) []unquotedTemplate {
	var out []unquotedTemplate
	for i, s := range lines {
		r := []rune(s)
		var quote rune
		depth := 0 // of flow collections ({...}, [...]) open on the line
		for j := 0; j+1 < len(r); j++ {
			c := r[j]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				} else if c == '\\' && quote == '"' {
					j++
				}
				continue
			case c == '#' && (j == 0 || r[j-1] == ' ' || r[j-1] == '\t'):
				j = len(r) // a comment
				continue
			case c == '"' || c == '\'':
				if j == 0 || strings.ContainsRune(" \t:[{,-", r[j-1]) {
					quote = c
				}
				continue
			case c != '{' || r[j+1] != '{':
				switch c {
				case '{', '[':
					depth++
				case '}', ']':
					depth = max(depth-1, 0)
				}
				continue
			}
			k := j - 1
			for k >= 0 && (r[k] == ' ' || r[k] == '\t') {
				k--
			}
			if k < 0 || (r[k] != ':' && r[k] != '-') || k == j-1 {
				continue
			}
			text, rest := strings.TrimSpace(stripComment(string(r[j:]))), ""
			if depth > 0 {
				// In a flow collection the value ends at a , or the
				// collection's end outside the {{ }}.
				m, braces := j, 0
				for ; m < len(r); m++ {
					if r[m] == '{' {
						braces++
					} else if r[m] == '}' {
						if braces == 0 {
							break
						}
						braces--
					} else if braces == 0 && (r[m] == ',' || r[m] == ']') {
						break
					}
				}
				text, rest = strings.TrimSpace(string(r[j:m])), string(r[m:])
			}
			key := ""
			if r[k] == ':' {
				key = keyBefore(r, j)
			}
			out = append(out, unquotedTemplate{line: i + 1, col: j + 1, key: key, text: text, rest: rest, start: j})
			break
		}
	}
	return out
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

// ruleAt guesses, for a file YAML cannot parse, the name of the rule that
// line (1-based) is in: the nearest name: above it, unless a list item
// less indented than that name starts in between (another rule).
func ruleAt(lines []string, line int) string {
	minDash := -1 // least indentation of a "- " line seen so far
	for i := line - 1; i >= 0 && i < len(lines); i-- {
		if m := ruleNameLineRE.FindStringSubmatch(lines[i]); m != nil {
			if minDash >= 0 && minDash <= strings.Index(lines[i], "name:")-2 {
				return "" // a list item in between starts another rule
			}
			return m[1]
		}
		if i < line-1 && ruleStartRE.MatchString(lines[i]) {
			if d := indentOf(lines[i]); minDash < 0 || d < minDash {
				minDash = d
			}
		}
	}
	return ""
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// syntaxHints explains a YAML syntax error caused by unquoted templates:
// when quoting every unquoted {{ ... }} value makes the file parse, it
// reports each one and returns true.
func (l *loader) syntaxHints(data []byte) bool {
	found := findUnquotedTemplates(l.lines)
	if len(found) == 0 {
		return false
	}
	fixed := append([]string(nil), l.lines...)
	for _, f := range found {
		r := []rune(fixed[f.line-1])
		fixed[f.line-1] = string(r[:f.start]) + yamlQuote(f.text) + f.rest
	}
	var doc yaml.Node
	if safeUnmarshal([]byte(strings.Join(fixed, "\n")), &doc) != nil {
		return false
	}
	for _, f := range found {
		l.errs = append(l.errs, Error{File: l.file, Line: f.line, Col: f.col, Rule: ruleAt(l.lines, f.line),
			Msg: keyPrefix(f.key) + quoteHint(f.key, f.text)})
	}
	return true
}

func keyPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + ": "
}

package rules

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

var (
	ruleNameLineRE = regexp.MustCompile(`^\s*(?:-\s+)?name:\s*["']?([a-z0-9-]+)["']?\s*(?:#.*)?$`)
	ruleStartRE    = regexp.MustCompile(`^\s*-\s`)
)

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

// syntaxHints explains a YAML syntax error caused by unquoted templates
// (yamlpos.FindUnquotedTemplates): when quoting every unquoted {{ ... }}
// value makes the file parse, it reports each one, in the rule it seems
// to be in, and returns true.
func (l *loader) syntaxHints() bool {
	lines := l.src.Lines()
	found := yamlpos.FindUnquotedTemplates(lines)
	if len(found) == 0 {
		return false
	}
	fixed := append([]string(nil), lines...)
	for _, f := range found {
		fixed[f.Line-1] = f.Fix(fixed[f.Line-1])
	}
	var doc yaml.Node
	if yamlpos.Unmarshal([]byte(strings.Join(fixed, "\n")), &doc) != nil {
		return false
	}
	defer l.setRule("")
	for _, f := range found {
		l.setRule(ruleAt(lines, f.Line))
		l.rep.Add(Error{File: l.rep.File, Line: f.Line, Col: f.Col, Scope: l.rep.Scope,
			Msg: keyPrefix(f.Key) + yamlpos.QuoteHint(f.Key, f.Text)})
	}
	return true
}

func keyPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + ": "
}

package rules

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var positioned = regexp.MustCompile(`^f\.yaml:[1-9][0-9]*:[1-9][0-9]*: (rule "[a-z0-9-]+": )?\S`)

func FuzzLoad(f *testing.F) {
	if ex, err := os.ReadFile(filepath.Join("..", "rules.example.yaml")); err == nil {
		f.Add(string(ex))
	}
	f.Add(benchRules(3))
	f.Add(ruleFile("  - name: a", "    query: \"status:open AND (priority:3 OR priority:4)\"", "    if: |", "      ticket.priority >= High", "    actions:", "      - note: \"x {{ ticket.id }} {{\"", "      - set: {priority: 3}", "      - set: {priority: 4}"))
	f.Add("version: 1\nrules:\n  - &r {name: a, query: 'status:open', actions: [{note: hi}]}\n  - *r\n")
	f.Add("version: 1\nrules:\n  - name: a\n    query: >\n      status:open AND\n      agnet_id:0\n    actions: [{alert: {channel: '#x', text: \"\\u00e9{{ ticket.nope }}\"}}]\n")
	f.Add("version: 1\nx-d: &d {every: 5m, once: ticket}\nx-a: &a {channel: '#x', text: \"{{ ticket.nope }}\"}\nrules:\n  - <<: [*d, {if: 'true'}]\n    name: a\n    query: status:open\n    actions: [{alert: {<<: *a, mention: x}}, {set: {<<: *d}}]\n  - &r {name: b, <<: *r, query: *d}\n")
	f.Add("version: 1\nrules:\n  - name: a\n    query: status:open\n    if: &c\n      |2\n          ticket.nope &&\n        true\n    actions:\n      - note: >-1\n           x {{ ticket.nope }}\n")
	f.Add("")
	f.Add("version: [")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Load("f.yaml", []byte(src))
		if err == nil {
			if s == nil {
				t.Fatal("nil set without error")
			}
			return
		}
		var le *LoadError
		if !errors.As(err, &le) || len(le.Errors) == 0 {
			t.Fatalf("error %T %v is not a *LoadError with errors", err, err)
		}
		lines := len(splitLines(src))
		for _, e := range le.Errors {
			if e.Line < 1 || e.Col < 1 || e.Line > lines+1 {
				t.Errorf("error out of the file (%d lines): %+v", lines, e)
			}
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !positioned.MatchString(line) {
				t.Errorf("unpositioned error line %q", line)
			}
		}
	})
}

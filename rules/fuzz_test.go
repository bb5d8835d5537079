package rules

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/yamlpos"
	"github.com/deskbot/deskbot/sdclient"
)

var positioned = regexp.MustCompile(`^f\.yaml:[1-9][0-9]*:[1-9][0-9]*: (rule "[a-z0-9-]+": )?\S`)

func FuzzLoad(f *testing.F) {
	if ex, err := os.ReadFile(filepath.Join("..", "rules.example.yaml")); err == nil {
		f.Add(string(ex))
	}
	f.Add(benchRules(3))
	f.Add(ruleFile("  - name: slow", "    query: status:open", "    if: 'let xs = 1..30000; all(xs, {all(xs, {# > 0})})'", "    actions: [{note: \"{{ any(ticket.tags, {# in 1..ticket.id}) }}\"}, {alert: {channel: oncall, text: x, mention: '@{{ ticket.subject }}'}}]"))
	f.Add(ruleFile("  - name: a", "    query: \"status:open AND (priority:3 OR priority:4)\"", "    if: |", "      ticket.priority >= High", "    actions:", "      - note: \"x {{ ticket.id }} {{\"", "      - set: {priority: 3}", "      - set: {priority: 4}"))
	f.Add("version: 1\nrules:\n  - &r {name: a, query: 'status:open', actions: [{note: hi}]}\n  - *r\n")
	f.Add("version: 1\nrules:\n  - name: a\n    query: >\n      status:open AND\n      agnet_id:0\n    actions: [{alert: {channel: '#x', text: \"\\u00e9{{ ticket.nope }}\"}}]\n")
	f.Add("version: 1\nx-d: &d {every: 5m, once: ticket}\nx-a: &a {channel: '#x', text: \"{{ ticket.nope }}\"}\nrules:\n  - <<: [*d, {if: 'true'}]\n    name: a\n    query: status:open\n    actions: [{alert: {<<: *a, mention: x}}, {set: {<<: *d}}]\n  - &r {name: b, <<: *r, query: *d}\n")
	f.Add("version: 1\nrules:\n  - name: a\n    query: status:open\n    if: &c\n      |2\n          ticket.nope &&\n        true\n    actions:\n      - note: >-1\n           x {{ ticket.nope }}\n")
	f.Add(ruleFile("  - name: a", "    query: status:open", "    actions:", "      - note: {{ ticket.id }} late # c", "      - set: {tags: [{{ ticket.type }}], category: {{ ticket.subject }}}", `      - alert: {channel: oncall, text: {{ ticket.id }} x, mention: "{{ ticket.subject }}"}`))
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
		lines := len(yamlpos.SplitLines(src))
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

// FuzzTemplate compiles arbitrary text as a template: it compiles or fails
// with errors inside the text, never panics; rendered with a ticket full of
// markup, its values never add markup to a note or reply, nor <, > or ! to
// a mention.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"plain", "", "{{", "}}", "{{}}", "{{ }}", "a {{ ticket.id }} b", "{{ ticket.subject }}{{ ticket.tags }}",
		`<b>Urgent</b> {{ ticket.subject }}`, `{{ ticket.priority == Urgent ? "<i>x</i>" : "" }}`,
		"@{{ ticket.custom_fields.who }}", "<!{{ ticket.custom_fields.who }}>", "{{ ticket.custom_fields.who }}",
		"{{ 1..ticket.id }}", "{{ let xs = 1..30000; all(xs, {all(xs, {# > 0})}) }}", "{{ map(ticket.tags, {# + \"!\"}) }}",
		"{{ any(ticket.tags, {any(ticket.tags, {# == \"x\"})}) }}", "{{ duration(\"x\") }}", "é{{ ticket.nope }}",
		"{{ now() - ticket.created_at }} {{ ticket.due_by }}", "{{ reduce(1..5, #acc + #, 0) }}", "{{ {'a': 1}.a }} {{ [1,2][5] }}",
	} {
		f.Add(s)
	}
	tk := ticket(7, func(t *sdclient.Ticket) {
		t.Subject = `<img src=x onerror=alert(1)> & "q" !`
		t.Tags = []string{"<b>", "!here", "x"}
		t.CustomFields = map[string]any{"who": "<!channel>", "n": 3, "list": []any{"<a>", 1}}
	})
	env := Env{Ticket: NewTicketEnv(tk), Now: func() time.Time { return fixtureNow }}
	m := newVM()
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, errs := parseTemplate(src)
		if tmpl == nil {
			if len(errs) == 0 {
				t.Fatal("no template and no error")
			}
			for _, e := range errs {
				if e.Off < 0 || e.Off > runeLen(src) || e.Msg == "" {
					t.Errorf("error outside the text (%d runes): %+v", runeLen(src), e)
				}
			}
			return
		}
		lit := tmpl.literal()
		for _, kind := range []textKind{textChat, textHTML, textMention} {
			tmpl.kind = kind
			out, err := tmpl.render(m, env)
			if err != nil || out == "" {
				continue
			}
			var special string
			switch kind {
			case textHTML:
				special = `<>"'`
			case textMention:
				special = "<>!"
			}
			for _, c := range special {
				if got, want := strings.Count(out, string(c)), strings.Count(lit, string(c)); got != want {
					t.Errorf("%v: %q rendered %q: %d %q, the author wrote %d", kind, src, out, got, c, want)
				}
			}
		}
	})
}

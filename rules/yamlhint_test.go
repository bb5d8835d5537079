package rules

import (
	"strings"
	"testing"
)

// An unquoted {{ }} is a YAML flow mapping, or no YAML at all: either way
// the message says to quote it and shows what to write, at the {{.
func TestUnquotedTemplateHint(t *testing.T) {
	tests := []loadCase{
		{"whole value: a mapping", ruleFile(
			"  - name: x",
			"    query: priority:4",
			"    actions:",
			"      - note: {{ ticket.id }}"), []string{
			`f.yaml:7:15: rule "x": note: {{ }} must be quoted in YAML: write note: "{{ ticket.id }}"`}},
		{"followed by text: a syntax error", ruleFile(
			"  - name: x",
			"    query: priority:4",
			"    actions:",
			"      - note: {{ ticket.id }} is late  # a comment"), []string{
			`f.yaml:7:15: rule "x": note: {{ }} must be quoted in YAML: write note: "{{ ticket.id }} is late"`}},
		{"in a flow mapping", ruleFile(
			"  - name: x",
			"    query: priority:4",
			"    actions:",
			`      - alert: {channel: oncall, text: {{ ticket.subject }}}`), []string{
			`f.yaml:7:40: rule "x": alert text: {{ }} must be quoted in YAML: write text: "{{ ticket.subject }}"`}},
		{"followed by text in a flow mapping", ruleFile(
			"  - name: x",
			"    query: priority:4",
			`    actions: [{alert: {channel: oncall, text: {{ ticket.subject }} is late, mention: "@it"}}]`), []string{
			`f.yaml:6:47: rule "x": text: {{ }} must be quoted in YAML: write text: "{{ ticket.subject }} is late"`}},
		{"several, second rule, name after actions", ruleFile(
			"  - name: a",
			"    query: priority:4",
			`    actions: [{note: "fine {{ ticket.id }}"}]`,
			"  - query: priority:3",
			"    actions:",
			`      - reply: {{ ticket.subject }} "quoted" here`,
			"    name: b",
			"  - name: c",
			"    query: priority:2",
			"    actions:",
			"      - note: Late {{ ticket.id }}", // a plain scalar: fine
			"      - note: {{ ticket.id }} late"), []string{
			`f.yaml:9:16: reply: {{ }} must be quoted in YAML: write reply: "{{ ticket.subject }} \"quoted\" here"`,
			`f.yaml:15:15: rule "c": note: {{ }} must be quoted in YAML: write note: "{{ ticket.id }} late"`}},
		{"another syntax error stays as it was", ruleFile(
			"  - name: x",
			"    query: [priority:4",
			"    actions:",
			"      - note: {{ ticket.id }} is late"), []string{
			`f.yaml:5:1: invalid YAML: `}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load("f.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", err, strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("got  %s\nwant %s", got[i], tt.want[i])
				}
			}
		})
	}
}

// The quoted text the hint offers loads.
func TestUnquotedTemplateHintLoads(t *testing.T) {
	src := ruleFile(
		"  - name: x",
		"    query: priority:4",
		"    actions:",
		`      - note: "{{ ticket.id }} is late"`)
	if _, err := Load("f.yaml", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

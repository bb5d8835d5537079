package rules

import (
	"errors"
	"strings"
	"testing"
)

// ruleHead is the first two lines of a rule: its name, and query:
// status:open.
func ruleHead(name string) string { return "  - name: " + name + "\n    query: status:open" }

// ruleFile wraps rule lines (indented by 4) in a valid file header; the
// first rule line is line 4 of the file.
func ruleFile(lines ...string) string {
	return "version: 1\nchannels: {oncall: \"#it-oncall\"}\nrules:\n" + strings.Join(lines, "\n") + "\n"
}

// loadCase is a rules file and the problems Load reports for it.
type loadCase struct {
	name string
	src  string
	want []string
}

// runLoadCases checks each case with wantLoadErrors, as a subtest.
func runLoadCases(t *testing.T, tests []loadCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantLoadErrors(t, tt.src, tt.want) })
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []loadCase{
		{"yaml syntax", "version: 1\nrules:\n  - name: [x\n", []string{
			`f.yaml:3:1: invalid YAML: did not find expected ',' or ']'`}},
		{"yaml scanner error", "version: 1\nrules: a: b\n", []string{
			`f.yaml:2:1: invalid YAML: mapping values are not allowed in this context`}},
		{"yaml tab indentation", "version: 1\nrules:\n\t- x\n", []string{
			`f.yaml:3:1: invalid YAML: found character that cannot start any token`}},
		{"empty file", "", []string{
			`f.yaml:1:1: empty rules file: want a mapping starting with version: 1`}},
		{"not a mapping", "- a\n- b\n", []string{
			`f.yaml:1:1: the rules file: want a mapping, got a list`}},
		{"missing version", "rules: []\n", []string{
			`f.yaml:1:1: missing version: 1`}},
		{"wrong version", "version: 2\nrules: []\n", []string{
			`f.yaml:1:10: unsupported version 2: this deskbot reads version 1`}},
		{"version wrong type", "version: \"1\"\nrules: []\n", []string{
			`f.yaml:1:10: version: want an integer, got the string "1"`}},
		{"missing rules", "version: 1\n", []string{
			`f.yaml:1:1: missing rules: (a list of rules)`}},
		{"rules not a list", "version: 1\nrules: {a: 1}\n", []string{
			`f.yaml:2:8: rules: want a list of rules, got a mapping`}},
		{"unknown top-level key", "version: 1\nrule: []\nrules: []\n", []string{
			`f.yaml:2:1: unknown key "rule" in the rules file (want one of version, channels, oncall, rules, or x-NAME to hold anchors)`}},
		{"duplicate key", "version: 1\nversion: 1\nrules: []\n", []string{
			`f.yaml:2:1: duplicate key "version" (first at line 1)`}},
		{"bad channel literal", "version: 1\nchannels: {desk: it-desk}\nrules: []\n", []string{
			`f.yaml:2:18: channel "desk": want "#name" or a channel id such as C0123ABCD, got "it-desk"`}},
		{"unknown rule key", ruleFile(
			ruleHead("a"),
			"    whne: ticket.priority > 2",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:5: rule "a": unknown key "whne" in rule (want one of name, query, if, every, cron, catch_up, once, group_over, max_firings_per_cycle, priority, actions, digest)`}},
		{"name wrong type", ruleFile(
			"  - name: [a]",
			"    query: status:open",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:4:11: name: want a string, got a list`}},
		{"bad name", ruleFile(
			"  - name: Page_Urgent",
			"    query: status:open",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:4:11: name "Page_Urgent": want lower-case letters, digits and '-' only`}},
		{"duplicate rule name", ruleFile(
			ruleHead("a"),
			"    actions: [{note: hi}]",
			ruleHead("a"),
			"    actions: [{note: hi}]"), []string{
			`f.yaml:7:11: rule "a": duplicate rule name "a" (first defined at line 4)`}},
		{"rule repeated by an alias", ruleFile(
			"  - &r {name: a, query: 'status:open', actions: [{note: hi}]}",
			"  - *r"), []string{
			`f.yaml:5:5: rule: *r repeats the rule of line 4, and rule names must be unique: copy the rule and rename it`}},
		{"missing name query actions", ruleFile(
			"  - every: 1m"), []string{
			`f.yaml:4:5: rule without a name`,
			`f.yaml:4:5: missing query: (a filter expression such as status:open AND priority:4)`,
			`f.yaml:4:5: missing actions: (a list of note, reply, set, assign, alert, page or dm)`}},
		{"query syntax", ruleFile(
			"  - name: a",
			"    query: \"status:open AND AND priority:4\"",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:29: rule "a": query: expected a term, found AND`}},
		{"query unknown field", ruleFile(
			"  - name: a",
			"    query: status:open AND agnet_id:0",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:28: rule "a": query: unknown field "agnet_id" (did you mean "agent_id"?)`}},
		{"query status:>open", ruleFile(
			"  - name: a",
			"    query: status:>open",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:12: rule "a": query: status:>open: the status:open macro takes no comparison`}},
		{"query wrong value kind", ruleFile(
			"  - name: a",
			"    query: 'priority:high'",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:13: rule "a": query: priority:high: write priority:3 (High); of the names only status:open is understood, as every open status`}},
		{"if does not compile", ruleFile(
			ruleHead("a"),
			"    if: ticket.agnet_id == 0",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:16: rule "a": if: type ticket has no field agnet_id`}},
		{"if not bool", ruleFile(
			ruleHead("a"),
			"    if: ticket.priority + 1",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:9: rule "a": if: expected bool, but got int`}},
		{"if bad duration literal", ruleFile(
			ruleHead("a"),
			"    if: 'now() - ticket.created_at > duration(\"15x\")'",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:47: rule "a": if: invalid duration "15x" (want e.g. 90s, 15m, 2h30m)`}},
		{"if in block scalar", ruleFile(
			ruleHead("a"),
			"    if: |",
			"      ticket.priority >= High &&",
			"        ticket.responder_idd == 0",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:8:16: rule "a": if: type ticket has no field responder_idd`}},
		{"every bad duration", ruleFile(
			ruleHead("a"),
			"    every: 5x",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:12: rule "a": every: invalid duration "5x": want e.g. 30s, 5m or 1h`}},
		{"every too short", ruleFile(
			ruleHead("a"),
			"    every: 500ms",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:12: rule "a": every: 500ms is too short: want at least 1s`}},
		{"every and cron", ruleFile(
			ruleHead("a"),
			"    every: 5m",
			"    cron: '*/5 * * * *'",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:7:5: rule "a": every and cron are mutually exclusive: use one`}},
		{"bad cron", ruleFile(
			ruleHead("a"),
			"    cron: '*/5 * *'",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": cron: invalid spec "*/5 * *": expected exactly 5 fields, found 3: [*/5 * *] (want 5 fields: minute hour day-of-month month day-of-week)`}},
		{"catch_up without cron", ruleFile(
			ruleHead("a"),
			"    every: 5m",
			"    catch_up: 1h",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:7:5: rule "a": catch_up is for cron rules (an every rule that missed its time runs at once): remove it or use cron`}},
		{"catch_up bad duration", ruleFile(
			ruleHead("a"),
			"    cron: '0 9 * * 1-5'",
			"    catch_up: 1 hour",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:7:15: rule "a": catch_up: invalid duration "1 hour": want e.g. 30s, 5m or 1h`}},
		{"catch_up negative", ruleFile(
			ruleHead("a"),
			"    cron: '0 9 * * 1-5'",
			"    catch_up: -5m",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:7:15: rule "a": catch_up: -5m is negative: want a duration such as 1h (0: a missed run never runs late)`}},
		{"bad once", ruleFile(
			ruleHead("a"),
			"    once: sometimes",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: "sometimes": want episode, ticket or every <duration> (e.g. every 4h)`}},
		{"bad once every", ruleFile(
			ruleHead("a"),
			"    once: every 4 hours",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: "every 4 hours": want episode, ticket or every <duration> (e.g. every 4h)`}},
		{"once every bad duration", ruleFile(
			ruleHead("a"),
			"    once: every 4x",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: invalid duration "4x": want episode, ticket or every <duration> (e.g. every 4h)`}},
		{"once every zero", ruleFile(
			ruleHead("a"),
			"    once: every 0s",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: every 0s is too short: want at least 1s`}},
		{"once every below a second", ruleFile(
			ruleHead("a"),
			"    once: every 500ms",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: every 500ms is too short: want at least 1s`}},
		{"once wrong type", ruleFile(
			ruleHead("a"),
			"    once: 4h",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:11: rule "a": once: "4h": want episode, ticket or every <duration> (e.g. every 4h)`}},
		{"rule as a flow mapping", ruleFile(
			"  - {name: a, query: 'status:open', if: 'ticket.nope > 1', actions: [{note: hi}]}"), []string{
			`f.yaml:4:49: rule "a": if: type ticket has no field nope`}},
		{"template after escapes in double quotes", ruleFile(
			ruleHead("a"),
			"    actions:",
			`      - note: "say \"hi\"\t{{ ticket.nope }}"`,
			`      - alert: {channel: oncall, text: "caf\u00e9 {{ ticket.nope2 }}"}`), []string{
			`f.yaml:7:38: rule "a": note: template: type ticket has no field nope`,
			`f.yaml:8:61: rule "a": alert text: template: type ticket has no field nope2`}},
		{"template after a doubled single quote", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - reply: 'it''s {{ ticket.nope }}'"), []string{
			`f.yaml:7:33: rule "a": reply: template: type ticket has no field nope`}},
		{"template in a folded block after a blank line", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - note: >",
			"          line one",
			"",
			"          and {{ ticket.nope }}"), []string{
			`f.yaml:10:25: rule "a": note: template: type ticket has no field nope`}},
		{"template in a multi-line double-quoted scalar", ruleFile(
			ruleHead("a"),
			"    actions:",
			`      - note: "one \`,
			`          two`,
			"",
			`          three {{ ticket.nope }}"`), []string{
			`f.yaml:10:27: rule "a": note: template: type ticket has no field nope`}},
		{"template in a multi-line flow mapping", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - alert: {channel: oncall,",
			"          text: \"x",
			"            y {{ ticket.nope }}\"}"), []string{
			`f.yaml:9:25: rule "a": alert text: template: type ticket has no field nope`}},
		{"actions not a list", ruleFile(
			ruleHead("a"),
			"    actions: {note: hi}"), []string{
			`f.yaml:6:14: rule "a": actions: want a list of note, reply, set, assign, alert, page or dm, got a mapping`}},
		{"empty actions", ruleFile(
			ruleHead("a"),
			"    actions: []"), []string{
			`f.yaml:6:14: rule "a": actions: empty: a rule needs at least one note, reply, set, assign, alert, page or dm`}},
		{"empty if", ruleFile(
			ruleHead("a"),
			"    if: ''",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:9: rule "a": if: empty expression`}},
		{"if wrong type", ruleFile(
			ruleHead("a"),
			"    if: true",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:9: rule "a": if: want a string, got the boolean true`}},
		{"every wrong type", ruleFile(
			ruleHead("a"),
			"    every: [1m]",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:12: rule "a": every: want a duration such as 30s, 5m or 1h, got a list`}},
		{"set tags wrong type", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {tags: urgent}"), []string{
			`f.yaml:7:21: rule "a": set tags: want a list of strings, got the string "urgent"`}},
		{"two assignees", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - assign: 12",
			"      - assign: 13"), []string{
			`f.yaml:8:17: rule "a": assign: conflicting values for responder_id: 13 here, 12 at line 7`}},
		{"empty query", ruleFile(
			"  - name: a",
			"    query: ''",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:12: rule "a": query: empty filter expression`}},
		{"unknown action", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - call: oncall"), []string{
			`f.yaml:7:9: rule "a": unknown action "call" (want one of note, reply, set, assign, alert, page, dm)`}},
		{"two kinds in one action", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - note: hi",
			"        reply: hello"), []string{
			`f.yaml:8:9: rule "a": action: one kind per list item, found note and reply (start a new item with -)`}},
		{"note wrong type", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - note: {text: hi}"), []string{
			`f.yaml:7:15: rule "a": note: want a string, got a mapping`}},
		{"unknown set field", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {priority: 4, subject: x}"), []string{
			`f.yaml:7:28: rule "a": unknown key "subject" in set (want one of status, priority, group_id, responder_id, tags, type, category, sub_category, custom_fields)`}},
		{"set wrong type", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {priority: urgent}"), []string{
			`f.yaml:7:25: rule "a": set priority: want an integer, got the string "urgent"`}},
		{"set priority out of range", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {priority: 7}"), []string{
			`f.yaml:7:25: rule "a": set priority: 7 is not a priority: want 1 (low) to 4 (urgent)`}},
		{"conflicting sets", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {priority: 4}",
			"      - note: hi",
			"      - set: {priority: 3}"), []string{
			`f.yaml:9:25: rule "a": set: conflicting values for priority: 3 here, 4 at line 7`}},
		{"assign conflicts with set", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - set: {responder_id: 12}",
			"      - assign: ana@example.com"), []string{
			`f.yaml:8:17: rule "a": assign: conflicting assignees: ana@example.com here, responder_id 12 at line 7`}},
		{"assign bad", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - assign: ana"), []string{
			`f.yaml:7:17: rule "a": assign: want an agent's e-mail or numeric id, got "ana"`}},
		{"alert unknown channel", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - alert: {channel: oncal, text: hi}"), []string{
			`f.yaml:7:26: rule "a": alert: unknown channel "oncal": not an alias under channels: and not #name or a channel id`}},
		{"alert unknown key and missing text", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - alert: {channel: oncall, txt: hi}"), []string{
			`f.yaml:7:16: rule "a": alert: missing text`,
			`f.yaml:7:34: rule "a": unknown key "txt" in alert (want one of channel, text, mention)`}},
		{"template does not compile", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - note: \"Ticket {{ ticket.subjct }} is late\""), []string{
			`f.yaml:7:33: rule "a": note: template: type ticket has no field subjct`}},
		{"unclosed template", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - reply: 'Hi {{ ticket.id'"), []string{
			`f.yaml:7:20: rule "a": reply: unclosed {{ in template (want {{ expression }})`}},
		{"template in mention", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - alert: {channel: '#x', text: hi, mention: '{{ oncall() }}'}"), []string{
			`f.yaml:7:55: rule "a": alert mention: template: unknown name oncall`}},
		{"errors of several rules together", ruleFile(
			"  - name: a",
			"    query: status:open AND prio:4",
			"    actions: [{note: hi}]",
			ruleHead("b"),
			"    if: ticket.nope",
			"    every: 0s",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:28: rule "a": query: unknown field "prio" (a custom field? deskbot reads them from the desk; rules check and test need --custom-field prio:KIND; or test it in if: with ticket.custom_fields.prio)`,
			`f.yaml:9:16: rule "b": if: type ticket has no field nope`,
			`f.yaml:10:12: rule "b": every: 0s is too short: want at least 1s`}},
		{"if in a block scalar with an indentation indicator", ruleFile(
			ruleHead("a"),
			"    if: |2",
			"          ticket.priority >= High &&",
			"        ticket.responder_idd == 0",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:8:16: rule "a": if: type ticket has no field responder_idd`}},
		{"template in a folded block with indicator and chomping", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - note: >-2",
			"            indented first",
			"          then {{ ticket.nope }}"), []string{
			`f.yaml:9:26: rule "a": note: template: type ticket has no field nope`}},
		{"block scalar with an indicator in an anchored list item", ruleFile(
			ruleHead("a"),
			"    actions:",
			"      - &n",
			"        note: |1",
			"            x {{ ticket.nope }}"), []string{
			`f.yaml:9:25: rule "a": note: template: type ticket has no field nope`}},
		{"block scalar header after an anchor on its own line", ruleFile(
			ruleHead("a"),
			"    if: &cond",
			"      |",
			"      ticket.nope",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:8:14: rule "a": if: type ticket has no field nope`}},
		{"unknown x key", "version: 1\nx-: 1\nx-ok: {anything: [goes]}\nrules: []\n", []string{
			`f.yaml:2:1: unknown key "x-" in the rules file (want one of version, channels, oncall, rules, or x-NAME to hold anchors)`}},
		{"merge of a scalar", "version: 1\nx-q: &q status:open\nrules:\n" +
			"  - <<: *q\n    name: a\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:4:9: rule "a": merge key <<: wants a mapping or a list of mappings, got *q (the string "status:open")`}},
		{"merge of a list holding a non-mapping", "version: 1\nx-d: &d {every: 5m}\nrules:\n" +
			"  - name: a\n    <<: [*d, 5, [x]]\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:5:14: rule "a": merge key <<: wants a mapping or a list of mappings, got a list holding the number 5`,
			`f.yaml:5:17: rule "a": merge key <<: wants a mapping or a list of mappings, got a list holding a list`}},
		{"merge key twice", "version: 1\nx-d: &d {every: 5m}\nx-e: &e {once: ticket}\nrules:\n" +
			"  - name: a\n    <<: *d\n    <<: *e\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:7:5: rule "a": duplicate merge key <<: (first at line 6): merge several mappings with one <<: [*a, *b]`}},
		{"merge cycle", "version: 1\nrules:\n" +
			"  - &r\n    name: a\n    <<: *r\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:5:9: rule "a": merge key <<: *r (a mapping) merges a mapping into itself (an alias cycle)`}},
		{"merge cycle outside the rules", "version: 1\nx-a: &a {b: 1, <<: *a}\nrules: []\n", []string{
			`f.yaml:2:20: merge key <<: *a (a mapping) merges a mapping into itself (an alias cycle)`}},
		{"unknown key in a merged mapping names the merging rule", "version: 1\nx-defaults: &defaults\n  evry: 5m\n  once: ticket\nrules:\n" +
			"  - <<: *defaults\n    name: a\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:3:3: rule "a": unknown key "evry" in rule (want one of name, query, if, every, cron, catch_up, once, group_over, max_firings_per_cycle, priority, actions, digest)`}},
		{"bad merged value is reported for each rule merging it", "version: 1\nx-defaults: &defaults {every: 5x}\nrules:\n" +
			"  - <<: *defaults\n    name: a\n    query: status:open\n    actions: [{note: hi}]\n" +
			"  - <<: *defaults\n    name: b\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:2:31: rule "a": every: invalid duration "5x": want e.g. 30s, 5m or 1h`,
			`f.yaml:2:31: rule "b": every: invalid duration "5x": want e.g. 30s, 5m or 1h`}},
		{"merged template error points into the anchored text", "version: 1\nchannels: {oncall: '#oc'}\nx-alert: &alert\n  channel: oncall\n  text: \"Ticket {{ ticket.nope }}\"\nrules:\n" +
			"  - name: a\n    query: status:open\n    actions:\n      - alert: {<<: *alert, mention: '@it'}\n", []string{
			`f.yaml:5:27: rule "a": alert text: template: type ticket has no field nope`}},
		{"unknown field in a merged set", "version: 1\nx-set: &set {priority: 4, subject: x}\nrules:\n" +
			"  - name: a\n    query: status:open\n    actions:\n      - set: {<<: *set, status: 2}\n", []string{
			`f.yaml:2:27: rule "a": unknown key "subject" in set (want one of status, priority, group_id, responder_id, tags, type, category, sub_category, custom_fields)`}},
		{"explicit duplicate key beside a merge", "version: 1\nx-d: &d {every: 5m}\nrules:\n" +
			"  - <<: *d\n    name: a\n    every: 1m\n    every: 2m\n    query: status:open\n    actions: [{note: hi}]\n", []string{
			`f.yaml:7:5: rule "a": duplicate key "every" (first at line 6)`}},
		{"rule merging the name of another", ruleFile(
			"  - &base",
			"    name: a",
			"    query: status:open",
			"    actions: [{note: hi}]",
			"  - <<: *base",
			"    every: 5m"), []string{
			`f.yaml:8:5: rule "a": duplicate rule name "a": the rule merges the name: of line 5; give it a name of its own`}},
		{"ticket field compared with nil", ruleFile(
			ruleHead("a"),
			"    if: ticket.responder_id == nil && nil != ticket.due_by",
			"    actions: [{note: hi}]",
			ruleHead("b"),
			"    if: ticket.custom_fields.site == nil",
			"    actions:",
			`      - note: "{{ ticket.category == nil ? 'none' : ticket.category }}"`), []string{
			`f.yaml:6:9: rule "a": if: ticket.responder_id is never nil: a null from the desk becomes a zero value; write ticket.responder_id == 0 (0 when unassigned)`,
			`f.yaml:6:46: rule "a": if: ticket.due_by is never nil: a null from the desk becomes a zero value; write !has_due(ticket)`,
			`f.yaml:12:19: rule "b": note: template: ticket.category is never nil: a null from the desk becomes a zero value; write ticket.category == "" ("" when unset)`}},
		{"storm control settings of the wrong type or range", ruleFile(
			ruleHead("a"),
			"    group_over: 0",
			"    max_firings_per_cycle: many",
			"    actions: [{note: hi}]",
			ruleHead("b"),
			"    group_over: 2.5",
			"    max_firings_per_cycle: -3",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:17: rule "a": group_over: 0: want a whole number from 1 to 100000 (alerts of more tickets than this in one poll are posted as one message)`,
			`f.yaml:7:28: rule "a": max_firings_per_cycle: want an integer, got the string "many"`,
			`f.yaml:11:17: rule "b": group_over: want an integer, got the number 2.5`,
			`f.yaml:12:28: rule "b": max_firings_per_cycle: -3: want a whole number from 1 to 100000 (the rule fires on at most this many tickets a poll; the rest wait for later polls)`}},
		{"priority other than high, normal or low", ruleFile(
			ruleHead("a"),
			"    priority: urgent",
			"    actions: [{note: hi}]",
			ruleHead("b"),
			"    priority: [high]",
			"    actions: [{note: hi}]"), []string{
			`f.yaml:6:15: rule "a": priority "urgent": want high, normal or low (unset: from the actions, pages first and e-mails last)`,
			`f.yaml:10:15: rule "b": priority: want a string, got a list`}},
		{"query naming a status, a priority or a custom field", ruleFile(
			"  - name: a",
			`    query: "status:pending AND priority:Urgent AND location:'HQ' AND priorty:4"`,
			"    actions: [{note: hi}]"), []string{
			`f.yaml:5:13: rule "a": query: status:pending: write status:3 (Pending); of the names only status:open is understood, as every open status`,
			`f.yaml:5:32: rule "a": query: priority:Urgent: write priority:4 (Urgent); of the names only status:open is understood, as every open status`,
			`f.yaml:5:52: rule "a": query: unknown field "location" (a custom field? deskbot reads them from the desk; rules check and test need --custom-field location:KIND; or test it in if: with ticket.custom_fields.location)`,
			`f.yaml:5:70: rule "a": query: unknown field "priorty" (did you mean "priority"?)`}},
	}
	runLoadCases(t, tests)
}

// wantLoadErrors checks that loading src as f.yaml fails, with a
// *LoadError and no set, whose lines are exactly want.
func wantLoadErrors(t *testing.T, src string, want []string) {
	t.Helper()
	s, err := Load("f.yaml", []byte(src))
	if err == nil {
		t.Fatalf("loaded, want errors:\n%s", strings.Join(want, "\n"))
	}
	if s != nil {
		t.Errorf("got a set along with the error")
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error is %T, want *LoadError", err)
	}
	if got, want := err.Error(), strings.Join(want, "\n"); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

func TestLoadStormControl(t *testing.T) {
	s, err := Load("f.yaml", []byte(ruleFile(
		ruleHead("a"),
		"    actions: [{note: hi}]",
		ruleHead("b"),
		"    group_over: 3",
		"    max_firings_per_cycle: 7",
		"    actions: [{note: hi}]")))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Rule("a"); a.GroupOver != DefaultGroupOver || a.MaxFiringsPerCycle != DefaultMaxFiringsPerCycle {
		t.Errorf("rule a: group_over %d, max_firings_per_cycle %d; want the defaults %d and %d",
			a.GroupOver, a.MaxFiringsPerCycle, DefaultGroupOver, DefaultMaxFiringsPerCycle)
	}
	if b := s.Rule("b"); b.GroupOver != 3 || b.MaxFiringsPerCycle != 7 {
		t.Errorf("rule b: group_over %d, max_firings_per_cycle %d; want 3 and 7", b.GroupOver, b.MaxFiringsPerCycle)
	}
}

func TestLoadPriority(t *testing.T) {
	s, err := Load("f.yaml", []byte(ruleFile(
		ruleHead("a"),
		"    actions: [{note: hi}]",
		ruleHead("b"),
		"    priority: high",
		"    actions: [{note: hi}]",
		ruleHead("c"),
		"    priority: low",
		"    actions: [{note: hi}]")))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Priority{"a": PriorityDefault, "b": PriorityHigh, "c": PriorityLow} {
		if got := s.Rule(name).Priority; got != want {
			t.Errorf("rule %s: priority %q, want %q", name, got, want)
		}
	}
}

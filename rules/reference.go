package rules

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

// fieldDocs says what each field of `ticket` is, by its expression name
// (nested ones as requester.name). The reference (WriteReference) is made
// from TicketEnv and these; a test keeps both in step.
var fieldDocs = map[string]string{
	"id":               "the ticket's number",
	"subject":          "the subject",
	"status":           "the status code: 2 Open, 3 Pending, 4 Resolved, 5 Closed, or a custom status (`is_open(ticket.status)` says whether it counts as open)",
	"priority":         "the priority code: 1 Low, 2 Medium, 3 High, 4 Urgent",
	"source":           "how the ticket came in: 1 e-mail, 2 portal, 3 phone, ...",
	"requester_id":     "the requester's id",
	"responder_id":     "the assigned agent's id, 0 when unassigned (queries call it `agent_id`)",
	"group_id":         "the agent group's id, 0 when none",
	"department_id":    "the department's id, 0 when none",
	"type":             "the ticket type, e.g. `Incident`, `Service Request`",
	"tags":             "the tags, as written (`has_tag(ticket, \"vpn\")` ignores case)",
	"category":         "the category, \"\" when none",
	"sub_category":     "the sub-category, \"\" when none",
	"custom_fields":    "the desk's custom fields by name: `ticket.custom_fields.site`; one the ticket lacks is nil (`ticket.custom_fields.seats ?? 0`)",
	"due_by":           "when the resolution is due; the zero time when there is none (a comparison with it is false; `has_due(ticket)`)",
	"fr_due_by":        "when the first response is due; the zero time when there is none",
	"created_at":       "when the ticket was created",
	"updated_at":       "when the ticket last changed",
	"workspace_id":     "the workspace's id, 0 on a desk without workspaces",
	"description_text": fmt.Sprintf("the description as plain text, its first %s characters", thousands(float64(MaxDescriptionText))),
	"requester":        "the requester, looked up by `requester_id`",
	"requester.name":   "the requester's full name; \"\" until deskbot has looked it up (a few names a cycle, cached 10 minutes)",
	"requester.email":  "the requester's primary e-mail, \"\" until looked up",
	"agent":            "the assigned agent, looked up by `responder_id`",
	"agent.name":       "the agent's full name; \"\" when unassigned or not looked up yet",
	"agent.email":      "the agent's e-mail, \"\" when unassigned or not looked up yet",
	"group":            "the agent group, looked up by `group_id`",
	"group.name":       "the group's name; \"\" when none or not looked up yet",
}

// funcDoc is a function expressions may call, with an example that
// compiles (a test checks it).
type funcDoc struct {
	sig, doc, example string
}

var funcDocs = []funcDoc{
	{"now() time", "the cycle's clock (the `--now` of `rules test`), in UTC; in a text, the time its action is performed (a note after a page says when the page went out)", `now() - ticket.created_at > duration("15m")`},
	{"duration(s string) duration", "a duration such as `90s`, `15m`, `2h30m` (a constant is checked when the file loads)", `duration("2h30m")`},
	{"is_open(status int) bool", "whether a status counts as open (custom open statuses included)", `is_open(ticket.status)`},
	{"has_due(ticket) bool", "whether the ticket has a due date", `has_due(ticket) && ticket.due_by < now()`},
	{"has_tag(ticket, tag string) bool", "whether the ticket carries tag, in any case (as the query's `tag:`)", `has_tag(ticket, "vpn")`},
	{"until(t time) string", "how long until t from now(), in words rounded to the minute: `in 28 min`, `1 min ago`, `in 2 h 5 min`, `in 3 days 4 h`; `no date` when the ticket has none", `until(ticket.due_by)`},
	{"timezone(name string) location", "a time zone, to print a time in it: `ticket.due_by.In(timezone(\"Europe/Zurich\"))`", `ticket.due_by.In(timezone("Europe/Zurich")).Hour() > 17`},
}

// typeName names a Go type of the environment for people.
func typeName(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(time.Time{}):
		return "time"
	case reflect.TypeOf(Person{}), reflect.TypeOf(GroupInfo{}):
		return "object"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map"
	}
	return t.String()
}

// envFields lists the fields of struct type t as expressions name them,
// nested objects after their parent, prefix first.
func envFields(t reflect.Type, prefix string) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("expr")
		if name == "" || !f.IsExported() {
			continue
		}
		f.Name = prefix + name
		out = append(out, f)
		if f.Type.Kind() == reflect.Struct && typeName(f.Type) == "object" {
			out = append(out, envFields(f.Type, f.Name+".")...)
		}
	}
	return out
}

// WriteReference writes the rules file's reference of fields, functions,
// named codes, query fields and set: keys, in Markdown, from the code.
func WriteReference(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("# Rules reference\n\n")
	p("<!-- Generated from rules/env.go and rules/reference.go by `go test ./rules -run TestFieldReference -update`; do not edit. -->\n\n")
	p("What a rules file's expressions (`if:`) and templates (`{{ }}` in texts and `set:` values) can read, and what its queries and `set:` accept. See the README's [Rules](../README.md#rules) for how rules run.\n\n")
	p("## `ticket`\n\n")
	p("| field | type | meaning |\n|---|---|---|\n")
	for _, f := range envFields(reflect.TypeOf(TicketEnv{}), "") {
		p("| `ticket.%s` | %s | %s |\n", f.Name, typeName(f.Type), fieldDocs[f.Name])
	}
	p("\nTimes are in UTC; templates print them as RFC3339 and durations rounded to the minute.\n\n")
	p("## Functions\n\n| function | meaning | example |\n|---|---|---|\n")
	for _, f := range funcDocs {
		p("| `%s` | %s | `%s` |\n", f.sig, f.doc, f.example)
	}
	p("\nexpr's own operators and functions work too (`contains`, `matches`, `startsWith`, `lower`, `len`, `any`, `all`, `filter`, `??`, ...): see <https://expr-lang.org/docs/language-definition>. An expression may take at most %s loop steps per ticket.\n\n", thousands(MaxSteps))
	p("## Named codes\n\n| name | value |\n|---|---|\n")
	names := make([]string, 0, len(namedCodes))
	for n := range namedCodes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if isStatusName(a) != isStatusName(b) {
			return !isStatusName(a)
		}
		return namedCodes[a] < namedCodes[b]
	})
	for _, n := range names {
		what := "priority"
		if isStatusName(n) {
			what = "status"
		}
		p("| `%s` | %d (%s) |\n", n, namedCodes[n], what)
	}
	p("\n## Query fields\n\n")
	p("`query:` is the desk's filter language: `field:value`, `:>` and `:<` (inclusive), `AND`, `OR`, parentheses, `null`; `status:open` is deskbot's macro for every open status. Custom fields are queried by their name.\n\n")
	p("**`agent_id` in queries, `responder_id` in expressions and `set:`.** The desk names the assigned agent `agent_id` in its filter language and `responder_id` in tickets; deskbot keeps both names: `query: \"agent_id:0\"` (or `agent_id:null`) and `if: ticket.responder_id == 0` both mean unassigned, and `rules check` says which to write when one is used in the other's place.\n\n")
	p("| field | value |\n|---|---|\n")
	for _, f := range filter.TicketSchema(nil).Fields() {
		null := ""
		if f.Nullable {
			null = ", or null"
		}
		p("| `%s` | %s%s |\n", f.Name, f.Kind, null)
	}
	p("\n## `set:` keys\n\n")
	p("%s. String values (`type`, `category`, `sub_category`, each tag, a custom field's) may be templates, rendered per ticket: `set: {category: \"{{ ticket.custom_fields.site }}\"}`; a tag that renders empty is dropped.\n", "`"+strings.Join(setKeys, "`, `")+"`")
	writeDMDigestReference(p)
	return bw.Flush()
}

func isStatusName(n string) bool {
	return n == "Open" || n == "Pending" || n == "Resolved" || n == "Closed"
}

// exprHint adds to an expression's compile error what to write instead
// for the names people reach for: the query's agent_id, the
// description's HTML.
func exprHint(msg string) string {
	switch {
	case strings.HasSuffix(msg, "type ticket has no field agent_id"):
		return msg + ": in expressions the assigned agent is ticket.responder_id (0 when unassigned; ticket.agent.name is their name); agent_id is its name in queries"
	case strings.HasSuffix(msg, "type ticket has no field description"):
		return msg + " (write ticket.description_text: the description as plain text)"
	case strings.HasSuffix(msg, "type ticket has no field requester_name"),
		strings.HasSuffix(msg, "type ticket has no field agent_name"),
		strings.HasSuffix(msg, "type ticket has no field group_name"):
		f := strings.TrimSuffix(msg[strings.LastIndex(msg, " ")+1:], "_name")
		return msg + fmt.Sprintf(" (write ticket.%s.name)", f)
	}
	return msg
}

// keyHint adds to an unknown key's error what to write instead.
func keyHint(what, key string) string {
	if what == "set" && (key == "agent_id" || key == "agent") {
		return ": set the assigned agent with responder_id: ID or assign: E-MAIL; agent_id is its name in queries"
	}
	return ""
}

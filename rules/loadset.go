package rules

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
	"github.com/deskbot/deskbot/sdclient"
)

// updateMerger merges every set: and assign: of a rule into one update,
// rejecting two different values for one field.
type updateMerger struct {
	l     *loader
	upd   sdclient.TicketUpdate
	email string
	// at records where each field was first set, and its value for messages.
	at map[string]setAt
	// tmpls are the values that are templates.
	tmpls []setTemplate
}

// template compiles the value src of a set: field (key names a custom
// field, index >= 0 a tag) from node n when it has {{ }}, to be rendered
// per ticket; it reports false (with the errors) when it does not compile.
func (m *updateMerger) template(field, key string, index int, src string, n *yaml.Node, what string) bool {
	if !strings.Contains(src, "{{") {
		return true
	}
	t, ok := m.l.compileText(n, src, what, textPlain)
	if !ok {
		return false
	}
	m.tmpls = append(m.tmpls, setTemplate{field: field, key: key, index: index, tmpl: t})
	return true
}

// setAt is where a field was first set, and to what.
type setAt struct {
	line int
	val  any
}

// claim records field = val from node n; it reports false (with an error)
// when the field already holds a different value.
func (m *updateMerger) claim(field string, val any, n *yaml.Node, what string) bool {
	if prev, ok := m.at[field]; ok {
		if !reflect.DeepEqual(prev.val, val) {
			m.l.rep.Node(n, "%s: conflicting values for %s: %v here, %v at line %d", what, field, fmtAny(val), fmtAny(prev.val), prev.line)
			return false
		}
		return true
	}
	m.at[field] = setAt{line: n.Line, val: val}
	return true
}

// fmtAny formats a value of a set: field for messages.
func fmtAny(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// set merges set: n into the update.
func (m *updateMerger) set(n *yaml.Node) bool {
	l := m.l
	pairs, ok := l.mapping(n, "set", setKeys)
	if !ok {
		return false
	}
	if len(pairs) == 0 && len(n.Content) == 0 {
		l.rep.Node(n, "set: empty: want one or more of %s", strings.Join(setKeys, ", "))
		return false
	}
	good := yamlpos.Strict(n, pairs)
	for _, p := range pairs {
		if !m.setField(p.Key.Value, p.Val) {
			good = false
		}
	}
	return good
}

// setField merges field f of set:, with value v.
func (m *updateMerger) setField(f string, v *yaml.Node) bool {
	switch f {
	case "status", "priority", "group_id", "responder_id":
		return m.setNumber(f, v)
	case "type", "category", "sub_category":
		return m.setString(f, v)
	case "tags":
		return m.setTags(v)
	case "custom_fields":
		return m.setCustomFields(v)
	}
	return true
}

// setNumber merges a field whose value is a number: status, priority or
// an id.
func (m *updateMerger) setNumber(f string, v *yaml.Node) bool {
	what := "set " + f
	x, ok := m.l.rep.Int(v, what)
	if !ok || !m.l.checkNumber(f, x, v, what) || !m.claim(f, x, v, "set") {
		return false
	}
	switch f {
	case "status":
		m.upd.Status = sdclient.Ptr(int(x))
	case "priority":
		m.upd.Priority = sdclient.Ptr(int(x))
	case "group_id":
		m.upd.GroupID = sdclient.Ptr(x)
	case "responder_id":
		m.upd.ResponderID = sdclient.Ptr(x)
	}
	return true
}

// checkNumber checks value x of field f (node v): a priority from 1 to 4,
// a status of at least 2, an id of at least 0.
func (l *loader) checkNumber(f string, x int64, v *yaml.Node, what string) bool {
	switch {
	case f == "priority" && (x < 1 || x > 4):
		l.rep.Node(v, "set priority: %d is not a priority: want 1 (low) to 4 (urgent)", x)
	case f == "status" && x < 2:
		l.rep.Node(v, "set status: %d is not a status: want 2 (open), 3 (pending), 4 (resolved), 5 (closed) or a custom status id", x)
	case x < 0:
		l.rep.Node(v, "%s: want an id (0 to clear), got %d", what, x)
	case x > 1<<31 && (f == "status" || f == "priority"):
		l.rep.Node(v, "%s: %d is out of range", what, x)
	default:
		return true
	}
	return false
}

// setString merges type, category or sub_category: a string, maybe a
// template.
func (m *updateMerger) setString(f string, v *yaml.Node) bool {
	what := "set " + f
	s, ok := m.l.str(v, what)
	if !ok || !m.claim(f, s, v, "set") || !m.template(f, "", -1, s, v, what) {
		return false
	}
	switch f {
	case "type":
		m.upd.Type = sdclient.Ptr(s)
	case "category":
		m.upd.Category = sdclient.Ptr(s)
	default:
		m.upd.SubCategory = sdclient.Ptr(s)
	}
	return true
}

// setTags merges tags: a list of strings, each maybe a template.
func (m *updateMerger) setTags(v *yaml.Node) bool {
	l := m.l
	if v.Kind != yaml.SequenceNode {
		l.rep.Node(v, "set tags: want a list of strings, got %s", yamlpos.Describe(v))
		return false
	}
	good := true
	tags := []string{}
	for _, t := range v.Content {
		s, ok := l.str(yamlpos.Resolve(t), "set tags")
		if !ok || !m.template("tags", "", len(tags), s, yamlpos.Resolve(t), "set tags") {
			good = false
			continue
		}
		tags = append(tags, s)
	}
	if !m.claim("tags", tags, v, "set") {
		return false
	}
	m.upd.Tags = &tags
	return good
}

// setCustomFields merges custom_fields: a mapping of field names to
// scalars, strings maybe templates.
func (m *updateMerger) setCustomFields(v *yaml.Node) bool {
	cp, ok := m.l.mapping(v, "set custom_fields", nil)
	if !ok {
		return false
	}
	good := true
	for _, c := range cp {
		if !m.setCustomField(c.Key.Value, c.Val) {
			good = false
		}
	}
	return good
}

// setCustomField merges custom field name, with value v.
func (m *updateMerger) setCustomField(name string, v *yaml.Node) bool {
	l := m.l
	if v.Kind != yaml.ScalarNode {
		l.rep.Node(v, "set custom_fields %s: want a string, number, boolean or null, got %s", name, yamlpos.Describe(v))
		return false
	}
	var x any
	if err := v.Decode(&x); err != nil {
		l.rep.Node(v, "set custom_fields %s: %v", name, err)
		return false
	}
	if !m.claim("custom_fields."+name, x, v, "set") {
		return false
	}
	if str, isStr := x.(string); isStr && !m.template("custom_fields", name, -1, str, v, "set custom_fields "+name) {
		return false
	}
	if m.upd.CustomFields == nil {
		m.upd.CustomFields = map[string]any{}
	}
	m.upd.CustomFields[name] = x
	return true
}

// assign merges assign: n (an e-mail or an agent id) into the update.
func (m *updateMerger) assign(n *yaml.Node) bool {
	l := m.l
	const want = "want an agent's e-mail or numeric id"
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		l.rep.Node(n, "assign: %s, got %s", want, yamlpos.Describe(n))
		return false
	}
	if id, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		if id <= 0 {
			l.rep.Node(n, "assign: %s, got %d", want, id)
			return false
		}
		if m.email != "" {
			l.rep.Node(n, "assign: conflicting assignees: agent %d here, %s earlier", id, m.email)
			return false
		}
		if !m.claim("responder_id", id, n, "assign") {
			return false
		}
		m.upd.ResponderID = sdclient.Ptr(id)
		return true
	}
	email := strings.TrimSpace(n.Value)
	if i := strings.Index(email, "@"); i <= 0 || i == len(email)-1 || strings.ContainsAny(email, " \t,;<>") {
		l.rep.Node(n, "assign: %s, got %q", want, n.Value)
		return false
	}
	if prev, ok := m.at["responder_id"]; ok {
		l.rep.Node(n, "assign: conflicting assignees: %s here, responder_id %v at line %d", email, prev.val, prev.line)
		return false
	}
	if !m.claim("assign", email, n, "assign") {
		return false
	}
	m.email = email
	return true
}

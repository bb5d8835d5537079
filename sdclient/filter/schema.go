package filter

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// FieldSpec describes one field that may be filtered on.
type FieldSpec struct {
	// Name is the field's name in queries (agent_id, not responder_id).
	Name string
	// Kind is KindNumber, KindString, KindDate or KindBool. Any other kind
	// accepts values of every kind (a field whose type is unknown).
	Kind Kind
	// Nullable says whether field:null is allowed.
	Nullable bool
}

// Schema says which fields may be filtered on and what their values are,
// so that a query can be checked before it reaches the desk. The zero
// Schema knows no fields.
type Schema struct {
	fields map[string]FieldSpec
}

// NewSchema returns a schema of the given fields (a later spec of the same
// name replaces an earlier one).
func NewSchema(fields ...FieldSpec) Schema {
	s := Schema{fields: make(map[string]FieldSpec, len(fields))}
	for _, f := range fields {
		s.fields[f.Name] = f
	}
	return s
}

// ticketFields returns the standard ticket filter fields (freshservice-api.md
// §6 and the API description's list).
func ticketFields() []FieldSpec {
	return []FieldSpec{
		{"workspace_id", KindNumber, true},
		{"requester_id", KindNumber, false},
		{"email", KindString, false},
		{"agent_id", KindNumber, true},
		{"group_id", KindNumber, true},
		{"department_id", KindNumber, true},
		{"priority", KindNumber, false},
		{"status", KindNumber, false},
		{"impact", KindNumber, true},
		{"urgency", KindNumber, true},
		{"source", KindNumber, false},
		{"type", KindString, true},
		{"tag", KindString, true},
		{"due_by", KindDate, true},
		{"fr_due_by", KindDate, true},
		{"created_at", KindDate, false},
		{"updated_at", KindDate, false},
	}
}

// TicketSchema returns the schema of GET /tickets/filter: the standard
// ticket fields plus the account's custom fields, by name, with the given
// kinds (custom fields are nullable). A custom field cannot redefine a
// standard one.
func TicketSchema(custom map[string]Kind) Schema {
	std := ticketFields()
	s := Schema{fields: make(map[string]FieldSpec, len(std)+len(custom))}
	for name, k := range custom {
		s.fields[name] = FieldSpec{Name: name, Kind: k, Nullable: true}
	}
	for _, f := range std {
		s.fields[f.Name] = f
	}
	return s
}

// Field returns the spec of a field and whether the schema knows it.
func (s Schema) Field(name string) (FieldSpec, bool) {
	f, ok := s.fields[name]
	return f, ok
}

// Fields returns every field of the schema, sorted by name.
func (s Schema) Fields() []FieldSpec {
	out := make([]FieldSpec, 0, len(s.fields))
	for _, f := range s.fields {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FieldError is one problem Schema.Validate found in a term.
type FieldError struct {
	// Pos is the 0-based byte offset of the term's field in the source.
	Pos   int
	Field string
	Msg   string
}

// Error returns "filter: column N: MSG", N being Pos+1.
func (e *FieldError) Error() string { return fmt.Sprintf("filter: column %d: %s", e.Pos+1, e.Msg) }

// Validate checks every term of e against the schema and returns all the
// problems joined (each a *FieldError), or nil: unknown fields (with a "did
// you mean"), values of the wrong kind, :> and :< on fields that are not
// numbers or dates, null where a field is never empty, unquoted words (such
// as an unexpanded status:open), and text that could not be sent (a value
// with a double quote, a field name that is not an identifier).
func (s Schema) Validate(e Expr) error {
	if normalize(e) == nil {
		return &FieldError{Msg: "empty filter expression"}
	}
	var errs []error
	for _, t := range Terms(e) {
		if msg := s.checkTerm(t); msg != "" {
			errs = append(errs, &FieldError{Pos: t.Pos, Field: t.Field, Msg: msg})
		}
	}
	return errors.Join(errs...)
}

// checkTerm says what is wrong with a term under the schema ("" when
// nothing is): its field, then its value's form, its operator, and the
// value's kind against the field's.
func (s Schema) checkTerm(t *Term) string {
	if !isIdentifier(t.Field) {
		return fmt.Sprintf("invalid field name %q: want a letter or '_' followed by letters, digits or '_'", t.Field)
	}
	spec, ok := s.fields[t.Field]
	if !ok {
		msg := fmt.Sprintf("unknown field %q", t.Field)
		if m := s.suggest(t.Field); m != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		return msg
	}
	switch t.Value.Kind {
	case KindWord:
		return checkWord(t, spec)
	case KindNull:
		return checkNull(t, spec)
	}
	if msg := checkOrdering(t, spec); msg != "" {
		return msg
	}
	if v := t.Value; v.Kind == KindString && strings.Contains(v.Str, `"`) {
		return fmt.Sprintf("the value of %s contains '\"', which would end the query's outer double quotes", t.Field)
	}
	return checkKind(t, spec)
}

// checkWord explains why an unquoted word is not a value.
func checkWord(t *Term, spec FieldSpec) string {
	v := t.Value
	if spec.Kind == KindNumber {
		return fmt.Sprintf("unquoted value %s: quote strings, and %s expects a number (expand deskbot macros such as status:open before sending)", v.Str, t.Field)
	}
	return fmt.Sprintf("unquoted value %s: quote strings, e.g. %s:'%s'", v.Str, t.Field, v.Str)
}

// checkNull checks a field:null term: only equality, only a nullable field.
func checkNull(t *Term, spec FieldSpec) string {
	if t.Op != OpEq {
		return fmt.Sprintf("null cannot be compared with %s; use %s:null", t.Op, t.Field)
	}
	if !spec.Nullable {
		return fmt.Sprintf("%s cannot be null, so %s:null never matches", t.Field, t.Field)
	}
	return ""
}

// checkOrdering checks that a comparison (< or >) compares numbers or
// dates.
func checkOrdering(t *Term, spec FieldSpec) string {
	if t.Op == OpEq {
		return ""
	}
	if validKind(spec.Kind) && spec.Kind != KindNumber && spec.Kind != KindDate {
		return fmt.Sprintf("%s needs a number or a date, but %s is a %s field", t.Op, t.Field, spec.Kind)
	}
	v := t.Value
	_, isNum := v.asInt()
	_, _, isTime := v.asTime()
	if !validKind(spec.Kind) && !isNum && !isTime {
		return fmt.Sprintf("%s needs a number or a date, found %s", t.Op, v)
	}
	return ""
}

// checkKind checks the value against the field's kind.
func checkKind(t *Term, spec FieldSpec) string {
	v := t.Value
	switch spec.Kind {
	case KindNumber:
		if _, ok := v.asInt(); !ok {
			return fmt.Sprintf("%s expects a number, found %s", t.Field, v)
		}
	case KindString:
		if _, ok := v.asText(); !ok {
			return fmt.Sprintf("%s expects a single-quoted string, found %s (write '%s')", t.Field, v, v)
		}
	case KindDate:
		if _, _, ok := v.asTime(); !ok {
			return fmt.Sprintf("%s expects a date such as '2024-01-31' or an RFC3339 datetime such as '2024-01-31T09:00:00Z', found %s", t.Field, v)
		}
	case KindBool:
		if _, ok := v.asBool(); !ok {
			return fmt.Sprintf("%s expects true or false, found %s", t.Field, v)
		}
	}
	return ""
}

func validKind(k Kind) bool {
	return k == KindNumber || k == KindString || k == KindDate || k == KindBool
}

func isIdentifier(s string) bool {
	if s == "" || !isIdentStart(s[0]) || s == "AND" || s == "OR" {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// alias returns the filter's name for a name people reach for that the
// filter spells differently, or "".
func alias(name string) string {
	switch name {
	case "responder_id", "agent", "assignee":
		return "agent_id"
	case "tags":
		return "tag"
	case "requester":
		return "requester_id"
	case "group":
		return "group_id"
	}
	return ""
}

// suggest returns the known field closest to name, or "".
func (s Schema) suggest(name string) string {
	if a := alias(name); a != "" {
		if _, known := s.fields[a]; known {
			return a
		}
	}
	best, bestD := "", 0
	limit := 1
	if len(name) >= 5 {
		limit = 2
	}
	for f := range s.fields {
		d := distance(strings.ToLower(name), strings.ToLower(f))
		if d <= limit && (best == "" || d < bestD || (d == bestD && f < best)) {
			best, bestD = f, d
		}
	}
	return best
}

// distance is the optimal-string-alignment edit distance (insertions,
// deletions, substitutions and adjacent transpositions).
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

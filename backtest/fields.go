package backtest

import (
	"reflect"
	"slices"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// What a change changed, in a few classes of fields: a rule is asked
// again about a changed ticket only when the change touched a class it
// reads (rules.Rule.ReadFields): its verdict, until when it holds, and
// whether its actions render are the same otherwise. Every rule reads
// fieldQueue, which places its decisions in the queue.
const (
	fieldStatus fieldClass = 1 << iota
	fieldQueue             // priority, created_at: the queue's order
	fieldResponder
	fieldGroup
	fieldTags
	fieldUpdated
	fieldDue     // due_by, fr_due_by: rules on SLAs read them and little else of the rest
	fieldSubject // which alerts print
	fieldOther   // anything else

	fieldAll = 1<<iota - 1
)

// fieldClass is a set of classes of fields.
type fieldClass uint16

// queryFieldClass and exprFieldClass are the classes of the fields a
// query and an expression name; a field not listed is in every class.
var (
	queryFieldClass = map[string]fieldClass{"status": fieldStatus, "status:open": fieldStatus, "priority": fieldQueue,
		"agent_id": fieldResponder, "group_id": fieldGroup, "tag": fieldTags}
	exprFieldClass = map[string]fieldClass{"id": 0, "status": fieldStatus, "priority": fieldQueue, "created_at": fieldQueue,
		"responder_id": fieldResponder, "agent": fieldResponder, "group_id": fieldGroup, "group": fieldGroup,
		"tags": fieldTags, "updated_at": fieldUpdated,
		// the rest of the ticket (rules.TicketEnv)
		"subject": fieldSubject, "source": fieldOther, "requester_id": fieldOther, "requester": fieldOther,
		"department_id": fieldOther, "type": fieldOther, "category": fieldOther, "sub_category": fieldOther,
		"custom_fields": fieldOther, "due_by": fieldDue, "fr_due_by": fieldDue, "workspace_id": fieldOther,
		"description_text": fieldOther}
)

// readsOf is the classes of fields rule reads (and the queue's), and
// those its query reads: while the query does not hold, only a change of
// those can change its verdict.
func readsOf(rule *rules.Rule) (reads, query fieldClass) {
	queryFields, exprs, all := rule.ReadFields()
	if all {
		return fieldAll, fieldAll
	}
	for _, f := range queryFields {
		c, ok := queryFieldClass[f]
		if !ok {
			return fieldAll, fieldAll
		}
		query |= c
	}
	reads = fieldQueue | query
	for _, f := range exprs {
		c, ok := exprFieldClass[f]
		if !ok {
			return fieldAll, query
		}
		reads |= c
	}
	return reads, query
}

// changed is the classes of fields that differ between a and b, with
// rest for scratch. Whether
// the rest differs (fieldOther) costs a reflect.DeepEqual, asked only when
// one of others, the classes of the rules that read the rest, has none of
// the other classes that differ: otherwise every rule that reads the rest
// is asked anyway, and fieldOther is set as though it differed.
func changed(a, b *sdclient.Ticket, others []fieldClass, rest *sdclient.Ticket) fieldClass {
	var m fieldClass
	if a.Status != b.Status {
		m |= fieldStatus
	}
	if a.Priority != b.Priority || a.CreatedAt != b.CreatedAt {
		m |= fieldQueue
	}
	if !samePtr(a.ResponderID, b.ResponderID) {
		m |= fieldResponder
	}
	if !samePtr(a.GroupID, b.GroupID) {
		m |= fieldGroup
	}
	if (a.Tags == nil) != (b.Tags == nil) || !slices.Equal(a.Tags, b.Tags) {
		m |= fieldTags
	}
	if a.UpdatedAt != b.UpdatedAt {
		m |= fieldUpdated
	}
	if !samePtr(a.DueBy, b.DueBy) || !samePtr(a.FrDueBy, b.FrDueBy) {
		m |= fieldDue
	}
	if a.Subject != b.Subject {
		m |= fieldSubject
	}
	need := false
	for _, o := range others {
		need = need || o&m == 0
	}
	if !need {
		return m | fieldOther
	}
	*rest = *b // b with a's fields of the classes above: does the rest differ? (rest is the caller's scratch: no copy escapes)
	rest.Status, rest.Priority, rest.CreatedAt, rest.ResponderID, rest.GroupID, rest.Tags, rest.UpdatedAt, rest.DueBy, rest.FrDueBy, rest.Subject =
		a.Status, a.Priority, a.CreatedAt, a.ResponderID, a.GroupID, a.Tags, a.UpdatedAt, a.DueBy, a.FrDueBy, a.Subject
	if !reflect.DeepEqual(rest, a) {
		m |= fieldOther
	}
	return m
}

// readersOfOther are the distinct classes of fields (readsOf) of the rules
// that read fieldOther.
func readersOfOther(rs []*ruleState) []fieldClass {
	var out []fieldClass
	for _, rs := range rs {
		if rs.reads&fieldOther != 0 && !slices.Contains(out, rs.reads) {
			out = append(out, rs.reads)
		}
	}
	return out
}

func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

package rules

import (
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// openField is the synthetic field that status:open becomes for local
// evaluation. It cannot clash with a real field: it is not an identifier,
// so no parsed query can name it.
const openField = "status:open"

// localQuery returns q with status:open replaced by a term that holds for
// every status but Resolved (4) and Closed (5), the local meaning of the
// macro (the desk's custom statuses are all open ones).
func localQuery(q filter.Expr) filter.Expr {
	return filter.Rewrite(q, func(t *filter.Term) (filter.Expr, bool) {
		if !isStatusOpen(t) {
			return nil, false
		}
		return &filter.Term{Field: openField, Op: filter.OpEq, Value: filter.Bool(true), Pos: t.Pos}, true
	})
}

// ticketRecord is the filter.Record of a ticket for local evaluation: the
// ticket's own FilterValues (sdclient, the same mapping everyone uses:
// agent_id for responder_id, tag for tags, custom fields by name), plus the
// synthetic field that status:open becomes. The commonest single-valued
// fields are answered from a scratch buffer owned by the record, without
// allocating: the slice is valid until the next FilterValues call, which is
// how filter's Eval uses it. A ticketRecord is not safe for concurrent use.
type ticketRecord struct {
	t   *sdclient.Ticket
	buf [1]filter.Value
}

func (r *ticketRecord) reset(t *sdclient.Ticket) { r.t = t }

func (r *ticketRecord) one(v filter.Value) []filter.Value {
	r.buf[0] = v
	return r.buf[:]
}

// FilterValues implements filter.Record.
func (r *ticketRecord) FilterValues(field string) []filter.Value {
	t := r.t
	switch field {
	case openField:
		return r.one(filter.Bool(sdclient.IsOpenStatus(t.Status)))
	case "status":
		return r.one(filter.Number(int64(t.Status)))
	case "priority":
		return r.one(filter.Number(int64(t.Priority)))
	case "agent_id":
		if t.ResponderID == nil {
			return nil
		}
		return r.one(filter.Number(*t.ResponderID))
	case "group_id":
		if t.GroupID == nil {
			return nil
		}
		return r.one(filter.Number(*t.GroupID))
	}
	return t.FilterValues(field)
}

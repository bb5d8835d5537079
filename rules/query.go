package rules

import (
	"math"
	"time"

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

// ticketRecord adapts an *sdclient.Ticket to filter.Record with the filter's
// field names (agent_id for responder_id, tag for tags, custom fields by
// name). sdclient does not provide one, so rules carries this small adapter.
//
// For speed, single values are returned in a scratch buffer owned by the
// record: the slice is valid until the next FilterValues call, which is how
// filter's Eval uses it (it reads the values before looking up the next
// field). A ticketRecord is therefore not safe for concurrent use.
type ticketRecord struct {
	t    *sdclient.Ticket
	buf  [1]filter.Value
	tags []filter.Value
}

func (r *ticketRecord) one(v filter.Value) []filter.Value {
	r.buf[0] = v
	return r.buf[:]
}

func (r *ticketRecord) optInt(p *int64) []filter.Value {
	if p == nil {
		return r.one(filter.Null())
	}
	return r.one(filter.Number(*p))
}

func (r *ticketRecord) optTime(p *time.Time) []filter.Value {
	if p == nil {
		return r.one(filter.Null())
	}
	return r.one(filter.DateTime(*p))
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
		return r.optInt(t.ResponderID)
	case "group_id":
		return r.optInt(t.GroupID)
	case "requester_id":
		return r.one(filter.Number(t.RequesterID))
	case "department_id":
		return r.optInt(t.DepartmentID)
	case "workspace_id":
		return r.optInt(t.WorkspaceID)
	case "source":
		return r.one(filter.Number(int64(t.Source)))
	case "impact":
		if t.Impact == nil {
			return r.one(filter.Null())
		}
		return r.one(filter.Number(int64(*t.Impact)))
	case "urgency":
		if t.Urgency == nil {
			return r.one(filter.Null())
		}
		return r.one(filter.Number(int64(*t.Urgency)))
	case "type":
		if t.Type == "" {
			return r.one(filter.Null())
		}
		return r.one(filter.String(t.Type))
	case "tag":
		if r.tags == nil {
			r.tags = make([]filter.Value, 0, len(t.Tags))
			for _, s := range t.Tags {
				r.tags = append(r.tags, filter.String(s))
			}
		}
		return r.tags
	case "email":
		if t.Requester == nil {
			return nil
		}
		return r.one(filter.String(t.Requester.Email))
	case "due_by":
		return r.optTime(t.DueBy)
	case "fr_due_by":
		return r.optTime(t.FrDueBy)
	case "created_at":
		return r.one(filter.DateTime(t.CreatedAt))
	case "updated_at":
		return r.one(filter.DateTime(t.UpdatedAt))
	}
	v, ok := t.CustomFields[field]
	if !ok {
		return nil
	}
	return r.one(customValue(v))
}

// customValue converts a custom field's JSON value to a filter value.
func customValue(v any) filter.Value {
	switch x := v.(type) {
	case nil:
		return filter.Null()
	case string:
		return filter.String(x)
	case bool:
		return filter.Bool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return filter.Number(int64(x))
		}
		return filter.String(formatValue(x))
	case int:
		return filter.Number(int64(x))
	case int64:
		return filter.Number(x)
	}
	return filter.String(formatValue(v))
}

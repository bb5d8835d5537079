package sdclient

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

var _ filter.Record = (*Ticket)(nil)

// FilterValues gives a ticket's values for a filter field, so a Ticket can
// be evaluated locally against the same expressions the desk's
// /tickets/filter takes (for example to re-check a rule after re-reading a
// ticket). Field names are the filter's: agent_id is responder_id, tag is
// tags. A field that is null on the ticket (an unassigned agent_id, no
// group) has no values; custom fields are read from custom_fields by name
// with their JSON kinds.
func (t *Ticket) FilterValues(field string) []filter.Value {
	switch field {
	case "id":
		return []filter.Value{filter.Number(t.ID)}
	case "agent_id", "responder_id":
		return optID(t.ResponderID)
	case "group_id":
		return optID(t.GroupID)
	case "requester_id":
		return []filter.Value{filter.Number(t.RequesterID)}
	case "requested_for_id":
		return optID(t.RequestedForID)
	case "department_id":
		return optID(t.DepartmentID)
	case "workspace_id":
		return optID(t.WorkspaceID)
	case "priority":
		return []filter.Value{filter.Number(int64(t.Priority))}
	case "status":
		return []filter.Value{filter.Number(int64(t.Status))}
	case "source":
		return []filter.Value{filter.Number(int64(t.Source))}
	case "urgency":
		return optInt(t.Urgency)
	case "impact":
		return optInt(t.Impact)
	case "type":
		if t.Type == "" {
			return nil
		}
		return []filter.Value{filter.String(t.Type)}
	case "tag", "tags":
		out := make([]filter.Value, 0, len(t.Tags))
		for _, tag := range t.Tags {
			out = append(out, filter.String(tag))
		}
		return out
	case "category":
		return optString(t.Category)
	case "sub_category":
		return optString(t.SubCategory)
	case "email":
		if t.Requester != nil && t.Requester.Email != "" {
			return []filter.Value{filter.String(t.Requester.Email)}
		}
		return nil
	case "created_at":
		return optTime(&t.CreatedAt)
	case "updated_at":
		return optTime(&t.UpdatedAt)
	case "due_by":
		return optTime(t.DueBy)
	case "fr_due_by":
		return optTime(t.FrDueBy)
	}
	v, ok := t.CustomFields[field]
	if !ok {
		return nil
	}
	return jsonValues(v)
}

func optID(p *int64) []filter.Value {
	if p == nil {
		return nil
	}
	return []filter.Value{filter.Number(*p)}
}

func optInt(p *int) []filter.Value {
	if p == nil {
		return nil
	}
	return []filter.Value{filter.Number(int64(*p))}
}

func optString(p *string) []filter.Value {
	if p == nil {
		return nil
	}
	return []filter.Value{filter.String(*p)}
}

func optTime(p *time.Time) []filter.Value {
	if p == nil || p.IsZero() {
		return nil
	}
	return []filter.Value{filter.DateTime(*p)}
}

// jsonValues maps a decoded JSON value to filter values by its JSON kind;
// arrays (multi-select fields) give one value per element.
func jsonValues(v any) []filter.Value {
	switch x := v.(type) {
	case nil:
		return []filter.Value{filter.Null()}
	case bool:
		return []filter.Value{filter.Bool(x)}
	case string:
		return []filter.Value{filter.String(x)}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return []filter.Value{filter.Number(int64(x))}
		}
		return []filter.Value{filter.String(strconv.FormatFloat(x, 'f', -1, 64))}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return []filter.Value{filter.Number(n)}
		}
		return []filter.Value{filter.String(x.String())}
	case int:
		return []filter.Value{filter.Number(int64(x))}
	case int64:
		return []filter.Value{filter.Number(x)}
	case []any:
		var out []filter.Value
		for _, e := range x {
			out = append(out, jsonValues(e)...)
		}
		return out
	}
	return nil
}

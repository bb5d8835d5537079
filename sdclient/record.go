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
	if vals, ok := t.idValues(field); ok {
		return vals
	}
	if vals, ok := t.codeValues(field); ok {
		return vals
	}
	if vals, ok := t.textValues(field); ok {
		return vals
	}
	if vals, ok := t.timeValues(field); ok {
		return vals
	}
	v, ok := t.CustomFields[field]
	if !ok {
		return nil
	}
	return jsonValues(v)
}

// idValues gives the values of the fields that hold ids; ok is false for
// another field.
func (t *Ticket) idValues(field string) (vals []filter.Value, ok bool) {
	switch field {
	case "id":
		return []filter.Value{filter.Number(t.ID)}, true
	case "agent_id", "responder_id":
		return optID(t.ResponderID), true
	case "group_id":
		return optID(t.GroupID), true
	case "requester_id":
		return []filter.Value{filter.Number(t.RequesterID)}, true
	case "requested_for_id":
		return optID(t.RequestedForID), true
	case "department_id":
		return optID(t.DepartmentID), true
	case "workspace_id":
		return optID(t.WorkspaceID), true
	}
	return nil, false
}

// codeValues gives the values of the numeric codes (priority, status,
// source, urgency, impact); ok is false for another field.
func (t *Ticket) codeValues(field string) (vals []filter.Value, ok bool) {
	switch field {
	case "priority":
		return []filter.Value{filter.Number(int64(t.Priority))}, true
	case "status":
		return []filter.Value{filter.Number(int64(t.Status))}, true
	case "source":
		return []filter.Value{filter.Number(int64(t.Source))}, true
	case "urgency":
		return optInt(t.Urgency), true
	case "impact":
		return optInt(t.Impact), true
	}
	return nil, false
}

// textValues gives the values of the text fields (type, tags, categories,
// the requester's e-mail); ok is false for another field.
func (t *Ticket) textValues(field string) (vals []filter.Value, ok bool) {
	switch field {
	case "type":
		if t.Type == "" {
			return nil, true
		}
		return []filter.Value{filter.String(t.Type)}, true
	case "tag", "tags":
		out := make([]filter.Value, 0, len(t.Tags))
		for _, tag := range t.Tags {
			out = append(out, filter.String(tag))
		}
		return out, true
	case "category":
		return optString(t.Category), true
	case "sub_category":
		return optString(t.SubCategory), true
	case "email":
		if t.Requester != nil && t.Requester.Email != "" {
			return []filter.Value{filter.String(t.Requester.Email)}, true
		}
		return nil, true
	}
	return nil, false
}

// timeValues gives the values of the date fields; ok is false for another
// field.
func (t *Ticket) timeValues(field string) (vals []filter.Value, ok bool) {
	switch field {
	case "created_at":
		return optTime(&t.CreatedAt), true
	case "updated_at":
		return optTime(&t.UpdatedAt), true
	case "due_by":
		return optTime(t.DueBy), true
	case "fr_due_by":
		return optTime(t.FrDueBy), true
	}
	return nil, false
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

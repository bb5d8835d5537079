package sdclient

import (
	"encoding/json"
	"reflect"
)

// MarshalJSON sends only the fields that are set, and ResponderID or GroupID
// pointing at 0 as JSON null: that is how the desk unassigns a ticket or
// clears its group (a literal 0 would be rejected as an unknown id).
func (u TicketUpdate) MarshalJSON() ([]byte, error) {
	type plain TicketUpdate // no MarshalJSON: no recursion
	aux := struct {
		plain
		GroupID     json.RawMessage `json:"group_id,omitempty"`
		ResponderID json.RawMessage `json:"responder_id,omitempty"`
	}{plain: plain(u)}
	var err error
	if aux.GroupID, err = nullableID(u.GroupID); err != nil {
		return nil, err
	}
	if aux.ResponderID, err = nullableID(u.ResponderID); err != nil {
		return nil, err
	}
	return json.Marshal(aux)
}

func nullableID(p *int64) (json.RawMessage, error) {
	switch {
	case p == nil:
		return nil, nil
	case *p == 0:
		return json.RawMessage("null"), nil
	default:
		return json.Marshal(*p)
	}
}

// empty reports whether no field is set.
func (u *TicketUpdate) empty() bool {
	v := reflect.ValueOf(u).Elem()
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			return false
		}
	}
	return true
}

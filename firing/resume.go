package firing

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// UpdateHolds reports whether every value update u sets already holds on
// t: a resumed firing counts such an update as done instead of sending it
// again over a change somebody made since.
func UpdateHolds(u *sdclient.TicketUpdate, t *sdclient.Ticket) bool {
	return fieldsHold(u, t) && tagsHold(u.Tags, t.Tags) && customHold(u.CustomFields, t.CustomFields)
}

// holds reports whether an update's value set (nil: not set) is have.
func holds[T comparable](set *T, have T) bool { return set == nil || *set == have }

// holdsPtr is holds for a ticket field that may be missing (nil): a value
// set never holds on a missing one.
func holdsPtr[T comparable](set, have *T) bool {
	return set == nil || (have != nil && *set == *have)
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// fieldsHold reports whether each plain field u sets already holds on t.
func fieldsHold(u *sdclient.TicketUpdate, t *sdclient.Ticket) bool {
	timeHolds := func(set, have *time.Time) bool { return set == nil || (have != nil && set.Equal(*have)) }
	return holds(u.Subject, t.Subject) && holds(u.Description, t.Description) &&
		holds(u.Status, t.Status) && holds(u.Priority, t.Priority) && holds(u.Source, t.Source) &&
		holdsPtr(u.Urgency, t.Urgency) && holdsPtr(u.Impact, t.Impact) && holds(u.Type, t.Type) &&
		holds(u.GroupID, deref(t.GroupID)) && holds(u.ResponderID, deref(t.ResponderID)) &&
		holds(u.DepartmentID, deref(t.DepartmentID)) && holds(u.Category, deref(t.Category)) &&
		holds(u.SubCategory, deref(t.SubCategory)) && holds(u.ItemCategory, deref(t.ItemCategory)) &&
		timeHolds(u.DueBy, t.DueBy) && timeHolds(u.FrDueBy, t.FrDueBy)
}

// tagsHold reports whether the ticket has every tag of set (nil: tags not
// set), compared case-insensitively as the desk's tag filter does.
func tagsHold(set *[]string, have []string) bool {
	if set == nil {
		return true
	}
	has := make(map[string]bool, len(have))
	for _, tag := range have {
		has[strings.ToLower(tag)] = true
	}
	for _, tag := range *set {
		if !has[strings.ToLower(tag)] {
			return false
		}
	}
	return true
}

// customHold reports whether every custom field set has its value in have
// (deeply equal, or printing the same: the desk's JSON numbers and the
// rules' YAML ones differ in type).
func customHold(set, have map[string]any) bool {
	for k, v := range set {
		hv, ok := have[k]
		if !ok || !(reflect.DeepEqual(v, hv) || fmt.Sprint(v) == fmt.Sprint(hv)) {
			return false
		}
	}
	return true
}

// MergeTags returns have followed by the tags of add it lacks, compared
// case-insensitively as the desk's tag filter does.
func MergeTags(have, add []string) []string {
	out := append([]string{}, have...)
	seen := make(map[string]bool, len(have)+len(add))
	for _, t := range have {
		seen[strings.ToLower(t)] = true
	}
	for _, t := range add {
		if k := strings.ToLower(t); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

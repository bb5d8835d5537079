package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// codedFields are the query fields whose values are codes from a fixed
// list: a query that asks for any other value matches no ticket ever, so
// the loader refuses it and names the valid values.
var codedFields = []string{"status", "priority", "source"}

// BuiltinChoices returns the codes of field ("status", "priority" or
// "source") that every desk has: the API's fixed statuses, its four
// priorities and the sources it documents. A desk adds custom statuses
// (and may add sources): rules check takes them with --status, and
// deskbot reads them from the desk (see WithFieldChoices).
func BuiltinChoices(field string) []sdclient.FieldChoice {
	switch field {
	case "status":
		return []sdclient.FieldChoice{{ID: sdclient.StatusOpen, Value: "Open"}, {ID: sdclient.StatusPending, Value: "Pending"},
			{ID: sdclient.StatusResolved, Value: "Resolved"}, {ID: sdclient.StatusClosed, Value: "Closed"}}
	case "priority":
		return []sdclient.FieldChoice{{ID: 1, Value: "Low"}, {ID: 2, Value: "Medium"}, {ID: 3, Value: "High"}, {ID: 4, Value: "Urgent"}}
	case "source":
		return []sdclient.FieldChoice{{ID: 1, Value: "Email"}, {ID: 2, Value: "Portal"}, {ID: 3, Value: "Phone"}, {ID: 4, Value: "Chat"},
			{ID: 5, Value: "Feedback widget"}, {ID: 6, Value: "Yammer"}, {ID: 7, Value: "AWS Cloudwatch"}, {ID: 8, Value: "Pagerduty"},
			{ID: 9, Value: "Walkup"}, {ID: 10, Value: "Slack"}}
	}
	return nil
}

// WithFieldChoices sets the codes a query may ask for in field ("status",
// "priority" or "source"): the desk's own, which replace the built-in
// ones (BuiltinChoices). Empty choices keep the built-in ones.
func WithFieldChoices(field string, choices []sdclient.FieldChoice) Option {
	return func(c *config) {
		if len(choices) == 0 {
			return
		}
		if c.choices == nil {
			c.choices = map[string][]sdclient.FieldChoice{}
		}
		c.choices[field] = slices.Clone(choices)
	}
}

// choicesOf is the codes field may have under the loader's options.
func (c *config) choicesOf(field string) (choices []sdclient.FieldChoice, fromDesk bool) {
	if ch, ok := c.choices[field]; ok {
		return ch, true
	}
	return BuiltinChoices(field), false
}

// checkCodes reports the terms of q that ask a coded field for a value it
// cannot have, each with its offset in the query and the message.
func (c *config) checkCodes(q filter.Expr) []codeError {
	var errs []codeError
	for _, t := range filter.Terms(q) {
		if !slices.Contains(codedFields, t.Field) || t.Op != filter.OpEq || isStatusOpen(t) {
			continue
		}
		var n int64
		switch t.Value.Kind {
		case filter.KindNumber:
			n = t.Value.Num
		case filter.KindString:
			v, err := strconv.ParseInt(strings.TrimSpace(t.Value.Str), 10, 64)
			if err != nil {
				continue // the schema check speaks of the kind
			}
			n = v
		default:
			continue
		}
		choices, fromDesk := c.choicesOf(t.Field)
		if slices.ContainsFunc(choices, func(ch sdclient.FieldChoice) bool { return ch.ID == n }) {
			continue
		}
		msg := fmt.Sprintf("%s:%d: no ticket has %s %d; the %s %s are %s", t.Field, n, t.Field, n, map[bool]string{true: "desk's", false: "known"}[fromDesk], pluralField(t.Field), listChoices(choices))
		if t.Field == "status" && !fromDesk {
			msg += fmt.Sprintf("; a custom status of your desk: rules check --status %d:NAME (deskbot reads them from the desk)", n)
		}
		errs = append(errs, codeError{pos: t.Pos, msg: msg})
	}
	return errs
}

// codeError is one value checkCodes refused.
type codeError struct {
	pos int
	msg string
}

func pluralField(f string) string {
	switch f {
	case "status":
		return "statuses"
	case "priority":
		return "priorities"
	}
	return f + "s"
}

// listChoices is "2 (Open), 3 (Pending), ...".
func listChoices(choices []sdclient.FieldChoice) string {
	parts := make([]string, 0, len(choices))
	for _, ch := range choices {
		parts = append(parts, fmt.Sprintf("%d (%s)", ch.ID, ch.Value))
	}
	return strings.Join(parts, ", ")
}

package rules

import "slices"

// IfFields are the ticket fields r's if reads (ticket.NAME, first level:
// "custom_fields", "requester", "description_text", ...), in the order
// they appear; nil when r has no if. The backtest marks a rule whose if
// reads data the history does not keep as approximate.
func (r *Rule) IfFields() []string {
	if r.cond == nil {
		return nil
	}
	return slices.Clone(r.cond.fields)
}

package firing

import (
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// PageSpec is the page a page action of firing f starts: keyed by rule,
// ticket and episode, so a resumed or repeated firing of the same episode
// finds the page already started.
func PageSpec(r *rules.Rule, f rules.Firing, ticketID int64, a rules.Action) oncall.PageSpec {
	return oncall.PageSpec{Rule: r.Name, TicketID: ticketID, Episode: f.Episode, Policy: a.Policy, Channel: a.Channel, Text: a.Text,
		GroupOver: plan.GroupOver(r)}
}

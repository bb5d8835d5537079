package slackchat_test

import (
	"fmt"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// tail is the end of a long string, for error messages.
var tail = chattest.Tail

// The desk's assignment scopes (sdclient.AgentRole.AssignmentScope).
const (
	scopeEntire    = "entire_helpdesk"
	scopeMember    = "member_groups"
	scopeAssigned  = "assigned_items"
	scopeSpecified = "specified_groups"
)

// maxQuery is the desk's limit on a filter query, as the bot keeps it.
const maxQuery = 512

// scopedWhole is q narrowed to an agent's scope in one query, the way the
// bot would write it: q AND (group_id:G OR ... OR agent_id:A).
func scopedWhole(t *testing.T, q string, agent int64, groups []int64) string {
	t.Helper()
	e, err := filter.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	var any []filter.Expr
	for _, g := range groups {
		any = append(any, &filter.Term{Field: "group_id", Op: filter.OpEq, Value: filter.Number(g)})
	}
	any = append(any, &filter.Term{Field: "agent_id", Op: filter.OpEq, Value: filter.Number(agent)})
	return fmt.Sprint(&filter.And{Exprs: []filter.Expr{e, &filter.Or{Exprs: any}}})
}

// simDesk is fakedesk.Sim through the bot's desk adapter.
func simDesk(t *testing.T) (*sdsim.Server, *bot.DeskAdapter, int64) {
	t.Helper()
	sim, c, id := fakedesk.Sim(t)
	return sim, bot.NewDeskAdapter(c), id
}

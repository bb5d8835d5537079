package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

func newVM() *vm.VM { return &vm.VM{} }

// benchTickets returns n realistic tickets: mostly open, a few custom
// statuses, a third unassigned, varied priorities, groups, tags and ages.
func benchTickets(n int) []*sdclient.Ticket {
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := []int{2, 2, 2, 2, 3, 3, 4, 5, 6, 7}
	tagPool := []string{"vip", "network", "hardware", "onboarding", "security", "printer"}
	out := make([]*sdclient.Ticket, n)
	for i := range out {
		t := &sdclient.Ticket{
			ID:          int64(1000 + i),
			Subject:     fmt.Sprintf("Ticket %d about something broken", i),
			Status:      statuses[rng.IntN(len(statuses))],
			Priority:    1 + rng.IntN(4),
			Source:      1 + rng.IntN(3),
			Type:        "Incident",
			RequesterID: int64(5000 + rng.IntN(300)),
			CreatedAt:   fixtureNow.Add(-time.Duration(rng.IntN(10*24*60)) * time.Minute),
		}
		t.UpdatedAt = t.CreatedAt.Add(time.Duration(rng.IntN(60*24)) * time.Minute)
		if rng.IntN(3) > 0 {
			t.ResponderID = sdclient.Ptr(int64(100 + rng.IntN(20)))
		}
		if rng.IntN(4) > 0 {
			t.GroupID = sdclient.Ptr(int64(1 + rng.IntN(10)))
		}
		if rng.IntN(5) > 0 {
			d := t.CreatedAt.Add(time.Duration(4+rng.IntN(72)) * time.Hour)
			t.DueBy, t.FrDueBy = &d, &d
		}
		for j := rng.IntN(3); j > 0; j-- {
			t.Tags = append(t.Tags, tagPool[rng.IntN(len(tagPool))])
		}
		t.CustomFields = map[string]any{"site": []string{"HQ", "Annex", "Remote"}[rng.IntN(3)]}
		out[i] = t
	}
	return out
}

// benchRules returns a rules file of n rules shaped like real ones.
func benchRules(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nchannels: {oncall: \"#it-oncall\", desk: \"#it-desk\"}\nrules:\n")
	shapes := []struct{ query, cond string }{
		{"status:open AND agent_id:0 AND priority:%d", `now() - ticket.created_at > duration("%dm")`},
		{"status:open AND group_id:%d", `ticket.responder_id == 0 && now() - ticket.updated_at > duration("%dm")`},
		{"status:3 AND priority:%d", `now() - ticket.updated_at > duration("%dh")`},
		{"status:open AND tag:'vip' AND priority:%d", `ticket.due_by.IsZero() == false && ticket.due_by < now() + duration("%dm")`},
		{"status:open AND priority:%d", `has_due(ticket) && ticket.due_by < now() && ticket.priority < Urgent && %d > 0`},
	}
	for i := 0; i < n; i++ {
		s := shapes[i%len(shapes)]
		arg := 1 + i%4
		if i%len(shapes) == 1 {
			arg = 1 + i%10
		}
		fmt.Fprintf(&b, "  - name: rule-%d\n    query: \"%s\"\n    if: '%s'\n    actions:\n", i, fmt.Sprintf(s.query, arg), fmt.Sprintf(s.cond, 5+i))
		fmt.Fprintf(&b, "      - alert: {channel: desk, text: \"#{{ ticket.id }} {{ ticket.subject }} ({{ now() - ticket.created_at }})\"}\n")
		fmt.Fprintf(&b, "      - note: \"rule %d fired\"\n", i)
	}
	return b.String()
}

func BenchmarkEvaluate(b *testing.B) {
	s := mustLoad(b, benchRules(50))
	tickets := benchTickets(10000)
	evals := float64(len(s.Rules()) * len(tickets))
	fired := len(s.Evaluate(tickets, fixtureNow))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		s.Evaluate(tickets, fixtureNow)
	}
	el := time.Since(start)
	b.ReportMetric(evals*float64(b.N)/el.Seconds(), "evals/s")
	b.ReportMetric(float64(fired), "decisions")
}

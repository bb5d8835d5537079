package filter

import (
	"testing"
)

const benchQuery = "(status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3 AND created_at:<'2026-01-01'"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchQuery)))
	for b.Loop() {
		if _, err := Parse(benchQuery); err != nil {
			b.Fatal(err)
		}
	}
}

// benchTicket is a record the way a caller adapts a ticket: a switch over
// the field name returning values from a preallocated ticket.
type benchTicket struct {
	status, priority, agent, created, tags []Value
}

func (t *benchTicket) FilterValues(field string) []Value {
	switch field {
	case "status":
		return t.status
	case "priority":
		return t.priority
	case "agent_id":
		return t.agent
	case "created_at":
		return t.created
	case "tag":
		return t.tags
	}
	return nil
}

func BenchmarkEval(b *testing.B) {
	e, err := Parse(benchQuery)
	if err != nil {
		b.Fatal(err)
	}
	// A matching ticket walks every term: the worst case for And.
	rec := &benchTicket{
		status:   []Value{Number(12)},
		priority: []Value{Number(4)},
		agent:    nil,
		created:  []Value{at("2025-06-30T12:00:00Z")},
		tags:     []Value{String("vpn")},
	}
	if !e.Eval(rec) {
		b.Fatal("benchmark ticket should match")
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		e.Eval(rec)
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/ticket")
}

// BenchmarkParseEvaluate is the issue's figure, "filter parse+evaluate per
// ticket", as the simulator and the scheduler use the language: one query
// parsed, then evaluated over a page of 100 varied tickets, some of them
// matching. ns/ticket folds the parse into the per-ticket cost.
func BenchmarkParseEvaluate(b *testing.B) {
	page := make([]Record, 100)
	for i := range page {
		agent := []Value{Number(int64(i % 3))} // 0 (unassigned) for every third
		page[i] = &benchTicket{
			status:   []Value{Number(int64(2 + i%6))},
			priority: []Value{Number(int64(1 + i%4))},
			agent:    agent,
			created:  []Value{at("2025-06-30T12:00:00Z")},
			tags:     []Value{String("vpn")},
		}
	}
	b.ReportAllocs()
	tickets, matched := 0, 0
	for b.Loop() {
		e, err := Parse(benchQuery)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range page {
			if e.Eval(r) {
				matched++
			}
		}
		tickets += len(page)
	}
	if matched == 0 {
		b.Fatal("no ticket matched: the benchmark measures nothing but misses")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tickets), "ns/ticket")
}

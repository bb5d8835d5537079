package filter_test

import (
	"fmt"

	"github.com/deskbot/deskbot/sdclient/filter"
)

// A rule's query with the deskbot macro status:open is expanded to the
// account's open statuses, validated and encoded for GET /tickets/filter.
func Example() {
	e, err := filter.Parse("status:open AND agent_id:0 AND priority:>3")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filter.TicketSchema(nil).Validate(e))

	open := []int64{2, 3, 12} // from GET /ticket_form_fields
	e = filter.Rewrite(e, func(t *filter.Term) (filter.Expr, bool) {
		if t.Field != "status" || t.Value.Kind != filter.KindWord || t.Value.Str != "open" {
			return nil, false
		}
		or := &filter.Or{}
		for _, id := range open {
			or.Exprs = append(or.Exprs, &filter.Term{Field: "status", Value: filter.Number(id)})
		}
		return or, true
	})
	fmt.Println(e)
	fmt.Println(filter.TicketSchema(nil).Validate(e))
	q, err := filter.Encode(e)
	fmt.Println(q, err)

	ticket := filter.Values{"status": {filter.Number(12)}, "priority": {filter.Number(4)}}
	fmt.Println(e.Eval(ticket)) // no agent_id: unassigned
	// Output:
	// filter: column 1: unquoted value open: quote strings, and status expects a number (expand deskbot macros such as status:open before sending)
	// (status:2 OR status:3 OR status:12) AND agent_id:0 AND priority:>3
	// <nil>
	// %22%28status%3A2%20OR%20status%3A3%20OR%20status%3A12%29%20AND%20agent_id%3A0%20AND%20priority%3A%3E3%22 <nil>
	// true
}

func ExampleParse_error() {
	_, err := filter.Parse("agent_id:0 AND status:2 OR status:3")
	fmt.Println(err)
	// Output:
	// filter: column 25: OR after AND (column 12) at the same level: an OR group combined with AND must be parenthesized, e.g. a:1 AND (b:2 OR c:3)
}

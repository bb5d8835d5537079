package bot

import (
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// prepareQuery checks a filter expression typed in chat with the shared
// filter language before it is sent, so that a typo is reported with its
// column, and expands status words (status:open, status:pending, a custom
// status's name) into status ids.
func prepareQuery(q string, statuses []sdclient.FieldChoice) (string, error) {
	e, err := filter.Parse(q)
	if err != nil {
		return "", err
	}
	var bad error
	e = filter.Rewrite(e, func(t *filter.Term) (filter.Expr, bool) {
		if t.Field != "status" || (t.Value.Kind != filter.KindWord && t.Value.Kind != filter.KindString) || t.Op != filter.OpEq {
			return nil, false
		}
		word := t.Value.Str
		if strings.EqualFold(word, "open") {
			var or []filter.Expr
			for _, ch := range statuses {
				if sdclient.IsOpenStatus(int(ch.ID)) {
					or = append(or, &filter.Term{Field: "status", Op: filter.OpEq, Value: filter.Number(ch.ID)})
				}
			}
			return &filter.Or{Exprs: or}, true
		}
		id, err := resolveStatus(word, statuses)
		if err != nil {
			bad = fmt.Errorf("filter: column %d: %w", t.Pos+1, err)
			return nil, false
		}
		return &filter.Term{Field: "status", Op: filter.OpEq, Value: filter.Number(int64(id))}, true
	})
	if bad != nil {
		return "", bad
	}
	if e == nil {
		return "", fmt.Errorf("empty filter expression")
	}
	if err := filter.TicketSchema(nil).Validate(e); err != nil {
		return "", err
	}
	return fmt.Sprint(e), nil
}

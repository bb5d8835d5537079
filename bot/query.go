package bot

import "github.com/deskbot/deskbot/sdclient/filter"

// validateQuery checks a filter expression with the shared filter language
// before it is sent, so that a typo is reported with its position.
func validateQuery(q string) error {
	e, err := filter.Parse(q)
	if err != nil {
		return err
	}
	return filter.TicketSchema(nil).Validate(e)
}

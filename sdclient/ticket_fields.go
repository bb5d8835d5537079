package sdclient

import (
	"context"
	"fmt"
	"strconv"
)

// TicketFieldsService reads ticket field definitions (GET /ticket_fields).
type TicketFieldsService service

// TicketFormFieldsService reads the ticket form's fields
// (GET /ticket_form_fields, envelope "ticket_fields"), where the account's
// statuses, custom ones included, are defined.
type TicketFormFieldsService service

// FieldListOptions are the query parameters of the field lists.
type FieldListOptions struct {
	// WorkspaceID reads the fields of another workspace than the default.
	WorkspaceID *int64 `url:"workspace_id,omitempty"`
}

// List reads the ticket field definitions (GET /ticket_fields).
func (s *TicketFieldsService) List(ctx context.Context, opts *FieldListOptions) ([]*FormField, *Response, error) {
	return list[FormField](ctx, s.client, "list ticket fields", "ticket_fields", "ticket_fields", opts)
}

// List reads the ticket form fields (GET /ticket_form_fields).
func (s *TicketFormFieldsService) List(ctx context.Context, opts *FieldListOptions) ([]*FormField, *Response, error) {
	return list[FormField](ctx, s.client, "list ticket form fields", "ticket_form_fields", "ticket_fields", opts)
}

// Statuses returns the account's ticket statuses, custom ones included: the
// choices of the form field named "status" (ID is the status id, Value its
// name).
func (c *Client) Statuses(ctx context.Context) ([]FieldChoice, error) {
	fields, _, err := c.TicketFormFields.List(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sdclient: read statuses: %w", err)
	}
	for _, f := range fields {
		if f != nil && (f.Name == "status" || f.FieldType == "default_status") {
			if len(f.Choices) == 0 {
				return nil, fmt.Errorf("sdclient: read statuses: the status field has no choices")
			}
			return f.Choices, nil
		}
	}
	return nil, fmt.Errorf("sdclient: read statuses: no form field named \"status\" among %d fields", len(fields))
}

// OpenStatuses returns every open status id: all statuses of the form's
// status field but Resolved (4) and Closed (5), custom ones included, in the
// desk's order. A query for unresolved tickets must list them all.
func (c *Client) OpenStatuses(ctx context.Context) ([]int, error) {
	choices, err := c.Statuses(ctx)
	if err != nil {
		return nil, err
	}
	var open []int
	seen := map[int]bool{}
	for _, ch := range choices {
		id := int(ch.ID)
		if int64(id) != ch.ID || id <= 0 {
			return nil, fmt.Errorf("sdclient: read statuses: status id %s is out of range", strconv.FormatInt(ch.ID, 10))
		}
		if IsOpenStatus(id) && !seen[id] {
			seen[id] = true
			open = append(open, id)
		}
	}
	return open, nil
}

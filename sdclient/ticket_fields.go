package sdclient

import (
	"context"
	"fmt"
	"strconv"

	"github.com/deskbot/deskbot/sdclient/filter"
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
	return fromFormFields(ctx, c, "statuses", StatusesOf)
}

// fromFormFields reads the form fields (GET /ticket_form_fields) and
// gives them to of; what names what was read in the error.
func fromFormFields[T any](ctx context.Context, c *Client, what string, of func([]*FormField) (T, error)) (T, error) {
	fields, _, err := c.TicketFormFields.List(ctx, nil)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("sdclient: read %s: %w", what, err)
	}
	return of(fields)
}

// StatusesOf is Statuses of form fields already read (GET
// /ticket_form_fields), so that one read serves every caller.
func StatusesOf(fields []*FormField) ([]FieldChoice, error) {
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
	return fromFormFields(ctx, c, "statuses", OpenStatusesOf)
}

// OpenStatusesOf is OpenStatuses of form fields already read.
func OpenStatusesOf(fields []*FormField) ([]int, error) {
	choices, err := StatusesOf(fields)
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

// CustomFields returns the account's custom ticket fields (the form's
// fields that are not default ones) by name, with the kind of value a
// filter query compares them with: text, paragraph and dropdown fields are
// strings, number and decimal fields numbers, checkboxes booleans and date
// fields dates. Fields of other types (lookups, nested fields) are left
// out: a query cannot filter on them.
func (c *Client) CustomFields(ctx context.Context) (map[string]filter.Kind, error) {
	return fromFormFields(ctx, c, "custom fields", func(f []*FormField) (map[string]filter.Kind, error) { return CustomFieldsOf(f), nil })
}

// CustomFieldsOf is CustomFields of form fields already read.
func CustomFieldsOf(fields []*FormField) map[string]filter.Kind {
	out := map[string]filter.Kind{}
	for _, f := range fields {
		if f == nil || f.DefaultField || f.Name == "" {
			continue
		}
		if k, ok := customFieldKind(f.FieldType); ok {
			out[f.Name] = k
		}
	}
	return out
}

// customFieldKind maps a custom field type of the desk to a filter kind.
func customFieldKind(fieldType string) (filter.Kind, bool) {
	switch fieldType {
	case "custom_text", "custom_paragraph", "custom_dropdown", "custom_url", "custom_phone":
		return filter.KindString, true
	case "custom_number", "custom_decimal":
		return filter.KindNumber, true
	case "custom_checkbox":
		return filter.KindBool, true
	case "custom_date", "custom_date_time":
		return filter.KindDate, true
	}
	return 0, false
}

// CodedChoices returns the choices of the form's status, priority and
// source fields by those names: the codes a ticket can have in each. A
// field the form lacks, or lists without choices, is left out.
func (c *Client) CodedChoices(ctx context.Context) (map[string][]FieldChoice, error) {
	return fromFormFields(ctx, c, "ticket field choices", func(f []*FormField) (map[string][]FieldChoice, error) { return CodedChoicesOf(f), nil })
}

// CodedChoicesOf is CodedChoices of form fields already read.
func CodedChoicesOf(fields []*FormField) map[string][]FieldChoice {
	out := map[string][]FieldChoice{}
	for _, f := range fields {
		if f == nil || len(f.Choices) == 0 {
			continue
		}
		for _, name := range []string{"status", "priority", "source"} {
			if f.Name == name || f.FieldType == "default_"+name {
				out[name] = f.Choices
			}
		}
	}
	return out
}

package sdclient

import (
	"context"
	"errors"
	"iter"
	"time"
)

// ChangesService handles change requests: List, ListAll, Filter,
// FilterAll, Get, Create, Update, Delete, over Change with ChangeRequest
// bodies and ChangeListOptions (crud.go).
type ChangesService struct {
	listing[Change, ChangeListOptions, *ChangeListOptions]
	editing[Change, ChangeRequest]
	deleting
}

// ChangeRequest is the body of POST /changes and PUT /changes/{id}. Only
// set fields are sent. Status, priority, impact, risk and change type codes
// follow the account's change workflow. Creating needs Subject and
// RequesterID or Email.
type ChangeRequest struct {
	Subject          *string        `json:"subject,omitempty"`
	Description      *string        `json:"description,omitempty"`
	RequesterID      *int64         `json:"requester_id,omitempty"`
	Email            *string        `json:"email,omitempty"`
	AgentID          *int64         `json:"agent_id,omitempty"`
	GroupID          *int64         `json:"group_id,omitempty"`
	DepartmentID     *int64         `json:"department_id,omitempty"`
	Priority         *int           `json:"priority,omitempty"`
	Impact           *int           `json:"impact,omitempty"`
	Status           *int           `json:"status,omitempty"`
	Risk             *int           `json:"risk,omitempty"`
	ChangeType       *int           `json:"change_type,omitempty"`
	PlannedStartDate *time.Time     `json:"planned_start_date,omitempty"`
	PlannedEndDate   *time.Time     `json:"planned_end_date,omitempty"`
	Category         *string        `json:"category,omitempty"`
	SubCategory      *string        `json:"sub_category,omitempty"`
	ItemCategory     *string        `json:"item_category,omitempty"`
	WorkspaceID      *int64         `json:"workspace_id,omitempty"`
	CustomFields     map[string]any `json:"custom_fields,omitempty"`
}

// ChangeListOptions are the query parameters of GET /changes.
type ChangeListOptions struct {
	UpdatedSince *time.Time `url:"updated_since,omitempty"`
	OrderBy      string     `url:"order_by,omitempty"`
	OrderType    string     `url:"order_type,omitempty"`
	WorkspaceID  *int64     `url:"workspace_id,omitempty"`
	ListOptions
}

// ChangeFilterPage is one page of GET /changes/filter.
type ChangeFilterPage struct {
	Changes []*Change `json:"changes"`
	// Total is how many changes match over all pages, when the desk says.
	Total int `json:"total"`
}

// Filter reads one page of changes matching a filter expression
// (GET /changes/filter?query="..."), validated and encoded like
// Tickets.Filter.
func (s *ChangesService) Filter(ctx context.Context, query string, opts *FilterOptions) (*ChangeFilterPage, *Response, error) {
	return filterPage[ChangeFilterPage](ctx, s.editing.res.client, "filter changes", "changes/filter", query, opts)
}

// FilterAll walks the pages of a change filter like Tickets.FilterAll.
func (s *ChangesService) FilterAll(ctx context.Context, query string, opts *FilterOptions) iter.Seq2[*Change, error] {
	return walkFilter(opts, "filter changes", func(o *FilterOptions) ([]*Change, int, error) {
		p, _, err := s.Filter(ctx, query, o)
		if err != nil {
			return nil, 0, err
		}
		total := p.Total
		if total == 0 && len(p.Changes) > 0 { // no total: page until short/empty
			total = int(^uint(0) >> 1)
		}
		return p.Changes, total, nil
	}, func(c *Change) int64 { return c.ID })
}

// checkChange says what a body to create a change lacks.
func checkChange(c *ChangeRequest) error {
	if c == nil || c.Subject == nil || *c.Subject == "" {
		return errors.New("a change needs a subject")
	}
	if c.RequesterID == nil && c.Email == nil {
		return errors.New("a change needs requester_id or email")
	}
	return nil
}

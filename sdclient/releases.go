package sdclient

import (
	"context"
	"errors"
	"iter"
	"time"
)

// ReleasesService handles release records.
type ReleasesService service

// ReleaseRequest is the body of POST /releases and PUT /releases/{id}. Only
// set fields are sent. Creating needs Subject and the planned dates.
type ReleaseRequest struct {
	Subject          *string        `json:"subject,omitempty"`
	Description      *string        `json:"description,omitempty"`
	AgentID          *int64         `json:"agent_id,omitempty"`
	GroupID          *int64         `json:"group_id,omitempty"`
	DepartmentID     *int64         `json:"department_id,omitempty"`
	Priority         *int           `json:"priority,omitempty"`
	Status           *int           `json:"status,omitempty"`
	ReleaseType      *int           `json:"release_type,omitempty"`
	PlannedStartDate *time.Time     `json:"planned_start_date,omitempty"`
	PlannedEndDate   *time.Time     `json:"planned_end_date,omitempty"`
	WorkStartDate    *time.Time     `json:"work_start_date,omitempty"`
	WorkEndDate      *time.Time     `json:"work_end_date,omitempty"`
	Category         *string        `json:"category,omitempty"`
	SubCategory      *string        `json:"sub_category,omitempty"`
	ItemCategory     *string        `json:"item_category,omitempty"`
	WorkspaceID      *int64         `json:"workspace_id,omitempty"`
	CustomFields     map[string]any `json:"custom_fields,omitempty"`
}

// List reads one page of releases (GET /releases).
func (s *ReleasesService) List(ctx context.Context, opts *ListOptions) ([]*Release, *Response, error) {
	return list[Release](ctx, s.client, "list releases", "releases", "releases", opts)
}

// ListAll walks every page of releases.
func (s *ReleasesService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Release, error] {
	return listAll(ctx, opts, s.List)
}

// Get reads a release (GET /releases/{id}).
func (s *ReleasesService) Get(ctx context.Context, id int64) (*Release, *Response, error) {
	return getByID[Release](ctx, s.client, "release", "releases", "release", id)
}

// Create creates a release (POST /releases).
func (s *ReleasesService) Create(ctx context.Context, r *ReleaseRequest) (*Release, *Response, error) {
	return createObj[Release](ctx, s.client, "release", "releases", "release", r, func() error {
		if r == nil || r.Subject == nil || *r.Subject == "" {
			return errors.New("a release needs a subject")
		}
		if r.PlannedStartDate == nil || r.PlannedEndDate == nil {
			return errors.New("a release needs planned_start_date and planned_end_date")
		}
		return nil
	})
}

// Update changes the set fields of a release (PUT /releases/{id}).
func (s *ReleasesService) Update(ctx context.Context, id int64, r *ReleaseRequest) (*Release, *Response, error) {
	return updateObj[Release](ctx, s.client, "release", "releases", "release", id, r)
}

// Delete deletes a release (DELETE /releases/{id}, 204).
func (s *ReleasesService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "release", "releases", id)
}

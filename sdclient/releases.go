package sdclient

import (
	"errors"
	"time"
)

// ReleasesService handles release records: List, ListAll, Get, Create,
// Update, Delete, over Release with ReleaseRequest bodies and ListOptions
// (crud.go).
type ReleasesService struct {
	listing[Release, ListOptions, *ListOptions]
	editing[Release, ReleaseRequest]
	deleting
}

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

// checkRelease says what a body to create a release lacks.
func checkRelease(r *ReleaseRequest) error {
	if r == nil || r.Subject == nil || *r.Subject == "" {
		return errors.New("a release needs a subject")
	}
	if r.PlannedStartDate == nil || r.PlannedEndDate == nil {
		return errors.New("a release needs planned_start_date and planned_end_date")
	}
	return nil
}

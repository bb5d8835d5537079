package sdclient

import (
	"errors"
	"time"
)

// ProblemsService handles problem records: List, ListAll, Get, Create,
// Update, Delete, over Problem with ProblemRequest bodies and ListOptions
// (crud.go).
type ProblemsService struct {
	listing[Problem, ListOptions, *ListOptions]
	editing[Problem, ProblemRequest]
	deleting
}

// ProblemRequest is the body of POST /problems and PUT /problems/{id}. Only
// set fields are sent. Creating needs Subject, RequesterID or Email, and
// DueBy.
type ProblemRequest struct {
	Subject      *string        `json:"subject,omitempty"`
	Description  *string        `json:"description,omitempty"`
	RequesterID  *int64         `json:"requester_id,omitempty"`
	Email        *string        `json:"email,omitempty"`
	AgentID      *int64         `json:"agent_id,omitempty"`
	GroupID      *int64         `json:"group_id,omitempty"`
	DepartmentID *int64         `json:"department_id,omitempty"`
	Priority     *int           `json:"priority,omitempty"`
	Status       *int           `json:"status,omitempty"`
	Impact       *int           `json:"impact,omitempty"`
	KnownError   *bool          `json:"known_error,omitempty"`
	DueBy        *time.Time     `json:"due_by,omitempty"`
	Category     *string        `json:"category,omitempty"`
	SubCategory  *string        `json:"sub_category,omitempty"`
	ItemCategory *string        `json:"item_category,omitempty"`
	WorkspaceID  *int64         `json:"workspace_id,omitempty"`
	CustomFields map[string]any `json:"custom_fields,omitempty"`
}

// checkProblem says what a body to create a problem lacks.
func checkProblem(p *ProblemRequest) error {
	if p == nil || p.Subject == nil || *p.Subject == "" {
		return errors.New("a problem needs a subject")
	}
	if p.RequesterID == nil && p.Email == nil {
		return errors.New("a problem needs requester_id or email")
	}
	return nil
}

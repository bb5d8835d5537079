package sdclient

import (
	"context"
	"errors"
	"iter"
	"time"
)

// ProblemsService handles problem records.
type ProblemsService service

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

// List reads one page of problems (GET /problems).
func (s *ProblemsService) List(ctx context.Context, opts *ListOptions) ([]*Problem, *Response, error) {
	return list[Problem](ctx, s.client, "list problems", "problems", "problems", opts)
}

// ListAll walks every page of problems.
func (s *ProblemsService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Problem, error] {
	return listAll(ctx, opts, s.List)
}

// Get reads a problem (GET /problems/{id}).
func (s *ProblemsService) Get(ctx context.Context, id int64) (*Problem, *Response, error) {
	return getByID[Problem](ctx, s.client, "problem", "problems", "problem", id)
}

// Create creates a problem (POST /problems).
func (s *ProblemsService) Create(ctx context.Context, p *ProblemRequest) (*Problem, *Response, error) {
	return createObj[Problem](ctx, s.client, "problem", "problems", "problem", p, func() error {
		if p == nil || p.Subject == nil || *p.Subject == "" {
			return errors.New("a problem needs a subject")
		}
		if p.RequesterID == nil && p.Email == nil {
			return errors.New("a problem needs requester_id or email")
		}
		return nil
	})
}

// Update changes the set fields of a problem (PUT /problems/{id}).
func (s *ProblemsService) Update(ctx context.Context, id int64, p *ProblemRequest) (*Problem, *Response, error) {
	return updateObj[Problem](ctx, s.client, "problem", "problems", "problem", id, p)
}

// Delete deletes a problem (DELETE /problems/{id}, 204).
func (s *ProblemsService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "problem", "problems", id)
}

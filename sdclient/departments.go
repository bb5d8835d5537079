package sdclient

import (
	"context"
	"errors"
	"iter"
)

// DepartmentsService handles departments.
type DepartmentsService service

// DepartmentRequest is the body of POST /departments and
// PUT /departments/{id}. Only set fields are sent. Creating needs Name.
type DepartmentRequest struct {
	Name         *string        `json:"name,omitempty"`
	Description  *string        `json:"description,omitempty"`
	HeadUserID   *int64         `json:"head_user_id,omitempty"`
	PrimeUserID  *int64         `json:"prime_user_id,omitempty"`
	Domains      []string       `json:"domains,omitempty"`
	WorkspaceID  *int64         `json:"workspace_id,omitempty"`
	CustomFields map[string]any `json:"custom_fields,omitempty"`
}

// List reads one page of departments (GET /departments).
func (s *DepartmentsService) List(ctx context.Context, opts *ListOptions) ([]*Department, *Response, error) {
	return list[Department](ctx, s.client, "list departments", "departments", "departments", opts)
}

// ListAll walks every page of departments.
func (s *DepartmentsService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Department, error] {
	return listAll(ctx, opts, s.List)
}

// Get reads a department (GET /departments/{id}).
func (s *DepartmentsService) Get(ctx context.Context, id int64) (*Department, *Response, error) {
	return getByID[Department](ctx, s.client, "department", "departments", "department", id)
}

// Create creates a department (POST /departments).
func (s *DepartmentsService) Create(ctx context.Context, d *DepartmentRequest) (*Department, *Response, error) {
	return createObj[Department](ctx, s.client, "department", "departments", "department", d, func() error {
		if d == nil || d.Name == nil || *d.Name == "" {
			return errors.New("a department needs a name")
		}
		return nil
	})
}

// Update changes the set fields of a department (PUT /departments/{id}).
func (s *DepartmentsService) Update(ctx context.Context, id int64, d *DepartmentRequest) (*Department, *Response, error) {
	return updateObj[Department](ctx, s.client, "department", "departments", "department", id, d)
}

// Delete deletes a department (DELETE /departments/{id}, 204).
func (s *DepartmentsService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "department", "departments", id)
}

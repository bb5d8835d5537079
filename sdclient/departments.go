package sdclient

import (
	"errors"
)

// DepartmentsService handles departments: List, ListAll, Get, Create,
// Update, Delete, over Department with DepartmentRequest bodies and
// ListOptions (crud.go).
type DepartmentsService struct {
	listing[Department, ListOptions, *ListOptions]
	editing[Department, DepartmentRequest]
	deleting
}

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

// checkDepartment says what a body to create a department lacks.
func checkDepartment(d *DepartmentRequest) error {
	if d == nil || d.Name == nil || *d.Name == "" {
		return errors.New("a department needs a name")
	}
	return nil
}

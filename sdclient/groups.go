package sdclient

import (
	"errors"
)

// GroupsService handles agent groups: List, ListAll, Get, Create, Update,
// Delete, over Group with GroupRequest bodies and ListOptions (crud.go).
type GroupsService struct {
	listing[Group, ListOptions, *ListOptions]
	editing[Group, GroupRequest]
	deleting
}

// GroupRequest is the body of POST /groups and PUT /groups/{id}. Only set
// fields are sent; Members replaces the member list. Creating needs Name.
type GroupRequest struct {
	Name          *string `json:"name,omitempty"`
	Description   *string `json:"description,omitempty"`
	EscalateTo    *int64  `json:"escalate_to,omitempty"`
	UnassignedFor *string `json:"unassigned_for,omitempty"`
	WorkspaceID   *int64  `json:"workspace_id,omitempty"`
	Members       []int64 `json:"members,omitempty"`
	Observers     []int64 `json:"observers,omitempty"`
	Leaders       []int64 `json:"leaders,omitempty"`
}

// checkGroup says what a body to create a group lacks.
func checkGroup(g *GroupRequest) error {
	if g == nil || g.Name == nil || *g.Name == "" {
		return errors.New("a group needs a name")
	}
	return nil
}

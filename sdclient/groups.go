package sdclient

import (
	"context"
	"errors"
	"iter"
)

// GroupsService handles agent groups.
type GroupsService service

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

// List reads one page of groups (GET /groups).
func (s *GroupsService) List(ctx context.Context, opts *ListOptions) ([]*Group, *Response, error) {
	return list[Group](ctx, s.client, "list groups", "groups", "groups", opts)
}

// ListAll walks every page of groups.
func (s *GroupsService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Group, error] {
	return listAll(ctx, opts, s.List)
}

// Get reads a group (GET /groups/{id}).
func (s *GroupsService) Get(ctx context.Context, id int64) (*Group, *Response, error) {
	return getByID[Group](ctx, s.client, "group", "groups", "group", id)
}

// Create creates a group (POST /groups).
func (s *GroupsService) Create(ctx context.Context, g *GroupRequest) (*Group, *Response, error) {
	return createObj[Group](ctx, s.client, "group", "groups", "group", g, func() error {
		if g == nil || g.Name == nil || *g.Name == "" {
			return errors.New("a group needs a name")
		}
		return nil
	})
}

// Update changes the set fields of a group (PUT /groups/{id}).
func (s *GroupsService) Update(ctx context.Context, id int64, g *GroupRequest) (*Group, *Response, error) {
	return updateObj[Group](ctx, s.client, "group", "groups", "group", id, g)
}

// Delete deletes a group (DELETE /groups/{id}, 204).
func (s *GroupsService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "group", "groups", id)
}

package sdclient

import (
	"context"
	"errors"
	"iter"
)

// AssetsService handles assets; their path identifier is the display id.
type AssetsService service

// AssetRequest is the body of POST /assets and PUT /assets/{display_id}.
// Only set fields are sent. Creating needs Name and AssetTypeID.
type AssetRequest struct {
	Name         *string        `json:"name,omitempty"`
	AssetTypeID  *int64         `json:"asset_type_id,omitempty"`
	AssetTag     *string        `json:"asset_tag,omitempty"`
	Impact       *string        `json:"impact,omitempty"`
	Description  *string        `json:"description,omitempty"`
	UserID       *int64         `json:"user_id,omitempty"`
	DepartmentID *int64         `json:"department_id,omitempty"`
	AgentID      *int64         `json:"agent_id,omitempty"`
	GroupID      *int64         `json:"group_id,omitempty"`
	WorkspaceID  *int64         `json:"workspace_id,omitempty"`
	TypeFields   map[string]any `json:"type_fields,omitempty"`
}

// AssetListOptions are the query parameters of GET /assets.
type AssetListOptions struct {
	// Include embeds, e.g. "type_fields".
	Include     string `url:"include,omitempty"`
	OrderBy     string `url:"order_by,omitempty"`
	OrderType   string `url:"order_type,omitempty"`
	WorkspaceID *int64 `url:"workspace_id,omitempty"`
	ListOptions
}

// List reads one page of assets (GET /assets).
func (s *AssetsService) List(ctx context.Context, opts *AssetListOptions) ([]*Asset, *Response, error) {
	return list[Asset](ctx, s.client, "list assets", "assets", "assets", opts)
}

// ListAll walks every page of assets.
func (s *AssetsService) ListAll(ctx context.Context, opts *AssetListOptions) iter.Seq2[*Asset, error] {
	return listAll(ctx, opts, s.List)
}

// Create creates an asset (POST /assets).
func (s *AssetsService) Create(ctx context.Context, a *AssetRequest) (*Asset, *Response, error) {
	return createObj[Asset](ctx, s.client, "asset", "assets", "asset", a, func() error {
		if a == nil || a.Name == nil || *a.Name == "" || a.AssetTypeID == nil {
			return errors.New("an asset needs name and asset_type_id")
		}
		return nil
	})
}

// Get reads an asset by display id (GET /assets/{display_id}).
func (s *AssetsService) Get(ctx context.Context, displayID int64) (*Asset, *Response, error) {
	return getByID[Asset](ctx, s.client, "asset", "assets", "asset", displayID)
}

// Update changes the set fields of an asset (PUT /assets/{display_id}).
func (s *AssetsService) Update(ctx context.Context, displayID int64, a *AssetRequest) (*Asset, *Response, error) {
	return updateObj[Asset](ctx, s.client, "asset", "assets", "asset", displayID, a)
}

// Delete deletes an asset (DELETE /assets/{display_id}, 204).
func (s *AssetsService) Delete(ctx context.Context, displayID int64) (*Response, error) {
	return deleteByID(ctx, s.client, "asset", "assets", displayID)
}

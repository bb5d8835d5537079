package sdclient

import (
	"errors"
)

// AssetsService handles assets (List, ListAll, Get, Create, Update,
// Delete); their path identifier is the display id. Its methods (crud.go)
// read and write Asset with AssetRequest bodies and AssetListOptions.
type AssetsService struct {
	listing[Asset, AssetListOptions, *AssetListOptions]
	editing[Asset, AssetRequest]
	deleting
}

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

// checkAsset says what a body to create an asset lacks.
func checkAsset(a *AssetRequest) error {
	if a == nil || a.Name == nil || *a.Name == "" || a.AssetTypeID == nil {
		return errors.New("an asset needs name and asset_type_id")
	}
	return nil
}

package sdclient

import "time"

// Change is a change request (GET /changes/{id}, envelope "change").
type Change struct {
	ID                int64          `json:"id"`
	WorkspaceID       *int64         `json:"workspace_id"`
	Subject           string         `json:"subject"`
	Description       string         `json:"description"`
	DescriptionText   string         `json:"description_text"`
	AgentID           *int64         `json:"agent_id"`
	GroupID           *int64         `json:"group_id"`
	RequesterID       *int64         `json:"requester_id"`
	DepartmentID      *int64         `json:"department_id"`
	Priority          int            `json:"priority"`
	Impact            int            `json:"impact"`
	Status            int            `json:"status"`
	Risk              int            `json:"risk"`
	ChangeType        int            `json:"change_type"`
	ApprovalStatus    *int           `json:"approval_status"`
	PlannedStartDate  *time.Time     `json:"planned_start_date"`
	PlannedEndDate    *time.Time     `json:"planned_end_date"`
	Category          *string        `json:"category"`
	SubCategory       *string        `json:"sub_category"`
	ItemCategory      *string        `json:"item_category"`
	ChangeWindowID    *int64         `json:"change_window_id"`
	AssociatedRelease *int64         `json:"associated_release"`
	CustomFields      map[string]any `json:"custom_fields"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// Problem is a problem record (envelope "problem").
type Problem struct {
	ID               int64          `json:"id"`
	WorkspaceID      *int64         `json:"workspace_id"`
	Subject          string         `json:"subject"`
	Description      string         `json:"description"`
	DescriptionText  string         `json:"description_text"`
	AgentID          *int64         `json:"agent_id"`
	RequesterID      *int64         `json:"requester_id"`
	GroupID          *int64         `json:"group_id"`
	DepartmentID     *int64         `json:"department_id"`
	Priority         int            `json:"priority"`
	Status           int            `json:"status"`
	Impact           int            `json:"impact"`
	KnownError       bool           `json:"known_error"`
	DueBy            *time.Time     `json:"due_by"`
	Category         *string        `json:"category"`
	SubCategory      *string        `json:"sub_category"`
	ItemCategory     *string        `json:"item_category"`
	AssociatedChange *int64         `json:"associated_change"`
	CustomFields     map[string]any `json:"custom_fields"`
	CreatedAt        time.Time      `json:"created_at"`
	UpdatedAt        time.Time      `json:"updated_at"`
}

// Release is a release record (envelope "release").
type Release struct {
	ID                int64          `json:"id"`
	WorkspaceID       *int64         `json:"workspace_id"`
	Subject           string         `json:"subject"`
	Description       string         `json:"description"`
	DescriptionText   string         `json:"description_text"`
	AgentID           *int64         `json:"agent_id"`
	GroupID           *int64         `json:"group_id"`
	DepartmentID      *int64         `json:"department_id"`
	Priority          int            `json:"priority"`
	Status            int            `json:"status"`
	ReleaseType       int            `json:"release_type"`
	PlannedStartDate  *time.Time     `json:"planned_start_date"`
	PlannedEndDate    *time.Time     `json:"planned_end_date"`
	WorkStartDate     *time.Time     `json:"work_start_date"`
	WorkEndDate       *time.Time     `json:"work_end_date"`
	Category          *string        `json:"category"`
	SubCategory       *string        `json:"sub_category"`
	ItemCategory      *string        `json:"item_category"`
	AssociatedAssets  []int64        `json:"associated_assets"`
	AssociatedChanges []int64        `json:"associated_changes"`
	CustomFields      map[string]any `json:"custom_fields"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// SolutionCategory is a knowledge-base category (envelope "category").
type SolutionCategory struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	Description      *string   `json:"description"`
	Position         int       `json:"position"`
	DefaultCategory  bool      `json:"default_category"`
	VisibleInPortals []int64   `json:"visible_in_portals"`
	WorkspaceID      *int64    `json:"workspace_id"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// SolutionFolder is a knowledge-base folder of a category (envelope "folder").
type SolutionFolder struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	Description   *string   `json:"description"`
	CategoryID    int64     `json:"category_id"`
	Position      int       `json:"position"`
	DefaultFolder bool      `json:"default_folder"`
	Visibility    int       `json:"visibility"`
	WorkspaceID   *int64    `json:"workspace_id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// SolutionArticle is a knowledge-base article (envelope "article").
type SolutionArticle struct {
	ID              int64         `json:"id"`
	Title           string        `json:"title"`
	Description     string        `json:"description"`
	DescriptionText string        `json:"description_text"`
	Position        int           `json:"position"`
	ArticleType     int           `json:"article_type"` // 1 permanent, 2 workaround
	FolderID        int64         `json:"folder_id"`
	CategoryID      int64         `json:"category_id"`
	Status          int           `json:"status"` // 1 draft, 2 published
	ApprovalStatus  *int          `json:"approval_status"`
	AgentID         *int64        `json:"agent_id"`
	Views           int           `json:"views"`
	ThumbsUp        int           `json:"thumbs_up"`
	ThumbsDown      int           `json:"thumbs_down"`
	Tags            []string      `json:"tags"`
	Keywords        []string      `json:"keywords"`
	Attachments     []*Attachment `json:"attachments"`
	ReviewDate      *time.Time    `json:"review_date"`
	WorkspaceID     *int64        `json:"workspace_id"`
	CreatedAt       time.Time     `json:"created_at"`
	UpdatedAt       time.Time     `json:"updated_at"`
}

// Product is a product of the asset catalogue (envelope "product").
type Product struct {
	ID                 int64     `json:"id"`
	Name               string    `json:"name"`
	AssetTypeID        *int64    `json:"asset_type_id"`
	Manufacturer       *string   `json:"manufacturer"`
	Status             *string   `json:"status"`
	ModeOfProcurement  *string   `json:"mode_of_procurement"`
	DepreciationTypeID *int64    `json:"depreciation_type_id"`
	Description        *string   `json:"description"`
	DescriptionText    *string   `json:"description_text"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// Vendor is a supplier (envelope "vendor").
type Vendor struct {
	ID               int64          `json:"id"`
	Name             string         `json:"name"`
	Description      *string        `json:"description"`
	PrimaryContactID *int64         `json:"primary_contact_id"`
	Address          *VendorAddress `json:"address"`
	CustomFields     map[string]any `json:"custom_fields"`
	CreatedAt        time.Time      `json:"created_at"`
	UpdatedAt        time.Time      `json:"updated_at"`
}

// VendorAddress is a vendor's postal address.
type VendorAddress struct {
	Line1   *string `json:"line1"`
	City    *string `json:"city"`
	State   *string `json:"state"`
	Country *string `json:"country"`
	Zipcode *string `json:"zipcode"`
}

// TimeEntry is time logged on a ticket (envelope "time_entry"). TimeSpent
// is "hh:mm".
type TimeEntry struct {
	ID           int64          `json:"id"`
	TaskID       *int64         `json:"task_id"`
	AgentID      int64          `json:"agent_id"`
	TimeSpent    string         `json:"time_spent"`
	StartTime    *time.Time     `json:"start_time"`
	ExecutedAt   *time.Time     `json:"executed_at"`
	TimerRunning bool           `json:"timer_running"`
	Billable     bool           `json:"billable"`
	Note         *string        `json:"note"`
	CustomFields map[string]any `json:"custom_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// CannedResponse is a saved reply text (envelope "canned_responses").
type CannedResponse struct {
	ID          int64         `json:"id"`
	Title       string        `json:"title"`
	FolderID    int64         `json:"folder_id"`
	Content     string        `json:"content"`
	ContentHTML string        `json:"content_html"`
	WorkspaceID *int64        `json:"workspace_id"`
	Attachments []*Attachment `json:"attachments"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
}

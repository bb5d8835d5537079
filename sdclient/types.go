package sdclient

import (
	"strings"
	"time"
)

// Ticket status codes that the API fixes. Every other status id, custom ones
// included, is an open status (service-desk API v2, "States and transitions").
const (
	StatusOpen     = 2
	StatusPending  = 3
	StatusResolved = 4
	StatusClosed   = 5
)

// Ticket priority codes.
const (
	PriorityLow    = 1
	PriorityMedium = 2
	PriorityHigh   = 3
	PriorityUrgent = 4
)

// Ticket source codes (the ones the description names).
const (
	SourceEmail    = 1
	SourcePortal   = 2
	SourcePhone    = 3
	SourceChat     = 4
	SourceTeamChat = 10
)

// IsOpenStatus reports whether a status id is an open one: every id but
// Resolved (4) and Closed (5).
func IsOpenStatus(status int) bool { return status != StatusResolved && status != StatusClosed }

// Ticket is a ticket as the desk returns it. Fields the desk may send as null
// are pointers; the embeds (Conversations, Requester, Stats, Assets) are set
// only when asked for with include=.
type Ticket struct {
	ID              int64          `json:"id"`
	WorkspaceID     *int64         `json:"workspace_id"`
	Subject         string         `json:"subject"`
	Description     string         `json:"description"`
	DescriptionText string         `json:"description_text"`
	Status          int            `json:"status"`
	Priority        int            `json:"priority"`
	Source          int            `json:"source"`
	Urgency         *int           `json:"urgency"`
	Impact          *int           `json:"impact"`
	Type            string         `json:"type"`
	RequesterID     int64          `json:"requester_id"`
	RequestedForID  *int64         `json:"requested_for_id"`
	ResponderID     *int64         `json:"responder_id"`
	GroupID         *int64         `json:"group_id"`
	DepartmentID    *int64         `json:"department_id"`
	Category        *string        `json:"category"`
	SubCategory     *string        `json:"sub_category"`
	ItemCategory    *string        `json:"item_category"`
	DueBy           *time.Time     `json:"due_by"`
	FrDueBy         *time.Time     `json:"fr_due_by"`
	IsEscalated     bool           `json:"is_escalated"`
	FrEscalated     bool           `json:"fr_escalated"`
	Spam            bool           `json:"spam"`
	Deleted         bool           `json:"deleted"`
	CCEmails        []string       `json:"cc_emails"`
	FwdEmails       []string       `json:"fwd_emails"`
	ReplyCCEmails   []string       `json:"reply_cc_emails"`
	ToEmails        []string       `json:"to_emails"`
	Tags            []string       `json:"tags"`
	CustomFields    map[string]any `json:"custom_fields"`
	Attachments     []*Attachment  `json:"attachments"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	// EmailConfigID is the mailbox the ticket came through, if any.
	EmailConfigID *int64 `json:"email_config_id"`
	// SLAPolicyID is the SLA policy applied to the ticket.
	SLAPolicyID                *int64  `json:"sla_policy_id"`
	ResolutionNotes            *string `json:"resolution_notes"`
	ResolutionNotesHTML        *string `json:"resolution_notes_html"`
	CreatedWithinBusinessHours bool    `json:"created_within_business_hours"`
	// ApprovalStatus and ApprovalStatusName are the service request's
	// approval state.
	ApprovalStatus     *int    `json:"approval_status"`
	ApprovalStatusName *string `json:"approval_status_name"`

	// Embeds (include=...).
	Conversations  []*Conversation  `json:"conversations,omitempty"`
	Requester      *TicketRequester `json:"requester,omitempty"`
	RequestedFor   *TicketRequester `json:"requested_for,omitempty"`
	Stats          *TicketStats     `json:"stats,omitempty"`
	Problem        *Problem         `json:"problem,omitempty"`
	Assets         []*Asset         `json:"assets,omitempty"`
	RelatedTickets *RelatedTickets  `json:"related_tickets,omitempty"`
}

// RelatedTickets is the embed of include=related_tickets: the ticket's
// parent and children.
type RelatedTickets struct {
	ParentID *int64  `json:"parent_id"`
	ChildIDs []int64 `json:"child_ids"`
}

// TicketRequester is the requester embedded by include=requester.
type TicketRequester struct {
	ID     int64   `json:"id"`
	Name   string  `json:"name"`
	Email  string  `json:"email"`
	Mobile *string `json:"mobile"`
	Phone  *string `json:"phone"`
}

// TicketStats is the embed of include=stats.
type TicketStats struct {
	ClosedAt             *time.Time `json:"closed_at"`
	ResolvedAt           *time.Time `json:"resolved_at"`
	FirstRespondedAt     *time.Time `json:"first_responded_at"`
	AgentRespondedAt     *time.Time `json:"agent_responded_at"`
	RequesterRespondedAt *time.Time `json:"requester_responded_at"`
	StatusUpdatedAt      *time.Time `json:"status_updated_at"`
	PendingSince         *time.Time `json:"pending_since"`
}

// Conversation is a reply or a note on a ticket.
type Conversation struct {
	ID           int64         `json:"id"`
	TicketID     int64         `json:"ticket_id"`
	UserID       int64         `json:"user_id"`
	Body         string        `json:"body"`
	BodyText     string        `json:"body_text"`
	Incoming     bool          `json:"incoming"`
	Private      bool          `json:"private"`
	Source       int           `json:"source"`
	SupportEmail *string       `json:"support_email"`
	FromEmail    *string       `json:"from_email"`
	ToEmails     []string      `json:"to_emails"`
	CCEmails     []string      `json:"cc_emails"`
	BCCEmails    []string      `json:"bcc_emails"`
	Attachments  []*Attachment `json:"attachments"`
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
}

// Attachment is a file attached to a ticket, a conversation, a canned
// response or an article. The desk's examples spell the URL key
// attachment_url (one shows Attachment_url; encoding/json matches keys
// case-insensitively, so both decode).
type Attachment struct {
	ID            int64      `json:"id"`
	Name          string     `json:"name"`
	ContentType   string     `json:"content_type"`
	Size          int64      `json:"size"`
	AttachmentURL string     `json:"attachment_url"`
	CreatedAt     *time.Time `json:"created_at,omitempty"`
	UpdatedAt     *time.Time `json:"updated_at,omitempty"`
}

// Conversation source codes.
const (
	ConversationSourceEmail = 0
	ConversationSourceNote  = 2
)

// Person is what an agent and a requester have alike: who they are, how
// to reach them, where they sit and how the desk shows them times. Each
// embeds it, so its fields read as theirs (a.FirstName).
type Person struct {
	ID                    int64          `json:"id"`
	FirstName             string         `json:"first_name"`
	LastName              *string        `json:"last_name"`
	Active                bool           `json:"active"`
	JobTitle              *string        `json:"job_title"`
	DepartmentIDs         []int64        `json:"department_ids"`
	WorkPhoneNumber       *string        `json:"work_phone_number"`
	MobilePhoneNumber     *string        `json:"mobile_phone_number"`
	ReportingManagerID    *int64         `json:"reporting_manager_id"`
	LocationID            *int64         `json:"location_id"`
	Address               *string        `json:"address"`
	TimeZone              *string        `json:"time_zone"`
	TimeFormat            *string        `json:"time_format"`
	Language              *string        `json:"language"`
	BackgroundInformation *string        `json:"background_information"`
	HasLoggedIn           bool           `json:"has_logged_in"`
	CustomFields          map[string]any `json:"custom_fields"`
	CreatedAt             time.Time      `json:"created_at"`
	UpdatedAt             time.Time      `json:"updated_at"`
	// CanSeeAllTicketsFromAssociatedDepartments lets the person see every
	// ticket of its departments.
	CanSeeAllTicketsFromAssociatedDepartments bool `json:"can_see_all_tickets_from_associated_departments"`
}

// Name is the person's display name: first and last name, trimmed.
func (p *Person) Name() string {
	if p.LastName == nil {
		return strings.TrimSpace(p.FirstName)
	}
	return strings.TrimSpace(p.FirstName + " " + *p.LastName)
}

// Agent is a desk agent.
type Agent struct {
	Person
	Email                     string      `json:"email"`
	Occasional                bool        `json:"occasional"`
	MemberOf                  []int64     `json:"member_of"`
	ObserverOf                []int64     `json:"observer_of"`
	Roles                     []AgentRole `json:"roles"`
	WorkspaceIDs              []int64     `json:"workspace_ids"`
	LastLoginAt               *time.Time  `json:"last_login_at"`
	ScoreboardLevelID         *int64      `json:"scoreboard_level_id"`
	MemberOfPendingApproval   []int64     `json:"member_of_pending_approval"`
	ObserverOfPendingApproval []int64     `json:"observer_of_pending_approval"`
}

// AgentRole is one role assignment of an agent.
type AgentRole struct {
	RoleID          int64   `json:"role_id"`
	AssignmentScope string  `json:"assignment_scope"`
	Groups          []int64 `json:"groups"`
}

// Requester is a person who raises tickets. Note primary_email, not email.
type Requester struct {
	Person
	IsAgent         bool     `json:"is_agent"`
	PrimaryEmail    *string  `json:"primary_email"`
	SecondaryEmails []string `json:"secondary_emails"`
}

// Group is an agent group.
type Group struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	Description   *string   `json:"description"`
	EscalateTo    *int64    `json:"escalate_to"`
	UnassignedFor *string   `json:"unassigned_for"`
	WorkspaceID   *int64    `json:"workspace_id"`
	Members       []int64   `json:"members"`
	Observers     []int64   `json:"observers"`
	Leaders       []int64   `json:"leaders"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`

	BusinessHoursID          *int64  `json:"business_hours_id"`
	AutoTicketAssign         bool    `json:"auto_ticket_assign"`
	Restricted               bool    `json:"restricted"`
	ApprovalRequired         bool    `json:"approval_required"`
	MembersPendingApproval   []int64 `json:"members_pending_approval"`
	ObserversPendingApproval []int64 `json:"observers_pending_approval"`
	LeadersPendingApproval   []int64 `json:"leaders_pending_approval"`
}

// Department is a department of the organisation.
type Department struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	Description  *string        `json:"description"`
	HeadUserID   *int64         `json:"head_user_id"`
	PrimeUserID  *int64         `json:"prime_user_id"`
	Domains      []string       `json:"domains"`
	WorkspaceID  *int64         `json:"workspace_id"`
	CustomFields map[string]any `json:"custom_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// Asset is an asset; its path identifier is DisplayID.
type Asset struct {
	ID           int64          `json:"id"`
	DisplayID    int64          `json:"display_id"`
	Name         string         `json:"name"`
	Description  *string        `json:"description"`
	AssetTypeID  *int64         `json:"asset_type_id"`
	AssetTag     *string        `json:"asset_tag"`
	Impact       *string        `json:"impact"`
	UsageType    *string        `json:"usage_type"`
	UserID       *int64         `json:"user_id"`
	LocationID   *int64         `json:"location_id"`
	DepartmentID *int64         `json:"department_id"`
	AgentID      *int64         `json:"agent_id"`
	GroupID      *int64         `json:"group_id"`
	AssignedOn   *time.Time     `json:"assigned_on"`
	WorkspaceID  *int64         `json:"workspace_id"`
	AuthorType   *string        `json:"author_type"`
	TypeFields   map[string]any `json:"type_fields,omitempty"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// FormField is one entry of GET /ticket_form_fields (envelope "ticket_fields").
type FormField struct {
	ID           int64   `json:"id"`
	Name         string  `json:"name"`
	Label        string  `json:"label"`
	Description  *string `json:"description"`
	FieldType    string  `json:"field_type"`
	Position     int     `json:"position"`
	DefaultField bool    `json:"default_field"`
	// What the portal shows requesters, and when the field is required.
	RequiredForClosure   bool    `json:"required_for_closure"`
	RequiredForAgents    bool    `json:"required_for_agents"`
	RequiredForCustomers bool    `json:"required_for_customers"`
	CustomersCanEdit     bool    `json:"customers_can_edit"`
	LabelForCustomers    *string `json:"label_for_customers"`
	DisplayedToCustomers bool    `json:"displayed_to_customers"`
	// BelongsToSection and Sections place the field in dynamic sections.
	BelongsToSection bool          `json:"belongs_to_section"`
	Sections         []any         `json:"sections"`
	Choices          []FieldChoice `json:"choices"`
	NestedFields     []any         `json:"nested_fields"`
	WorkspaceID      *int64        `json:"workspace_id"`
	CreatedAt        time.Time     `json:"created_at"`
	UpdatedAt        time.Time     `json:"updated_at"`
}

// FieldChoice is one choice of a form field; for the status field ID is the
// status id and Value its agent-facing name.
type FieldChoice struct {
	ID                    int64  `json:"id"`
	Value                 string `json:"value"`
	RequesterDisplayValue string `json:"requester_display_value,omitempty"`
	DisplayID             int64  `json:"display_id,omitempty"`
}

// TicketUpdate is the body of PUT /tickets/{id}. Only the fields that are set
// (non-nil) are sent, so an update never overwrites a field by accident with
// a zero value. ResponderID and GroupID pointing at 0 are sent as null, which
// unassigns the ticket or clears its group. Tags replaces the whole list.
type TicketUpdate struct {
	Subject      *string        `json:"subject,omitempty"`
	Description  *string        `json:"description,omitempty"`
	Status       *int           `json:"status,omitempty"`
	Priority     *int           `json:"priority,omitempty"`
	Source       *int           `json:"source,omitempty"`
	Urgency      *int           `json:"urgency,omitempty"`
	Impact       *int           `json:"impact,omitempty"`
	Type         *string        `json:"type,omitempty"`
	GroupID      *int64         `json:"group_id,omitempty"`
	ResponderID  *int64         `json:"responder_id,omitempty"`
	DepartmentID *int64         `json:"department_id,omitempty"`
	Category     *string        `json:"category,omitempty"`
	SubCategory  *string        `json:"sub_category,omitempty"`
	ItemCategory *string        `json:"item_category,omitempty"`
	DueBy        *time.Time     `json:"due_by,omitempty"`
	FrDueBy      *time.Time     `json:"fr_due_by,omitempty"`
	Tags         *[]string      `json:"tags,omitempty"`
	CustomFields map[string]any `json:"custom_fields,omitempty"`
}

// Ptr returns a pointer to v; handy for building TicketUpdate values.
func Ptr[T any](v T) *T { return &v }

// ServiceRecord is what a change, a problem and a release have alike:
// what it is about, who handles it, how urgent it is, how it is filed and
// when it changed. Each embeds it, so its fields read as theirs (c.ID).
type ServiceRecord struct {
	ID              int64          `json:"id"`
	WorkspaceID     *int64         `json:"workspace_id"`
	Subject         string         `json:"subject"`
	Description     string         `json:"description"`
	DescriptionText string         `json:"description_text"`
	AgentID         *int64         `json:"agent_id"`
	GroupID         *int64         `json:"group_id"`
	DepartmentID    *int64         `json:"department_id"`
	Priority        int            `json:"priority"`
	Status          int            `json:"status"`
	Category        *string        `json:"category"`
	SubCategory     *string        `json:"sub_category"`
	ItemCategory    *string        `json:"item_category"`
	CustomFields    map[string]any `json:"custom_fields"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// Change is a change request (GET /changes/{id}, envelope "change").
type Change struct {
	ServiceRecord
	RequesterID       *int64     `json:"requester_id"`
	Impact            int        `json:"impact"`
	Risk              int        `json:"risk"`
	ChangeType        int        `json:"change_type"`
	ApprovalStatus    *int       `json:"approval_status"`
	PlannedStartDate  *time.Time `json:"planned_start_date"`
	PlannedEndDate    *time.Time `json:"planned_end_date"`
	ChangeWindowID    *int64     `json:"change_window_id"`
	AssociatedRelease *int64     `json:"associated_release"`
}

// Problem is a problem record (envelope "problem").
type Problem struct {
	ServiceRecord
	RequesterID      *int64     `json:"requester_id"`
	Impact           int        `json:"impact"`
	KnownError       bool       `json:"known_error"`
	DueBy            *time.Time `json:"due_by"`
	AssociatedChange *int64     `json:"associated_change"`
}

// Release is a release record (envelope "release").
type Release struct {
	ServiceRecord
	ReleaseType       int        `json:"release_type"`
	PlannedStartDate  *time.Time `json:"planned_start_date"`
	PlannedEndDate    *time.Time `json:"planned_end_date"`
	WorkStartDate     *time.Time `json:"work_start_date"`
	WorkEndDate       *time.Time `json:"work_end_date"`
	AssociatedAssets  []int64    `json:"associated_assets"`
	AssociatedChanges []int64    `json:"associated_changes"`
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

// Workspace is one of the account's workspaces (envelope "workspace"):
// tickets, agents and groups belong to one.
type Workspace struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Primary bool   `json:"primary"`
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

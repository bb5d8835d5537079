package sdclient

import "time"

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

// Agent is a desk agent.
type Agent struct {
	ID            int64          `json:"id"`
	FirstName     string         `json:"first_name"`
	LastName      *string        `json:"last_name"`
	Email         string         `json:"email"`
	Occasional    bool           `json:"occasional"`
	Active        bool           `json:"active"`
	JobTitle      *string        `json:"job_title"`
	DepartmentIDs []int64        `json:"department_ids"`
	TimeZone      *string        `json:"time_zone"`
	Language      *string        `json:"language"`
	MemberOf      []int64        `json:"member_of"`
	ObserverOf    []int64        `json:"observer_of"`
	Roles         []AgentRole    `json:"roles"`
	WorkspaceIDs  []int64        `json:"workspace_ids"`
	CustomFields  map[string]any `json:"custom_fields"`
	LastLoginAt   *time.Time     `json:"last_login_at"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`

	WorkPhoneNumber       *string `json:"work_phone_number"`
	MobilePhoneNumber     *string `json:"mobile_phone_number"`
	ReportingManagerID    *int64  `json:"reporting_manager_id"`
	LocationID            *int64  `json:"location_id"`
	Address               *string `json:"address"`
	TimeFormat            *string `json:"time_format"`
	BackgroundInformation *string `json:"background_information"`
	ScoreboardLevelID     *int64  `json:"scoreboard_level_id"`
	HasLoggedIn           bool    `json:"has_logged_in"`
	// CanSeeAllTicketsFromAssociatedDepartments lets the agent see every
	// ticket of its departments.
	CanSeeAllTicketsFromAssociatedDepartments bool    `json:"can_see_all_tickets_from_associated_departments"`
	MemberOfPendingApproval                   []int64 `json:"member_of_pending_approval"`
	ObserverOfPendingApproval                 []int64 `json:"observer_of_pending_approval"`
}

// AgentRole is one role assignment of an agent.
type AgentRole struct {
	RoleID          int64   `json:"role_id"`
	AssignmentScope string  `json:"assignment_scope"`
	Groups          []int64 `json:"groups"`
}

// Name is the agent's display name.
func (a *Agent) Name() string {
	if a.LastName != nil && *a.LastName != "" {
		return a.FirstName + " " + *a.LastName
	}
	return a.FirstName
}

// Requester is a person who raises tickets. Note primary_email, not email.
type Requester struct {
	ID              int64          `json:"id"`
	IsAgent         bool           `json:"is_agent"`
	FirstName       string         `json:"first_name"`
	LastName        *string        `json:"last_name"`
	JobTitle        *string        `json:"job_title"`
	PrimaryEmail    *string        `json:"primary_email"`
	SecondaryEmails []string       `json:"secondary_emails"`
	DepartmentIDs   []int64        `json:"department_ids"`
	Active          bool           `json:"active"`
	CustomFields    map[string]any `json:"custom_fields"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`

	WorkPhoneNumber       *string `json:"work_phone_number"`
	MobilePhoneNumber     *string `json:"mobile_phone_number"`
	ReportingManagerID    *int64  `json:"reporting_manager_id"`
	LocationID            *int64  `json:"location_id"`
	Address               *string `json:"address"`
	TimeZone              *string `json:"time_zone"`
	TimeFormat            *string `json:"time_format"`
	Language              *string `json:"language"`
	BackgroundInformation *string `json:"background_information"`
	HasLoggedIn           bool    `json:"has_logged_in"`
	// CanSeeAllTicketsFromAssociatedDepartments lets the requester see every
	// ticket of its departments.
	CanSeeAllTicketsFromAssociatedDepartments bool `json:"can_see_all_tickets_from_associated_departments"`
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

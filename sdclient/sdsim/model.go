package sdsim

import (
	"encoding/json"
	"html"
	"strings"
	"time"
)

// Ticket is the simulator's ticket, shaped for seeding from Go: a zero id, an
// empty string or a zero time means "no value" and is sent as JSON null, the
// way the real desk does (fields are never omitted).
type Ticket struct {
	ID             int64
	WorkspaceID    int64
	Subject        string
	Description    string // HTML
	Status         int
	Priority       int
	Source         int
	Urgency        int // 0 = null
	Impact         int // 0 = null
	Type           string
	RequesterID    int64
	RequestedForID int64
	ResponderID    int64 // 0 = unassigned
	GroupID        int64
	DepartmentID   int64
	Category       string
	SubCategory    string
	ItemCategory   string
	DueBy          time.Time
	FrDueBy        time.Time
	IsEscalated    bool
	FrEscalated    bool
	Spam           bool
	Deleted        bool
	CCEmails       []string
	Tags           []string
	CustomFields   map[string]any
	CreatedAt      time.Time
	UpdatedAt      time.Time

	// Not part of the ticket's JSON; they feed the include= embeds, the list
	// presets and the stats.
	ProblemID        int64   // include=problem
	AssetDisplayIDs  []int64 // include=assets
	ParentID         int64   // include=related_tickets
	ChildIDs         []int64 // include=related_tickets
	WatcherIDs       []int64 // filter=watching
	FirstRespondedAt time.Time
	ResolvedAt       time.Time
	ClosedAt         time.Time
}

func (t *Ticket) clone() *Ticket {
	c := *t
	c.CCEmails = cloneSlice(t.CCEmails)
	c.Tags = cloneSlice(t.Tags)
	c.AssetDisplayIDs = cloneSlice(t.AssetDisplayIDs)
	c.ChildIDs = cloneSlice(t.ChildIDs)
	c.WatcherIDs = cloneSlice(t.WatcherIDs)
	if t.CustomFields != nil {
		c.CustomFields = make(map[string]any, len(t.CustomFields))
		for k, v := range t.CustomFields {
			c.CustomFields[k] = v
		}
	}
	return &c
}

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// Conversation is a reply (Source 0, public) or a note (Source 2) on a ticket.
// Empty SupportEmail/FromEmail and a nil BCCEmails are sent as null.
type Conversation struct {
	ID           int64
	TicketID     int64
	UserID       int64
	Body         string // HTML
	Incoming     bool
	Private      bool
	Source       int
	SupportEmail string
	FromEmail    string
	ToEmails     []string
	CCEmails     []string
	BCCEmails    []string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Conversation sources used by the simulator (the real API's codes).
const (
	ConversationSourceReply = 0
	ConversationSourceNote  = 2
)

// AgentRole is one role assignment of an agent.
type AgentRole struct {
	RoleID          int64   `json:"role_id"`
	AssignmentScope string  `json:"assignment_scope"`
	Groups          []int64 `json:"groups"`
}

// Agent is a desk agent. ReadOnly is the simulator's stand-in for a view-only
// role: every write made with this agent's key is answered 403.
type Agent struct {
	ID                 int64          `json:"id"`
	FirstName          string         `json:"first_name"`
	LastName           string         `json:"last_name"`
	Email              string         `json:"email"`
	Occasional         bool           `json:"occasional"`
	Active             bool           `json:"active"`
	JobTitle           *string        `json:"job_title"`
	WorkPhoneNumber    *string        `json:"work_phone_number"`
	MobilePhoneNumber  *string        `json:"mobile_phone_number"`
	DepartmentIDs      []int64        `json:"department_ids"`
	ReportingManagerID *int64         `json:"reporting_manager_id"`
	LocationID         *int64         `json:"location_id"`
	TimeZone           string         `json:"time_zone"`
	TimeFormat         string         `json:"time_format"`
	Language           string         `json:"language"`
	Address            *string        `json:"address"`
	BackgroundInfo     string         `json:"background_information"`
	ScoreboardLevelID  *int64         `json:"scoreboard_level_id"`
	CanSeeAllTickets   bool           `json:"can_see_all_tickets_from_associated_departments"`
	MemberOf           []int64        `json:"member_of"`
	ObserverOf         []int64        `json:"observer_of"`
	MemberOfPending    []int64        `json:"member_of_pending_approval"`
	ObserverOfPending  []int64        `json:"observer_of_pending_approval"`
	Roles              []AgentRole    `json:"roles"`
	WorkspaceIDs       []int64        `json:"workspace_ids"`
	CustomFields       map[string]any `json:"custom_fields"`
	HasLoggedIn        bool           `json:"has_logged_in"`
	LastLoginAt        *time.Time     `json:"last_login_at"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`

	ReadOnly bool `json:"-"`
}

// Name is the agent's display name.
func (a *Agent) Name() string { return strings.TrimSpace(a.FirstName + " " + a.LastName) }

// Requester is a person who raises tickets (note primary_email, not email).
type Requester struct {
	ID                 int64          `json:"id"`
	IsAgent            bool           `json:"is_agent"`
	FirstName          string         `json:"first_name"`
	LastName           string         `json:"last_name"`
	JobTitle           *string        `json:"job_title"`
	PrimaryEmail       string         `json:"primary_email"`
	SecondaryEmails    []string       `json:"secondary_emails"`
	WorkPhoneNumber    *string        `json:"work_phone_number"`
	MobilePhoneNumber  *string        `json:"mobile_phone_number"`
	DepartmentIDs      []int64        `json:"department_ids"`
	CanSeeAllTickets   bool           `json:"can_see_all_tickets_from_associated_departments"`
	ReportingManagerID *int64         `json:"reporting_manager_id"`
	Address            *string        `json:"address"`
	LocationID         *int64         `json:"location_id"`
	TimeZone           string         `json:"time_zone"`
	TimeFormat         string         `json:"time_format"`
	Language           string         `json:"language"`
	BackgroundInfo     string         `json:"background_information"`
	Active             bool           `json:"active"`
	HasLoggedIn        bool           `json:"has_logged_in"`
	CustomFields       map[string]any `json:"custom_fields"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`
}

// Name is the requester's display name.
func (r *Requester) Name() string { return strings.TrimSpace(r.FirstName + " " + r.LastName) }

// Group is an agent group.
type Group struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	Description      *string   `json:"description"`
	EscalateTo       *int64    `json:"escalate_to"`
	UnassignedFor    *string   `json:"unassigned_for"`
	BusinessHoursID  *int64    `json:"business_hours_id"`
	AutoTicketAssign bool      `json:"auto_ticket_assign"`
	Restricted       bool      `json:"restricted"`
	ApprovalRequired bool      `json:"approval_required"`
	WorkspaceID      int64     `json:"workspace_id"`
	Members          []int64   `json:"members"`
	Observers        []int64   `json:"observers"`
	Leaders          []int64   `json:"leaders"`
	MembersPending   []int64   `json:"members_pending_approval"`
	ObserversPending []int64   `json:"observers_pending_approval"`
	LeadersPending   []int64   `json:"leaders_pending_approval"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// Department is a department of the organisation.
type Department struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	Description  *string        `json:"description"`
	HeadUserID   *int64         `json:"head_user_id"`
	PrimeUserID  *int64         `json:"prime_user_id"`
	Domains      []string       `json:"domains"`
	WorkspaceID  int64          `json:"workspace_id"`
	CustomFields map[string]any `json:"custom_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// Asset is a configuration item; its path identifier is DisplayID.
type Asset struct {
	ID           int64          `json:"id"`
	DisplayID    int64          `json:"display_id"`
	Name         string         `json:"name"`
	Description  *string        `json:"description"`
	AssetTypeID  int64          `json:"asset_type_id"`
	AssetTag     *string        `json:"asset_tag"`
	Impact       string         `json:"impact"`
	UsageType    string         `json:"usage_type"`
	UserID       *int64         `json:"user_id"`
	LocationID   *int64         `json:"location_id"`
	DepartmentID *int64         `json:"department_id"`
	AgentID      *int64         `json:"agent_id"`
	GroupID      *int64         `json:"group_id"`
	AssignedOn   *time.Time     `json:"assigned_on"`
	WorkspaceID  int64          `json:"workspace_id"`
	AuthorType   string         `json:"author_type"`
	TypeFields   map[string]any `json:"type_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// Change is a change request. Status codes (real API): 1 Open, 2 Planning,
// 3 Awaiting Approval, 4 Pending Release, 5 Pending Review, 6 Closed.
type Change struct {
	ID               int64      `json:"id"`
	WorkspaceID      int64      `json:"workspace_id"`
	Subject          string     `json:"subject"`
	Description      string     `json:"description"`
	RequesterID      int64      `json:"requester_id"`
	AgentID          *int64     `json:"agent_id"`
	GroupID          *int64     `json:"group_id"`
	DepartmentID     *int64     `json:"department_id"`
	Priority         int        `json:"priority"`
	Impact           int        `json:"impact"`
	Status           int        `json:"status"`
	Risk             int        `json:"risk"`
	ChangeType       int        `json:"change_type"`
	ApprovalStatus   *int       `json:"approval_status"`
	PlannedStartDate *time.Time `json:"planned_start_date"`
	PlannedEndDate   *time.Time `json:"planned_end_date"`
	Category         *string    `json:"category"`
	SubCategory      *string    `json:"sub_category"`
	ItemCategory     *string    `json:"item_category"`
	// AssociatedRelease is the release the change belongs to, if any.
	AssociatedRelease *int64         `json:"associated_release"`
	CustomFields      map[string]any `json:"custom_fields"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	// DescriptionText is Description without its markup, made when the
	// change is stored (derive).
	DescriptionText string `json:"description_text"`
}

// Problem is a problem record. Status codes: 1 Open, 2 Change Requested, 3 Closed.
type Problem struct {
	ID           int64          `json:"id"`
	WorkspaceID  int64          `json:"workspace_id"`
	Subject      string         `json:"subject"`
	Description  string         `json:"description"`
	RequesterID  int64          `json:"requester_id"`
	AgentID      *int64         `json:"agent_id"`
	GroupID      *int64         `json:"group_id"`
	DepartmentID *int64         `json:"department_id"`
	Priority     int            `json:"priority"`
	Impact       int            `json:"impact"`
	Status       int            `json:"status"`
	DueBy        *time.Time     `json:"due_by"`
	KnownError   bool           `json:"known_error"`
	Category     *string        `json:"category"`
	SubCategory  *string        `json:"sub_category"`
	ItemCategory *string        `json:"item_category"`
	CustomFields map[string]any `json:"custom_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	// DescriptionText is Description without its markup, made when stored
	// (derive).
	DescriptionText string `json:"description_text"`
}

// Release is a release record. Status codes: 1 Open, 2 On hold, 3 In
// progress, 4 Incomplete, 5 Completed; release_type 1 minor, 2 standard,
// 3 major, 4 emergency.
type Release struct {
	ID               int64      `json:"id"`
	WorkspaceID      int64      `json:"workspace_id"`
	Subject          string     `json:"subject"`
	Description      string     `json:"description"`
	AgentID          *int64     `json:"agent_id"`
	GroupID          *int64     `json:"group_id"`
	DepartmentID     *int64     `json:"department_id"`
	Priority         int        `json:"priority"`
	Status           int        `json:"status"`
	ReleaseType      int        `json:"release_type"`
	PlannedStartDate *time.Time `json:"planned_start_date"`
	PlannedEndDate   *time.Time `json:"planned_end_date"`
	WorkStartDate    *time.Time `json:"work_start_date"`
	WorkEndDate      *time.Time `json:"work_end_date"`
	Category         *string    `json:"category"`
	SubCategory      *string    `json:"sub_category"`
	ItemCategory     *string    `json:"item_category"`
	// AssociatedAssets and AssociatedChanges are what the release ships.
	AssociatedAssets  []int64        `json:"associated_assets"`
	AssociatedChanges []int64        `json:"associated_changes"`
	CustomFields      map[string]any `json:"custom_fields"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	// DescriptionText is Description without its markup, made when stored
	// (derive).
	DescriptionText string `json:"description_text"`
}

// Workspace is a workspace of the account; exactly one is the primary one,
// searched when a request names none.
type Workspace struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Primary bool   `json:"primary"`
}

// TimeEntry is time logged on a ticket (GET /tickets/{id}/time_entries).
type TimeEntry struct {
	ID           int64          `json:"id"`
	TicketID     int64          `json:"-"`
	AgentID      int64          `json:"agent_id"`
	TimeSpent    string         `json:"time_spent"` // "hh:mm"
	Note         string         `json:"note"`
	Billable     bool           `json:"billable"`
	TimerRunning bool           `json:"timer_running"`
	TaskID       *int64         `json:"task_id"`
	StartTime    time.Time      `json:"start_time"`
	ExecutedAt   time.Time      `json:"executed_at"`
	CustomFields map[string]any `json:"custom_fields"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// CustomField declares a ticket custom field: it appears in the form fields,
// may be set in custom_fields and may be filtered on by name.
type CustomField struct {
	Name    string
	Label   string
	Kind    FieldKind
	Choices []string // for dropdowns (Kind == FieldString)
}

// FieldKind is the type of a custom field.
type FieldKind int

// Custom field kinds.
const (
	FieldString FieldKind = iota
	FieldNumber
	FieldBool
	FieldDate
)

// ---- wire shapes -------------------------------------------------------

// stamp is a timestamp in the desk's wire format (UTC, seconds, "Z").
type stamp time.Time

// MarshalJSON writes the time in the desk's form.
func (s stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(s).UTC().Format(timeLayout) + `"`), nil
}

const timeLayout = "2006-01-02T15:04:05Z"

func ts(t time.Time) *stamp {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}

// orNull points at v, or is nil (JSON null) when v is the zero value: an
// unset id, code or text.
func orNull[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type ticketWire struct {
	ID                         int64          `json:"id"`
	WorkspaceID                int64          `json:"workspace_id"`
	Subject                    string         `json:"subject"`
	Description                string         `json:"description"`
	DescriptionText            string         `json:"description_text"`
	Status                     int            `json:"status"`
	Priority                   int            `json:"priority"`
	Source                     int            `json:"source"`
	Urgency                    *int           `json:"urgency"`
	Impact                     *int           `json:"impact"`
	Type                       string         `json:"type"`
	RequesterID                int64          `json:"requester_id"`
	RequestedForID             *int64         `json:"requested_for_id"`
	ResponderID                *int64         `json:"responder_id"`
	GroupID                    *int64         `json:"group_id"`
	DepartmentID               *int64         `json:"department_id"`
	EmailConfigID              *int64         `json:"email_config_id"`
	SLAPolicyID                *int64         `json:"sla_policy_id"`
	Category                   *string        `json:"category"`
	SubCategory                *string        `json:"sub_category"`
	ItemCategory               *string        `json:"item_category"`
	DueBy                      *stamp         `json:"due_by"`
	FrDueBy                    *stamp         `json:"fr_due_by"`
	IsEscalated                bool           `json:"is_escalated"`
	FrEscalated                bool           `json:"fr_escalated"`
	Spam                       bool           `json:"spam"`
	Deleted                    bool           `json:"deleted"`
	CCEmails                   []string       `json:"cc_emails"`
	FwdEmails                  []string       `json:"fwd_emails"`
	ReplyCCEmails              []string       `json:"reply_cc_emails"`
	ToEmails                   []string       `json:"to_emails"`
	CustomFields               map[string]any `json:"custom_fields"`
	Attachments                []any          `json:"attachments"`
	Tags                       []string       `json:"tags"`
	ResolutionNotes            *string        `json:"resolution_notes"`
	ResolutionNotesHTML        *string        `json:"resolution_notes_html"`
	CreatedWithinBusinessHours bool           `json:"created_within_business_hours"`
	ApprovalStatus             int            `json:"approval_status"`
	ApprovalStatusName         string         `json:"approval_status_name"`
	CreatedAt                  stamp          `json:"created_at"`
	UpdatedAt                  stamp          `json:"updated_at"`
	embeds
}

// embeds are the include= parts; each is present only when asked for.
type embeds struct {
	Conversations  *[]conversationWire `json:"conversations,omitempty"`
	Requester      *json.RawMessage    `json:"requester,omitempty"`
	RequestedFor   *json.RawMessage    `json:"requested_for,omitempty"`
	Stats          *statsWire          `json:"stats,omitempty"`
	Problem        *json.RawMessage    `json:"problem,omitempty"`
	Assets         *[]*Asset           `json:"assets,omitempty"`
	RelatedTickets *relatedWire        `json:"related_tickets,omitempty"`
}

type statsWire struct {
	AgentRespondedAt     *stamp `json:"agent_responded_at"`
	RequesterRespondedAt *stamp `json:"requester_responded_at"`
	FirstRespondedAt     *stamp `json:"first_responded_at"`
	StatusUpdatedAt      *stamp `json:"status_updated_at"`
	ResolvedAt           *stamp `json:"resolved_at"`
	ClosedAt             *stamp `json:"closed_at"`
	PendingSince         *stamp `json:"pending_since"`
}

type relatedWire struct {
	ParentID *int64  `json:"parent_id"`
	ChildIDs []int64 `json:"child_ids"`
}

type personWire struct {
	ID     int64   `json:"id"`
	Name   string  `json:"name"`
	Email  string  `json:"email"`
	Mobile *string `json:"mobile"`
	Phone  *string `json:"phone"`
}

func (t *Ticket) wire() *ticketWire {
	w := &ticketWire{
		ID:                 t.ID,
		WorkspaceID:        t.WorkspaceID,
		Subject:            t.Subject,
		Description:        t.Description,
		DescriptionText:    stripTags(t.Description),
		Status:             t.Status,
		Priority:           t.Priority,
		Source:             t.Source,
		Urgency:            orNull(t.Urgency),
		Impact:             orNull(t.Impact),
		Type:               t.Type,
		RequesterID:        t.RequesterID,
		RequestedForID:     orNull(t.RequestedForID),
		ResponderID:        orNull(t.ResponderID),
		GroupID:            orNull(t.GroupID),
		DepartmentID:       orNull(t.DepartmentID),
		Category:           orNull(t.Category),
		SubCategory:        orNull(t.SubCategory),
		ItemCategory:       orNull(t.ItemCategory),
		DueBy:              ts(t.DueBy),
		FrDueBy:            ts(t.FrDueBy),
		IsEscalated:        t.IsEscalated,
		FrEscalated:        t.FrEscalated,
		Spam:               t.Spam,
		Deleted:            t.Deleted,
		CCEmails:           nonNil(t.CCEmails),
		FwdEmails:          []string{},
		ReplyCCEmails:      nonNil(t.CCEmails),
		CustomFields:       t.CustomFields,
		Attachments:        []any{},
		Tags:               nonNil(t.Tags),
		ApprovalStatus:     4,
		ApprovalStatusName: "Not Requested",
		CreatedAt:          stamp(t.CreatedAt),
		UpdatedAt:          stamp(t.UpdatedAt),
	}
	if w.CustomFields == nil {
		w.CustomFields = map[string]any{}
	}
	return w
}

type conversationWire struct {
	ID           int64    `json:"id"`
	TicketID     int64    `json:"ticket_id"`
	UserID       int64    `json:"user_id"`
	Body         string   `json:"body"`
	BodyText     string   `json:"body_text"`
	Incoming     bool     `json:"incoming"`
	Private      bool     `json:"private"`
	Source       int      `json:"source"`
	SupportEmail *string  `json:"support_email"`
	FromEmail    *string  `json:"from_email"`
	ToEmails     []string `json:"to_emails"`
	CCEmails     []string `json:"cc_emails"`
	BCCEmails    []string `json:"bcc_emails"`
	Attachments  []any    `json:"attachments"`
	CreatedAt    stamp    `json:"created_at"`
	UpdatedAt    stamp    `json:"updated_at"`
}

func (c *Conversation) wire() conversationWire {
	return conversationWire{
		ID:           c.ID,
		TicketID:     c.TicketID,
		UserID:       c.UserID,
		Body:         c.Body,
		BodyText:     stripTags(c.Body),
		Incoming:     c.Incoming,
		Private:      c.Private,
		Source:       c.Source,
		SupportEmail: orNull(c.SupportEmail),
		FromEmail:    orNull(c.FromEmail),
		ToEmails:     nonNil(c.ToEmails),
		CCEmails:     nonNil(c.CCEmails),
		BCCEmails:    c.BCCEmails,
		Attachments:  []any{},
		CreatedAt:    stamp(c.CreatedAt),
		UpdatedAt:    stamp(c.UpdatedAt),
	}
}

// stripTags turns an HTML body into the plain text the desk returns in
// description_text / body_text.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	in, gap := false, false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in, gap = false, true
		case !in:
			if gap && b.Len() > 0 && r != ' ' && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
			gap = false
			b.WriteRune(r)
		}
	}
	// Every character reference, named or numeric: html.EscapeString
	// writes a quote as &#34;, not &quot;.
	return strings.TrimSpace(html.UnescapeString(strings.ReplaceAll(b.String(), "&nbsp;", " ")))
}

// The catalogue's wire types (catalog.go serves them).

type solutionCategory struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	Description      string    `json:"description"`
	Position         int       `json:"position"`
	DefaultCategory  bool      `json:"default_category"`
	VisibleInPortals []int64   `json:"visible_in_portals"`
	WorkspaceID      int64     `json:"workspace_id"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

type solutionFolder struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CategoryID  int64  `json:"category_id"`
	Position    int    `json:"position"`
	// DefaultFolder marks the category's default folder.
	DefaultFolder bool      `json:"default_folder"`
	Visibility    int       `json:"visibility"`
	WorkspaceID   int64     `json:"workspace_id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

type solutionArticle struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// DescriptionText is Description without its markup.
	DescriptionText string     `json:"description_text"`
	Position        int        `json:"position"`
	ApprovalStatus  *int       `json:"approval_status"`
	ReviewDate      *time.Time `json:"review_date"`
	Attachments     []any      `json:"attachments"`
	FolderID        int64      `json:"folder_id"`
	CategoryID      int64      `json:"category_id"`
	Status          int        `json:"status"` // 1 draft, 2 published
	ArticleType     int        `json:"article_type"`
	Tags            []string   `json:"tags"`
	Keywords        []string   `json:"keywords"`
	Views           int        `json:"views"`
	ThumbsUp        int        `json:"thumbs_up"`
	ThumbsDown      int        `json:"thumbs_down"`
	AgentID         int64      `json:"agent_id"`
	WorkspaceID     int64      `json:"workspace_id"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

type product struct {
	ID                 int64     `json:"id"`
	Name               string    `json:"name"`
	AssetTypeID        int64     `json:"asset_type_id"`
	Manufacturer       string    `json:"manufacturer"`
	Status             string    `json:"status"`
	ModeOfProcurement  string    `json:"mode_of_procurement"`
	DepreciationTypeID *int64    `json:"depreciation_type_id"`
	Description        string    `json:"description"`
	DescriptionText    string    `json:"description_text"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

type vendor struct {
	ID             int64          `json:"id"`
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	PrimaryContact *int64         `json:"primary_contact_id"`
	Address        any            `json:"address"` // nested, as the docs' examples (sdclient/decisions.md)
	CustomFields   map[string]any `json:"custom_fields"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

type cannedResponse struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	FolderID    int64     `json:"folder_id"`
	Content     string    `json:"content"`
	ContentHTML string    `json:"content_html"`
	Attachments []any     `json:"attachments"`
	WorkspaceID int64     `json:"workspace_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// formField is one entry of GET /ticket_form_fields.
type formField struct {
	ID                   int64     `json:"id"`
	Name                 string    `json:"name"`
	Label                string    `json:"label"`
	Description          *string   `json:"description"`
	FieldType            string    `json:"field_type"`
	Position             int       `json:"position"`
	DefaultField         bool      `json:"default_field"`
	RequiredForClosure   bool      `json:"required_for_closure"`
	RequiredForAgents    bool      `json:"required_for_agents"`
	RequiredForCustomers bool      `json:"required_for_customers"`
	CustomersCanEdit     bool      `json:"customers_can_edit"`
	LabelForCustomers    string    `json:"label_for_customers"`
	DisplayedToCustomers bool      `json:"displayed_to_customers"`
	BelongsToSection     bool      `json:"belongs_to_section"`
	Choices              []choice  `json:"choices"`
	NestedFields         []any     `json:"nested_fields"`
	Sections             []any     `json:"sections"`
	WorkspaceID          *int64    `json:"workspace_id"`
	CreatedAt            time.Time `json:"created_at"`
	UpdatedAt            time.Time `json:"updated_at"`
}

type choice struct {
	ID                    int64  `json:"id"`
	Value                 string `json:"value"`
	RequesterDisplayValue string `json:"requester_display_value,omitempty"`
	DisplayID             int64  `json:"display_id,omitempty"`
}

package sdclient

import (
	"errors"
	"fmt"
	"net/mail"
	"time"
)

// The plain collections of the desk: per collection, its service (the
// generic listing, editing and deleting of crud.go, wired in
// Client.initServices), the body of its writes, its list options and what
// a create body must hold. Extra methods live in the resource's own file
// (agents.go: GetByEmail, Me; changes.go: Filter, FilterAll); the wire
// types in types.go.

// AgentsService handles agents: List, ListAll, GetByEmail, Me, Get,
// Create, Update (no delete: the API has none in v2's description), over
// Agent with AgentRequest bodies and AgentListOptions (crud.go).
type AgentsService struct {
	listing[Agent, AgentListOptions, *AgentListOptions]
	editing[Agent, AgentRequest]
}

// AgentRequest is the body of POST /agents and PUT /agents/{id}. Only set
// fields are sent. Creating needs FirstName, Email and at least one of Roles
// (the desk's documentation marks roles mandatory). There is no RoleIDs or
// GroupIDs: the desk dropped role_ids and group_ids in 2023 and answers 400
// to them; use Roles, MemberOf and ObserverOf (see decisions.md).
type AgentRequest struct {
	PersonRequest
	Email        *string     `json:"email,omitempty"`
	Occasional   *bool       `json:"occasional,omitempty"`
	MemberOf     []int64     `json:"member_of,omitempty"`
	ObserverOf   []int64     `json:"observer_of,omitempty"`
	Roles        []AgentRole `json:"roles,omitempty"`
	WorkspaceIDs []int64     `json:"workspace_ids,omitempty"`
}

// PersonRequest is what the bodies of an agent and a requester have alike
// (Person's writable fields). Each embeds it, so its fields read as theirs
// (a.FirstName); only set fields are sent.
type PersonRequest struct {
	FirstName          *string        `json:"first_name,omitempty"`
	LastName           *string        `json:"last_name,omitempty"`
	JobTitle           *string        `json:"job_title,omitempty"`
	WorkPhoneNumber    *string        `json:"work_phone_number,omitempty"`
	MobilePhoneNumber  *string        `json:"mobile_phone_number,omitempty"`
	DepartmentIDs      []int64        `json:"department_ids,omitempty"`
	ReportingManagerID *int64         `json:"reporting_manager_id,omitempty"`
	LocationID         *int64         `json:"location_id,omitempty"`
	Address            *string        `json:"address,omitempty"`
	TimeZone           *string        `json:"time_zone,omitempty"`
	Language           *string        `json:"language,omitempty"`
	CustomFields       map[string]any `json:"custom_fields,omitempty"`
}

// AgentListOptions are the query parameters of GET /agents.
type AgentListOptions struct {
	// Email finds the agent with this address (0 or 1 result).
	Email string `url:"email,omitempty"`
	// Active filters by active state when set.
	Active *bool `url:"active,omitempty"`
	// State is fulltime or occasional.
	State string `url:"state,omitempty"`
	ListOptions
}

// checkAgent says what a body to create an agent lacks.
func checkAgent(a *AgentRequest) error {
	if a == nil || a.FirstName == nil || *a.FirstName == "" || a.Email == nil {
		return errors.New("an agent needs first_name and email")
	}
	if _, err := mail.ParseAddress(*a.Email); err != nil {
		return fmt.Errorf("email %q is not an e-mail address", *a.Email)
	}
	if len(a.Roles) == 0 {
		return errors.New("an agent needs at least one role (roles[].role_id)")
	}
	for _, r := range a.Roles {
		if r.RoleID <= 0 {
			return errors.New("every role needs a positive role_id")
		}
	}
	return nil
}

// RequestersService handles requesters (people who raise tickets): List,
// ListAll, Get, Create, Update, over Requester with RequesterRequest bodies
// and RequesterListOptions (crud.go).
type RequestersService struct {
	listing[Requester, RequesterListOptions, *RequesterListOptions]
	editing[Requester, RequesterRequest]
}

// RequesterRequest is the body of POST /requesters and PUT /requesters/{id}.
// Only set fields are sent. Creating needs FirstName and PrimaryEmail (or a
// phone number).
type RequesterRequest struct {
	PersonRequest
	PrimaryEmail    *string  `json:"primary_email,omitempty"`
	SecondaryEmails []string `json:"secondary_emails,omitempty"`
}

// RequesterListOptions are the query parameters of GET /requesters.
type RequesterListOptions struct {
	Email             string `url:"email,omitempty"`
	MobilePhoneNumber string `url:"mobile_phone_number,omitempty"`
	WorkPhoneNumber   string `url:"work_phone_number,omitempty"`
	// IncludeAgents lists agents too (the desk leaves them out by default).
	IncludeAgents bool `url:"include_agents,omitempty"`
	ListOptions
}

// checkRequester says what a body to create a requester lacks.
func checkRequester(r *RequesterRequest) error {
	if r == nil || r.FirstName == nil || *r.FirstName == "" {
		return errors.New("a requester needs first_name")
	}
	if r.PrimaryEmail == nil && r.WorkPhoneNumber == nil && r.MobilePhoneNumber == nil {
		return errors.New("a requester needs primary_email, work_phone_number or mobile_phone_number")
	}
	return nil
}

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

// ServiceRecordRequest is what the bodies of a change, a problem and a
// release have alike (ServiceRecord's writable fields). Each embeds it, so
// its fields read as theirs (c.Subject); only set fields are sent.
type ServiceRecordRequest struct {
	Subject      *string        `json:"subject,omitempty"`
	Description  *string        `json:"description,omitempty"`
	AgentID      *int64         `json:"agent_id,omitempty"`
	GroupID      *int64         `json:"group_id,omitempty"`
	DepartmentID *int64         `json:"department_id,omitempty"`
	Priority     *int           `json:"priority,omitempty"`
	Status       *int           `json:"status,omitempty"`
	Category     *string        `json:"category,omitempty"`
	SubCategory  *string        `json:"sub_category,omitempty"`
	ItemCategory *string        `json:"item_category,omitempty"`
	WorkspaceID  *int64         `json:"workspace_id,omitempty"`
	CustomFields map[string]any `json:"custom_fields,omitempty"`
}

// ChangesService handles change requests: List, ListAll, Filter,
// FilterAll, Get, Create, Update, Delete, over Change with ChangeRequest
// bodies and ChangeListOptions (crud.go).
type ChangesService struct {
	listing[Change, ChangeListOptions, *ChangeListOptions]
	editing[Change, ChangeRequest]
	deleting
}

// ChangeRequest is the body of POST /changes and PUT /changes/{id}. Only
// set fields are sent. Status, priority, impact, risk and change type codes
// follow the account's change workflow. Creating needs Subject and
// RequesterID or Email.
type ChangeRequest struct {
	ServiceRecordRequest
	RequesterID      *int64     `json:"requester_id,omitempty"`
	Email            *string    `json:"email,omitempty"`
	Impact           *int       `json:"impact,omitempty"`
	Risk             *int       `json:"risk,omitempty"`
	ChangeType       *int       `json:"change_type,omitempty"`
	PlannedStartDate *time.Time `json:"planned_start_date,omitempty"`
	PlannedEndDate   *time.Time `json:"planned_end_date,omitempty"`
}

// ChangeListOptions are the query parameters of GET /changes.
type ChangeListOptions struct {
	UpdatedSince *time.Time `url:"updated_since,omitempty"`
	OrderBy      string     `url:"order_by,omitempty"`
	OrderType    string     `url:"order_type,omitempty"`
	WorkspaceID  *int64     `url:"workspace_id,omitempty"`
	ListOptions
}

// checkChange says what a body to create a change lacks.
func checkChange(c *ChangeRequest) error {
	if c == nil {
		return checkRaised("change", nil, nil, nil)
	}
	return checkRaised("change", c.Subject, c.RequesterID, c.Email)
}

// checkRaised says what a body to create a change or a problem lacks: both
// need a subject and who raised it.
func checkRaised(what string, subject *string, requesterID *int64, email *string) error {
	if subject == nil || *subject == "" {
		return fmt.Errorf("a %s needs a subject", what)
	}
	if requesterID == nil && email == nil {
		return fmt.Errorf("a %s needs requester_id or email", what)
	}
	return nil
}

// ProblemsService handles problem records: List, ListAll, Get, Create,
// Update, Delete, over Problem with ProblemRequest bodies and ListOptions
// (crud.go).
type ProblemsService struct {
	listing[Problem, ListOptions, *ListOptions]
	editing[Problem, ProblemRequest]
	deleting
}

// ProblemRequest is the body of POST /problems and PUT /problems/{id}. Only
// set fields are sent. Creating needs Subject, RequesterID or Email, and
// DueBy.
type ProblemRequest struct {
	ServiceRecordRequest
	RequesterID *int64     `json:"requester_id,omitempty"`
	Email       *string    `json:"email,omitempty"`
	Impact      *int       `json:"impact,omitempty"`
	KnownError  *bool      `json:"known_error,omitempty"`
	DueBy       *time.Time `json:"due_by,omitempty"`
}

// checkProblem says what a body to create a problem lacks.
func checkProblem(p *ProblemRequest) error {
	if p == nil {
		return checkRaised("problem", nil, nil, nil)
	}
	return checkRaised("problem", p.Subject, p.RequesterID, p.Email)
}

// ReleasesService handles release records: List, ListAll, Get, Create,
// Update, Delete, over Release with ReleaseRequest bodies and ListOptions
// (crud.go).
type ReleasesService struct {
	listing[Release, ListOptions, *ListOptions]
	editing[Release, ReleaseRequest]
	deleting
}

// ReleaseRequest is the body of POST /releases and PUT /releases/{id}. Only
// set fields are sent. Creating needs Subject and the planned dates.
type ReleaseRequest struct {
	ServiceRecordRequest
	ReleaseType      *int       `json:"release_type,omitempty"`
	PlannedStartDate *time.Time `json:"planned_start_date,omitempty"`
	PlannedEndDate   *time.Time `json:"planned_end_date,omitempty"`
	WorkStartDate    *time.Time `json:"work_start_date,omitempty"`
	WorkEndDate      *time.Time `json:"work_end_date,omitempty"`
}

// checkRelease says what a body to create a release lacks.
func checkRelease(r *ReleaseRequest) error {
	if r == nil || r.Subject == nil || *r.Subject == "" {
		return errors.New("a release needs a subject")
	}
	if r.PlannedStartDate == nil || r.PlannedEndDate == nil {
		return errors.New("a release needs planned_start_date and planned_end_date")
	}
	return nil
}

// ProductsService reads the product catalogue (GET /products): List and
// ListAll of Product with ListOptions (crud.go).
type ProductsService struct {
	listing[Product, ListOptions, *ListOptions]
}

// WorkspacesService reads the account's workspaces (GET /workspaces): List
// and ListAll of Workspace with ListOptions (crud.go). The API description
// does not show the endpoint; the real API serves it (reference/freshservice-api.md).
type WorkspacesService struct {
	listing[Workspace, ListOptions, *ListOptions]
}

// VendorsService reads vendors (GET /vendors): List and ListAll of Vendor
// with ListOptions (crud.go).
type VendorsService struct {
	listing[Vendor, ListOptions, *ListOptions]
}

// CannedResponsesService reads canned responses (GET /canned_responses):
// List and ListAll of CannedResponse with ListOptions (crud.go).
type CannedResponsesService struct {
	listing[CannedResponse, ListOptions, *ListOptions]
}

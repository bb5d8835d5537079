package sdclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
)

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
	FirstName          *string        `json:"first_name,omitempty"`
	LastName           *string        `json:"last_name,omitempty"`
	Email              *string        `json:"email,omitempty"`
	Occasional         *bool          `json:"occasional,omitempty"`
	JobTitle           *string        `json:"job_title,omitempty"`
	WorkPhoneNumber    *string        `json:"work_phone_number,omitempty"`
	MobilePhoneNumber  *string        `json:"mobile_phone_number,omitempty"`
	DepartmentIDs      []int64        `json:"department_ids,omitempty"`
	ReportingManagerID *int64         `json:"reporting_manager_id,omitempty"`
	LocationID         *int64         `json:"location_id,omitempty"`
	Address            *string        `json:"address,omitempty"`
	TimeZone           *string        `json:"time_zone,omitempty"`
	Language           *string        `json:"language,omitempty"`
	MemberOf           []int64        `json:"member_of,omitempty"`
	ObserverOf         []int64        `json:"observer_of,omitempty"`
	Roles              []AgentRole    `json:"roles,omitempty"`
	WorkspaceIDs       []int64        `json:"workspace_ids,omitempty"`
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

// GetByEmail finds the agent with an e-mail address (GET /agents?email=).
// When there is none the error matches ErrNotFound.
func (s *AgentsService) GetByEmail(ctx context.Context, email string) (*Agent, *Response, error) {
	op := "get agent by e-mail"
	if _, err := mail.ParseAddress(email); err != nil {
		return nil, nil, invalid(op, "%q is not an e-mail address", email)
	}
	agents, resp, err := list[Agent](ctx, s.editing.res.client, op, "agents", "agents", &AgentListOptions{Email: email})
	if err != nil {
		return nil, resp, err
	}
	if len(agents) == 0 {
		return nil, resp, fmt.Errorf("sdclient: %s: no agent with e-mail %s: %w", op, email, ErrNotFound)
	}
	return agents[0], resp, nil
}

// Me reads the agent who owns the API key (GET /agents/me); a cheap way to
// check the key.
func (s *AgentsService) Me(ctx context.Context) (*Agent, *Response, error) {
	return sendOne[Agent](ctx, s.editing.res.client, request{op: "get current agent", method: http.MethodGet, path: "agents/me"}, "agent")
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

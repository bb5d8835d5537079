package sdclient

import (
	"context"
	"errors"
	"iter"
)

// RequestersService handles requesters (people who raise tickets).
type RequestersService service

// RequesterRequest is the body of POST /requesters and PUT /requesters/{id}.
// Only set fields are sent. Creating needs FirstName and PrimaryEmail (or a
// phone number).
type RequesterRequest struct {
	FirstName          *string        `json:"first_name,omitempty"`
	LastName           *string        `json:"last_name,omitempty"`
	JobTitle           *string        `json:"job_title,omitempty"`
	PrimaryEmail       *string        `json:"primary_email,omitempty"`
	SecondaryEmails    []string       `json:"secondary_emails,omitempty"`
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

// RequesterListOptions are the query parameters of GET /requesters.
type RequesterListOptions struct {
	Email             string `url:"email,omitempty"`
	MobilePhoneNumber string `url:"mobile_phone_number,omitempty"`
	WorkPhoneNumber   string `url:"work_phone_number,omitempty"`
	// IncludeAgents lists agents too (the desk leaves them out by default).
	IncludeAgents bool `url:"include_agents,omitempty"`
	ListOptions
}

// List reads one page of requesters (GET /requesters).
func (s *RequestersService) List(ctx context.Context, opts *RequesterListOptions) ([]*Requester, *Response, error) {
	return list[Requester](ctx, s.client, "list requesters", "requesters", "requesters", opts)
}

// ListAll walks every page of requesters.
func (s *RequestersService) ListAll(ctx context.Context, opts *RequesterListOptions) iter.Seq2[*Requester, error] {
	return listAll(ctx, opts, s.List)
}

// Get reads a requester (GET /requesters/{id}).
func (s *RequestersService) Get(ctx context.Context, id int64) (*Requester, *Response, error) {
	return getByID[Requester](ctx, s.client, "requester", "requesters", "requester", id)
}

// Create creates a requester (POST /requesters).
func (s *RequestersService) Create(ctx context.Context, r *RequesterRequest) (*Requester, *Response, error) {
	return createObj[Requester](ctx, s.client, "requester", "requesters", "requester", r, func() error {
		if r == nil || r.FirstName == nil || *r.FirstName == "" {
			return errors.New("a requester needs first_name")
		}
		if r.PrimaryEmail == nil && r.WorkPhoneNumber == nil && r.MobilePhoneNumber == nil {
			return errors.New("a requester needs primary_email, work_phone_number or mobile_phone_number")
		}
		return nil
	})
}

// Update changes the set fields of a requester (PUT /requesters/{id}).
func (s *RequestersService) Update(ctx context.Context, id int64, r *RequesterRequest) (*Requester, *Response, error) {
	return updateObj[Requester](ctx, s.client, "requester", "requesters", "requester", id, r)
}

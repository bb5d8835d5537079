package sdclient

import (
	"errors"
)

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

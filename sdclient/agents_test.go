package sdclient

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestAgents(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /agents", "active=true&state=fulltime", "", 200, `{"agents":[{"id":1,"first_name":"Ada","last_name":null,"workspace_ids":[2,3]}]}`)
	route(t, mux, "POST /agents", "", `{"first_name":"Bob","email":"bob@example.com","occasional":false,"roles":[{"role_id":7,"assignment_scope":"member_groups","groups":null}]}`, 201, `{"agent":{"id":2,"first_name":"Bob","last_name":"Stone"}}`)
	route(t, mux, "GET /agents/2", "", "", 200, `{"agent":{"id":2}}`)
	route(t, mux, "PUT /agents/2", "", `{"job_title":"Lead"}`, 200, `{"agent":{"id":2,"job_title":"Lead"}}`)

	list, _, err := c.Agents.List(t.Context(), &AgentListOptions{Active: Ptr(true), State: "fulltime"})
	if err != nil || list[0].Name() != "Ada" || len(list[0].WorkspaceIDs) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	a, _, err := c.Agents.Create(t.Context(), &AgentRequest{FirstName: Ptr("Bob"), Email: Ptr("bob@example.com"), Occasional: Ptr(false), Roles: []AgentRole{{RoleID: 7, AssignmentScope: "member_groups"}}})
	if err != nil || a.Name() != "Bob Stone" {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Agents.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if a, _, err := c.Agents.Update(t.Context(), 2, &AgentRequest{JobTitle: Ptr("Lead")}); err != nil || *a.JobTitle != "Lead" {
		t.Fatalf("update: %v", err)
	}
	for name, bad := range map[string]*AgentRequest{
		"bad email": {FirstName: Ptr("x"), Email: Ptr("nope"), Roles: []AgentRole{{RoleID: 7}}},
		"no roles":  {FirstName: Ptr("x"), Email: Ptr("x@example.com")},
		"role id 0": {FirstName: Ptr("x"), Email: Ptr("x@example.com"), Roles: []AgentRole{{AssignmentScope: "entire_helpdesk"}}},
	} {
		if _, _, err := c.Agents.Create(t.Context(), bad); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAgentsGetByEmail(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /agents", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.RawQuery {
		case "email=ann%2Bit%40example.com":
			writeJSON(w, 200, `{"agents":[{"id":77,"email":"ann+it@example.com"}]}`)
		case "email=ghost%40example.com":
			writeJSON(w, 200, `{"agents":[]}`)
		default:
			t.Errorf("query %q", r.URL.RawQuery)
		}
	})
	a, _, err := c.Agents.GetByEmail(t.Context(), "ann+it@example.com")
	if err != nil || a.ID != 77 {
		t.Fatalf("found: %v", err)
	}
	_, _, err = c.Agents.GetByEmail(t.Context(), "ghost@example.com")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no agent with e-mail ghost@example.com") {
		t.Errorf("missing agent: %v", err)
	}
	if _, _, err := c.Agents.GetByEmail(t.Context(), "not an address"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad address: %v", err)
	}
}

package sdsim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestCRUD runs create, view, update, list and delete over every writable
// resource and checks envelopes, 201 + Location, 204 and the 404 after.
func TestCRUD(t *testing.T) {
	clock := newClock()
	s := newServer(t, sdsim.WithClock(clock.Now))
	tests := []struct {
		path, single, plural string
		create, update       string
		updatedField         string
		badCreate            string // missing a required field
		badField             string
		deletable            bool
		pathID               string // JSON field used in the path
	}{
		{"/agents", "agent", "agents", `{"first_name":"Kim","last_name":"Lee","email":"kim@example.com","roles":[{"role_id":1,"assignment_scope":"entire_helpdesk"}]}`, `{"job_title":"Engineer"}`, "job_title", `{"last_name":"x"}`, "first_name", false, "id"},
		{"/requesters", "requester", "requesters", `{"first_name":"Ola","primary_email":"ola@example.com"}`, `{"job_title":"Accountant"}`, "job_title", `{"first_name":"Ola"}`, "primary_email", false, "id"},
		{"/groups", "group", "groups", `{"name":"Hardware"}`, `{"description":"desks"}`, "description", `{"description":"x"}`, "name", true, "id"},
		{"/departments", "department", "departments", `{"name":"Finance"}`, `{"description":"money"}`, "description", `{}`, "name", true, "id"},
		{"/assets", "asset", "assets", `{"name":"Laptop 7","asset_type_id":21000000100}`, `{"description":"spare"}`, "description", `{"name":"x"}`, "asset_type_id", true, "display_id"},
		{"/changes", "change", "changes", `{"subject":"Patch VPN","priority":2,"planned_start_date":"2026-03-11T10:00:00Z"}`, `{"status":2}`, "status", `{"priority":2}`, "subject", true, "id"},
		{"/problems", "problem", "problems", `{"subject":"Flaky Wi-Fi"}`, `{"known_error":true}`, "known_error", `{}`, "subject", true, "id"},
		{"/releases", "release", "releases", `{"subject":"Q3 image","planned_start_date":"2026-03-12T10:00:00Z","planned_end_date":"2026-03-12T14:00:00Z"}`, `{"status":3}`, "status", `{}`, "subject", true, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.plural, func(t *testing.T) {
			r := do(t, s, req{method: "POST", path: tt.path, body: tt.create}).want(t, 201)
			obj := r.obj(tt.single)
			id := num(obj[tt.pathID])
			self := fmt.Sprintf("%s/%d", tt.path, id)
			if r.header.Get("Location") != s.URL+"/api/v2"+self {
				t.Errorf("Location = %q, want %s", r.header.Get("Location"), self)
			}
			if !stampRE.MatchString(fmt.Sprint(obj["created_at"])) {
				t.Errorf("created_at = %v", obj["created_at"])
			}
			get(t, s, self).want(t, 200).obj(tt.single)
			clock.Advance(time.Minute)
			up := do(t, s, req{method: "PUT", path: self, body: tt.update}).want(t, 200).obj(tt.single)
			if up[tt.updatedField] == obj[tt.updatedField] || up["updated_at"] == obj["updated_at"] {
				t.Errorf("update did not change %s and updated_at: %v", tt.updatedField, up)
			}
			if r := do(t, s, req{method: "PUT", path: self, body: `{"no_such_field":1}`}).want(t, 400); r.fieldErr("no_such_field") != "invalid_field" {
				t.Errorf("unknown field: %s", r.raw)
			}
			if r := do(t, s, req{method: "PUT", path: self, body: `{"id":5}`}).want(t, 400); r.fieldErr("id") != "readonly_field" {
				t.Errorf("id update: %s", r.raw)
			}
			if r := do(t, s, req{method: "POST", path: tt.path, body: tt.badCreate}).want(t, 400); r.fieldErr(tt.badField) == "" {
				t.Errorf("missing %s: %s", tt.badField, r.raw)
			}
			found := false
			for _, x := range get(t, s, tt.path+"?per_page=100").want(t, 200).list(tt.plural) {
				found = found || num(x.(map[string]any)[tt.pathID]) == id
			}
			if !found {
				t.Errorf("created %s not listed", tt.single)
			}
			get(t, s, tt.path+"/987654321").want(t, 404)
			if tt.deletable {
				do(t, s, req{method: "DELETE", path: self}).want(t, 204)
				get(t, s, self).want(t, 404)
			} else {
				do(t, s, req{method: "DELETE", path: self}).want(t, 405)
			}
		})
	}
}

func TestAgentsLookup(t *testing.T) {
	s := newServer(t)
	a := s.Desk.AddAgent(sdsim.Agent{FirstName: "Zed", Email: "zed@example.com", WorkspaceIDs: []int64{sdsim.DefaultWorkspaceID}})
	if l := get(t, s, "/agents?email=nobody@example.com").want(t, 200).list("agents"); l == nil || len(l) != 0 {
		t.Errorf("unknown email: %v, want an empty agents list", l)
	}
	l := get(t, s, "/agents?email=ZED@example.com").want(t, 200).list("agents")
	if len(l) != 1 || num(l[0].(map[string]any)["id"]) != a.ID {
		t.Errorf("email lookup = %v", l)
	}
	if ws := l[0].(map[string]any)["workspace_ids"]; fmt.Sprint(ws) != fmt.Sprint([]any{float64(sdsim.DefaultWorkspaceID)}) {
		t.Errorf("workspace_ids = %v", ws)
	}
	if a.ID <= 1<<32 {
		t.Errorf("agent id %d should exceed 32 bits", a.ID)
	}
	dup := do(t, s, req{method: "POST", path: "/agents", body: `{"first_name":"Z","email":"zed@example.com","roles":[{"role_id":1,"assignment_scope":"entire_helpdesk"}]}`}).want(t, 409)
	if dup.fieldErr("email") != "duplicate_value" {
		t.Errorf("duplicate: %s", dup.raw)
	}
	if r := do(t, s, req{method: "POST", path: "/agents", body: `{"first_name":"Q","email":"q@example.com","group_ids":[1]}`}).want(t, 400); r.fieldErr("group_ids") != "invalid_field" {
		t.Errorf("removed field group_ids: %s", r.raw)
	}
	// Roles are mandatory on create (#create_an_agent); role_ids was removed.
	if r := do(t, s, req{method: "POST", path: "/agents", body: `{"first_name":"Q","email":"q@example.com"}`}).want(t, 400); r.fieldErr("roles") != "missing_field" {
		t.Errorf("agent without roles: %s", r.raw)
	}
	if r := do(t, s, req{method: "POST", path: "/agents", body: `{"first_name":"Q","email":"q@example.com","role_ids":[1]}`}).want(t, 400); r.fieldErr("role_ids") != "invalid_field" {
		t.Errorf("removed field role_ids: %s", r.raw)
	}
	if l := get(t, s, "/requesters?email=nobody@example.com").want(t, 200).list("requesters"); len(l) != 0 {
		t.Errorf("requesters by unknown email = %v", l)
	}
}

func TestChangesFilter(t *testing.T) {
	s := newServer(t)
	for i := range 5 {
		s.Desk.AddChange(sdsim.Change{Subject: fmt.Sprint(i), RequesterID: sdsim.DefaultAgentID, Priority: 1 + i%2, Status: 1})
	}
	r := get(t, s, "/changes/filter?query="+strings.ReplaceAll(`%22priority:2%22`, " ", "%20")).want(t, 200)
	if num(r.body["total"]) != 2 || len(r.list("changes")) != 2 {
		t.Errorf("changes filter = %s", r.raw)
	}
	if r := get(t, s, "/changes/filter?query=priority:2").want(t, 400); r.fieldErr("query") == "" {
		t.Errorf("unquoted: %s", r.raw)
	}
	if r := get(t, s, "/changes?query=%22status:1%22").want(t, 200); num(r.body["total"]) != 5 {
		t.Errorf("changes?query= = %s", r.raw)
	}
}

func TestReadOnlyCollections(t *testing.T) {
	s := newServer(t, sdsim.WithGenerated(3, 50))
	cats := get(t, s, "/solutions/categories").want(t, 200).list("categories")
	if len(cats) == 0 {
		t.Fatal("no solution categories")
	}
	catID := num(cats[0].(map[string]any)["id"])
	folders := get(t, s, fmt.Sprintf("/solutions/folders?category_id=%d", catID)).want(t, 200).list("folders")
	if len(folders) == 0 {
		t.Fatal("no folders")
	}
	folderID := num(folders[0].(map[string]any)["id"])
	for _, tt := range []struct{ path, key string }{
		{fmt.Sprintf("/solutions/articles?folder_id=%d", folderID), "articles"},
		{"/products", "products"},
		{"/workspaces", "workspaces"},
		{"/vendors", "vendors"},
		{"/canned_responses", "canned_responses"},
		{"/ticket_fields", "ticket_fields"},
		{"/ticket_form_fields", "ticket_fields"},
	} {
		if l := get(t, s, tt.path).want(t, 200).list(tt.key); len(l) == 0 {
			t.Errorf("%s: empty %q", tt.path, tt.key)
		}
	}
	for _, p := range []string{"/solutions/folders", "/solutions/articles"} {
		get(t, s, p).want(t, 400)
	}
	get(t, s, "/solutions/folders?category_id=1").want(t, 404)
	var status map[string]any
	for _, f := range get(t, s, "/ticket_form_fields").list("ticket_fields") {
		if f.(map[string]any)["name"] == "status" {
			status = f.(map[string]any)
		}
	}
	var choices []string
	for _, c := range status["choices"].([]any) {
		m := c.(map[string]any)
		choices = append(choices, fmt.Sprintf("%v=%v", m["id"], m["value"]))
	}
	if got := strings.Join(choices, ","); got != "2=Open,3=Pending,4=Resolved,5=Closed,6=Waiting on vendor,7=Scheduled" {
		t.Errorf("status choices = %s", got)
	}
}

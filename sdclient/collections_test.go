package sdclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Tests of the plain collections (collections.go), in its order.

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
	a, _, err := c.Agents.Create(t.Context(), &AgentRequest{PersonRequest: PersonRequest{FirstName: Ptr("Bob")}, Email: Ptr("bob@example.com"), Occasional: Ptr(false), Roles: []AgentRole{{RoleID: 7, AssignmentScope: "member_groups"}}})
	if err != nil || a.Name() != "Bob Stone" {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Agents.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if a, _, err := c.Agents.Update(t.Context(), 2, &AgentRequest{PersonRequest: PersonRequest{JobTitle: Ptr("Lead")}}); err != nil || *a.JobTitle != "Lead" {
		t.Fatalf("update: %v", err)
	}
	for name, bad := range map[string]*AgentRequest{
		"bad email": {PersonRequest: PersonRequest{FirstName: Ptr("x")}, Email: Ptr("nope"), Roles: []AgentRole{{RoleID: 7}}},
		"no roles":  {PersonRequest: PersonRequest{FirstName: Ptr("x")}, Email: Ptr("x@example.com")},
		"role id 0": {PersonRequest: PersonRequest{FirstName: Ptr("x")}, Email: Ptr("x@example.com"), Roles: []AgentRole{{AssignmentScope: "entire_helpdesk"}}},
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

func TestRequesters(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /requesters", "email=ann%40example.com&include_agents=true", "", 200, `{"requesters":[{"id":1,"first_name":"Ann","primary_email":"ann@example.com"}]}`)
	route(t, mux, "POST /requesters", "", `{"first_name":"Cy","primary_email":"cy@example.com"}`, 201, `{"requester":{"id":2,"first_name":"Cy"}}`)
	route(t, mux, "GET /requesters/2", "", "", 200, `{"requester":{"id":2}}`)
	route(t, mux, "PUT /requesters/2", "", `{"department_ids":[4]}`, 200, `{"requester":{"id":2,"department_ids":[4]}}`)

	list, _, err := c.Requesters.List(t.Context(), &RequesterListOptions{Email: "ann@example.com", IncludeAgents: true})
	if err != nil || *list[0].PrimaryEmail != "ann@example.com" {
		t.Fatalf("list: %v", err)
	}
	if r, _, err := c.Requesters.Create(t.Context(), &RequesterRequest{PersonRequest: PersonRequest{FirstName: Ptr("Cy")}, PrimaryEmail: Ptr("cy@example.com")}); err != nil || r.ID != 2 {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Requesters.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if r, _, err := c.Requesters.Update(t.Context(), 2, &RequesterRequest{PersonRequest: PersonRequest{DepartmentIDs: []int64{4}}}); err != nil || r.DepartmentIDs[0] != 4 {
		t.Fatalf("update: %v", err)
	}
	if _, _, err := c.Requesters.Create(t.Context(), &RequesterRequest{PersonRequest: PersonRequest{FirstName: Ptr("x")}}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no contact: %v", err)
	}
}

func TestGroups(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /groups", "", "", 200, `{"groups":[{"id":10003024749,"name":"Network","members":[1,2],"unassigned_for":"30m"}]}`)
	route(t, mux, "POST /groups", "", `{"name":"Ops","members":[1]}`, 201, `{"group":{"id":3,"name":"Ops"}}`)
	route(t, mux, "GET /groups/3", "", "", 200, `{"group":{"id":3}}`)
	route(t, mux, "PUT /groups/3", "", `{"description":"night shift"}`, 200, `{"group":{"id":3,"description":"night shift"}}`)
	route(t, mux, "DELETE /groups/3", "", "", 204, "")

	list, _, err := c.Groups.List(t.Context(), nil)
	if err != nil || list[0].ID != 10003024749 || len(list[0].Members) != 2 || *list[0].UnassignedFor != "30m" {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Groups.Create(t.Context(), &GroupRequest{Name: Ptr("Ops"), Members: []int64{1}}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Groups.Get(t.Context(), 3); err != nil {
		t.Fatalf("get: %v", err)
	}
	if g, _, err := c.Groups.Update(t.Context(), 3, &GroupRequest{Description: Ptr("night shift")}); err != nil || *g.Description != "night shift" {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Groups.Delete(t.Context(), 3); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Groups.Create(t.Context(), &GroupRequest{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no name: %v", err)
	}
	if _, _, err := c.Groups.Get(t.Context(), 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("id 0: %v", err)
	}
}

func TestDepartments(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /departments", "page=3", "", 200, `{"departments":[{"id":1,"name":"IT","domains":["x.com"]}]}`)
	route(t, mux, "POST /departments", "", `{"name":"HR"}`, 201, `{"department":{"id":2,"name":"HR"}}`)
	route(t, mux, "GET /departments/2", "", "", 200, `{"department":{"id":2}}`)
	route(t, mux, "PUT /departments/2", "", `{"head_user_id":5}`, 200, `{"department":{"id":2,"head_user_id":5}}`)
	route(t, mux, "DELETE /departments/2", "", "", 204, "")

	list, _, err := c.Departments.List(t.Context(), &ListOptions{Page: 3})
	if err != nil || list[0].Domains[0] != "x.com" {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Departments.Create(t.Context(), &DepartmentRequest{Name: Ptr("HR")}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Departments.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if d, _, err := c.Departments.Update(t.Context(), 2, &DepartmentRequest{HeadUserID: Ptr(int64(5))}); err != nil || *d.HeadUserID != 5 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Departments.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Departments.Create(t.Context(), nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil: %v", err)
	}
}

func TestAssets(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /assets", "include=type_fields&per_page=100", "", 200, `{"assets":[{"id":1,"display_id":17,"name":"Laptop","type_fields":{"ram":16}}]}`)
	route(t, mux, "POST /assets", "", `{"name":"Laptop","asset_type_id":5}`, 201, `{"asset":{"id":2,"display_id":18,"name":"Laptop","asset_type_id":5}}`)
	route(t, mux, "GET /assets/18", "", "", 200, `{"asset":{"id":2,"display_id":18}}`)
	route(t, mux, "PUT /assets/18", "", `{"user_id":9}`, 200, `{"asset":{"id":2,"display_id":18,"user_id":9}}`)
	route(t, mux, "DELETE /assets/18", "", "", 204, "")

	list, _, err := c.Assets.List(t.Context(), &AssetListOptions{Include: "type_fields", ListOptions: ListOptions{PerPage: 100}})
	if err != nil || list[0].DisplayID != 17 || list[0].TypeFields["ram"] != float64(16) {
		t.Fatalf("list: %v %+v", err, list)
	}
	a, _, err := c.Assets.Create(t.Context(), &AssetRequest{Name: Ptr("Laptop"), AssetTypeID: Ptr(int64(5))})
	if err != nil || a.DisplayID != 18 {
		t.Fatalf("create: %v", err)
	}
	if a, _, err = c.Assets.Get(t.Context(), 18); err != nil || a.ID != 2 {
		t.Fatalf("get: %v", err)
	}
	if a, _, err = c.Assets.Update(t.Context(), 18, &AssetRequest{UserID: Ptr(int64(9))}); err != nil || *a.UserID != 9 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Assets.Delete(t.Context(), 18); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Assets.Create(t.Context(), &AssetRequest{Name: Ptr("x")}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("create without type: %v", err)
	}
	if _, _, err := c.Assets.Update(t.Context(), 18, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil update: %v", err)
	}
	var n int
	for _, err := range c.Assets.ListAll(t.Context(), &AssetListOptions{Include: "type_fields"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("ListAll gave %d", n)
	}
}

func TestChanges(t *testing.T) {
	c, mux, _ := setup(t)
	start := time.Date(2025, 3, 27, 13, 0, 0, 0, time.UTC)
	route(t, mux, "GET /changes", "order_type=desc", "", 200, `{"changes":[{"id":1,"subject":"Upgrade","planned_start_date":"2018-03-27T13:00:00.999Z","agent_id":null}]}`)
	route(t, mux, "POST /changes", "", `{"subject":"Patch","requester_id":4,"planned_start_date":"2025-03-27T13:00:00Z"}`, 201, `{"change":{"id":2,"subject":"Patch"}}`)
	route(t, mux, "GET /changes/2", "", "", 200, `{"change":{"id":2,"planned_start_date":"2025-03-27T18:30:00+05:30"}}`)
	route(t, mux, "PUT /changes/2", "", `{"status":3}`, 200, `{"change":{"id":2,"status":3}}`)
	route(t, mux, "DELETE /changes/2", "", "", 204, "")

	list, _, err := c.Changes.List(t.Context(), &ChangeListOptions{OrderType: "desc"})
	if err != nil || list[0].PlannedStartDate == nil || list[0].AgentID != nil {
		t.Fatalf("list: %v %+v", err, list)
	}
	if _, _, err := c.Changes.Create(t.Context(), &ChangeRequest{ServiceRecordRequest: ServiceRecordRequest{Subject: Ptr("Patch")}, RequesterID: Ptr(int64(4)), PlannedStartDate: &start}); err != nil {
		t.Fatalf("create: %v", err)
	}
	ch, _, err := c.Changes.Get(t.Context(), 2)
	if err != nil || !ch.PlannedStartDate.Equal(time.Date(2025, 3, 27, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("get: %v %+v", err, ch)
	}
	updateDeleteRefuse(t, c.Changes, 2, &ChangeRequest{ServiceRecordRequest: ServiceRecordRequest{Status: Ptr(3)}}, func(ch *Change) bool { return ch.Status == 3 },
		&ChangeRequest{ServiceRecordRequest: ServiceRecordRequest{Subject: Ptr("x")}}, "no requester")
}

func TestChangesFilter(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /changes/filter", func(w http.ResponseWriter, r *http.Request) {
		raw := r.URL.RawQuery
		q, rest, _ := strings.Cut(strings.TrimPrefix(raw, "query="), "&")
		val, _ := url.QueryUnescape(q)
		if strings.Contains(raw, "+") || val != `"priority:4 AND status:1"` {
			t.Errorf("raw query %s (value %s)", raw, val)
		}
		switch rest {
		case "page=1":
			writeJSON(w, 200, `{"changes":[{"id":1},{"id":2}],"total":3}`)
		case "page=2":
			writeJSON(w, 200, `{"changes":[{"id":3}],"total":3}`)
		default:
			t.Errorf("rest %q", rest)
		}
	})
	page, _, err := c.Changes.Filter(t.Context(), "priority:4 AND status:1", &FilterOptions{Page: 1})
	if err != nil || page.Total != 3 || len(page.Changes) != 2 {
		t.Fatalf("filter: %v %+v", err, page)
	}
	var ids []int64
	for ch, err := range c.Changes.FilterAll(t.Context(), "priority:4 AND status:1", nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ch.ID)
	}
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Errorf("ids %v", ids)
	}
	if _, _, err := c.Changes.Filter(t.Context(), "priority:", nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad query: %v", err)
	}
}

func TestProblems(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /problems", "per_page=5", "", 200, `{"problems":[{"id":1,"known_error":true,"due_by":null}]}`)
	route(t, mux, "POST /problems", "", `{"subject":"Flaky VPN","email":"ann@example.com","impact":2}`, 201, `{"problem":{"id":2}}`)
	route(t, mux, "GET /problems/2", "", "", 200, `{"problem":{"id":2}}`)
	route(t, mux, "PUT /problems/2", "", `{"known_error":false}`, 200, `{"problem":{"id":2,"known_error":false}}`)
	route(t, mux, "DELETE /problems/2", "", "", 204, "")

	list, _, err := c.Problems.List(t.Context(), &ListOptions{PerPage: 5})
	if err != nil || !list[0].KnownError || list[0].DueBy != nil {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Problems.Create(t.Context(), &ProblemRequest{ServiceRecordRequest: ServiceRecordRequest{Subject: Ptr("Flaky VPN")}, Email: Ptr("ann@example.com"), Impact: Ptr(2)}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Problems.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if _, _, err := c.Problems.Update(t.Context(), 2, &ProblemRequest{KnownError: Ptr(false)}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Problems.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Problems.Create(t.Context(), &ProblemRequest{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty: %v", err)
	}
}

func TestReleases(t *testing.T) {
	c, mux, _ := setup(t)
	s, e := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC)
	route(t, mux, "GET /releases", "", "", 200, `{"releases":[{"id":1,"release_type":2,"work_start_date":null}]}`)
	route(t, mux, "POST /releases", "", `{"subject":"Q2","planned_start_date":"2025-04-01T00:00:00Z","planned_end_date":"2025-04-02T00:00:00Z"}`, 201, `{"release":{"id":2}}`)
	route(t, mux, "GET /releases/2", "", "", 200, `{"release":{"id":2}}`)
	route(t, mux, "PUT /releases/2", "", `{"status":5}`, 200, `{"release":{"id":2,"status":5}}`)
	route(t, mux, "DELETE /releases/2", "", "", 204, "")

	list, _, err := c.Releases.List(t.Context(), nil)
	if err != nil || list[0].ReleaseType != 2 {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Releases.Create(t.Context(), &ReleaseRequest{ServiceRecordRequest: ServiceRecordRequest{Subject: Ptr("Q2")}, PlannedStartDate: &s, PlannedEndDate: &e}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Releases.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	updateDeleteRefuse(t, c.Releases, 2, &ReleaseRequest{ServiceRecordRequest: ServiceRecordRequest{Status: Ptr(5)}}, func(r *Release) bool { return r.Status == 5 },
		&ReleaseRequest{ServiceRecordRequest: ServiceRecordRequest{Subject: Ptr("x")}}, "no dates")
}

func TestProducts(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /products", "page=2", "", 200, `{"products":[{"id":1,"name":"MacBook","manufacturer":"Apple","asset_type_id":5}]}`)
	list, _, err := c.Products.List(t.Context(), &ListOptions{Page: 2})
	if err != nil || *list[0].Manufacturer != "Apple" || *list[0].AssetTypeID != 5 {
		t.Fatalf("list: %v", err)
	}
}

func TestVendors(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /vendors", "per_page=100", "", 200, `{"vendors":[{"id":1,"name":"Dell","address":{"city":"Austin"}}]}`)
	var n int
	for v, err := range c.Vendors.ListAll(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if *v.Address.City != "Austin" {
			t.Errorf("vendor %+v", v)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d vendors", n)
	}
}

func TestCannedResponses(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /canned_responses", "", "", 200, `{"canned_responses":[{"id":1,"title":"Thanks","content":"Thank you","content_html":"<p>Thank you</p>","folder_id":2}]}`)
	list, _, err := c.CannedResponses.List(t.Context(), nil)
	if err != nil || list[0].Title != "Thanks" || list[0].FolderID != 2 {
		t.Fatalf("list: %v", err)
	}
}

// editor is a collection service that updates, deletes and creates T with
// bodies B.
type editor[T, B any] interface {
	Update(ctx context.Context, id int64, body *B) (*T, *Response, error)
	Delete(ctx context.Context, id int64) (*Response, error)
	Create(ctx context.Context, body *B) (*T, *Response, error)
}

// updateDeleteRefuse checks what collection tests share: updating id with
// upd gives an object ok accepts, deleting id succeeds, and the client
// refuses to create bad (why) without sending it.
func updateDeleteRefuse[T, B any](t *testing.T, s editor[T, B], id int64, upd *B, ok func(*T) bool, bad *B, why string) {
	t.Helper()
	if got, _, err := s.Update(t.Context(), id, upd); err != nil || !ok(got) {
		t.Fatalf("update: %v", err)
	}
	if _, err := s.Delete(t.Context(), id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := s.Create(t.Context(), bad); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("%s: %v", why, err)
	}
}

// An agent and a requester are named alike (Person.Name): first and last
// name, without a missing or empty last name's space; the rules' names
// and the bot's cards both read it.
func TestPersonName(t *testing.T) {
	for _, tc := range []struct {
		first string
		last  *string
		want  string
	}{
		{"Ada", Ptr("Lovelace"), "Ada Lovelace"},
		{"Ada", nil, "Ada"},
		{"Ada", Ptr(""), "Ada"},
		{" Ada", Ptr("Lovelace "), "Ada Lovelace"},
		{"", Ptr("Lovelace"), "Lovelace"},
	} {
		p := Person{FirstName: tc.first, LastName: tc.last}
		if got := (&Agent{Person: p}).Name(); got != tc.want {
			t.Errorf("agent %q %v: Name() = %q, want %q", tc.first, tc.last, got, tc.want)
		}
		if got := (&Requester{Person: p}).Name(); got != tc.want {
			t.Errorf("requester %q %v: Name() = %q, want %q", tc.first, tc.last, got, tc.want)
		}
	}
}

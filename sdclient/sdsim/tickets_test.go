package sdsim_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// seeded is a small desk with a requester, an agent, a group and tickets.
type seeded struct {
	s     *sdsim.Server
	clock *fakeClock
	req   sdsim.Requester
	agent sdsim.Agent
	group sdsim.Group
}

func newSeeded(t *testing.T, opts ...sdsim.Option) *seeded {
	t.Helper()
	clock := newClock()
	s := newServer(t, append([]sdsim.Option{sdsim.WithClock(clock.Now)}, opts...)...)
	d := s.Desk
	sd := &seeded{s: s, clock: clock}
	sd.req = d.AddRequester(sdsim.Requester{FirstName: "Rita", LastName: "Requester", PrimaryEmail: "rita@example.com"})
	sd.agent = d.AddAgent(sdsim.Agent{FirstName: "Sam", LastName: "Support", Email: "sam@example.com"})
	sd.group = d.AddGroup(sdsim.Group{Name: "Network", Members: []int64{sd.agent.ID}})
	return sd
}

func (sd *seeded) ticket(t sdsim.Ticket) sdsim.Ticket {
	if t.RequesterID == 0 {
		t.RequesterID = sd.req.ID
	}
	return sd.s.Desk.AddTicket(t)
}

func TestAuth(t *testing.T) {
	s := newServer(t)
	reader := s.Desk.AddAgent(sdsim.Agent{FirstName: "Rhea", Email: "rhea@example.com", ReadOnly: true})
	s.Desk.AddAPIKey("reader-key", reader.ID)
	s.Desk.AddAPIKey("ghost-key", 99)
	tests := []struct {
		name   string
		r      req
		status int
		code   string
	}{
		{"no credentials", req{path: "/tickets", key: "-"}, 401, "invalid_credentials"},
		{"wrong key", req{path: "/tickets", key: "nope"}, 401, "invalid_credentials"},
		{"key of unknown agent", req{path: "/tickets", key: "ghost-key"}, 401, "invalid_credentials"},
		{"default key", req{path: "/tickets"}, 200, ""},
		{"read-only agent reads", req{path: "/tickets", key: "reader-key"}, 200, ""},
		{"read-only agent writes", req{method: "POST", path: "/tickets", key: "reader-key", body: `{"email":"a@b.c"}`}, 403, "access_denied"},
		{"read-only agent notes", req{method: "POST", path: "/tickets/1/notes", key: "reader-key", body: `{"body":"x"}`}, 403, "access_denied"},
		{"unauthenticated unknown path", req{path: "/nothing", key: "-"}, 401, "invalid_credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, s, tt.r).want(t, tt.status)
			if tt.code != "" && r.body["code"] != tt.code {
				t.Errorf("code = %v, want %s (body %s)", r.body["code"], tt.code, r.raw)
			}
			if tt.code != "" && r.body["message"] == "" {
				t.Errorf("no message in %s", r.raw)
			}
		})
	}
	// The password part is ignored.
	hr, _ := http.NewRequest("GET", s.URL+"/api/v2/agents/me", nil)
	hr.SetBasicAuth(sdsim.DefaultAPIKey, "anything-at-all")
	res, err := s.Client().Do(hr)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("any password: %v %v", res, err)
	}
	res.Body.Close()
	// /agents/me answers the key's agent.
	me := do(t, s, req{path: "/agents/me", key: "reader-key"}).want(t, 200)
	if num(me.obj("agent")["id"]) != reader.ID {
		t.Errorf("agents/me = %s, want agent %d", me.raw, reader.ID)
	}
}

func TestRoutingErrors(t *testing.T) {
	sd := newSeeded(t)
	tk := sd.ticket(sdsim.Ticket{Subject: "x"})
	tests := []struct {
		name   string
		r      req
		status int
		allow  string
	}{
		{"unknown collection", req{path: "/widgets"}, 404, ""},
		{"outside the api prefix", req{path: "/xyz"}, 404, ""},
		{"associated-assets does not exist", req{path: fmt.Sprintf("/tickets/%d/associated-assets", tk.ID)}, 404, ""},
		{"unknown ticket", req{path: "/tickets/999999"}, 404, ""},
		{"non-numeric id", req{path: "/tickets/abc"}, 404, ""},
		{"wrong verb on collection", req{method: "PUT", path: "/tickets", body: `{}`}, 405, "GET, POST"},
		{"wrong verb on filter", req{method: "POST", path: "/tickets/filter", body: `{}`}, 405, "GET"},
		{"agents cannot be deleted", req{method: "DELETE", path: "/agents/21000000001"}, 405, "GET, PUT"},
		{"read-only collection", req{method: "POST", path: "/products", body: `{}`}, 405, "GET"},
		{"non-JSON body", req{method: "POST", path: "/tickets", body: "email=a@b.c", contentType: "application/x-www-form-urlencoded"}, 415, ""},
		{"XML body", req{method: "PUT", path: fmt.Sprintf("/tickets/%d", tk.ID), body: "<t/>", contentType: "application/xml"}, 415, ""},
		{"Accept not JSON", req{path: "/tickets", header: map[string]string{"Accept": "text/html"}}, 406, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, sd.s, tt.r).want(t, tt.status)
			if tt.allow != "" && r.header.Get("Allow") != tt.allow {
				t.Errorf("Allow = %q, want %q", r.header.Get("Allow"), tt.allow)
			}
			if r.body["code"] == nil {
				t.Errorf("error body without code: %s", r.raw)
			}
		})
	}
}

func TestCreateTicket(t *testing.T) {
	sd := newSeeded(t)
	sd.s.Desk.AddStatus(6, "Waiting on vendor")
	tests := []struct {
		name      string
		body      string
		status    int
		errFields []string // fields that must carry an error
		code      string   // code of the first field's error
	}{
		{"neither email nor requester_id", `{"subject":"s"}`, 400, []string{"requester_id", "email"}, "missing_field"},
		{"unknown requester_id", `{"requester_id":123}`, 400, []string{"requester_id"}, "invalid_value"},
		{"status not a choice", fmt.Sprintf(`{"requester_id":%d,"status":99}`, sd.req.ID), 400, []string{"status"}, "invalid_value"},
		{"priority out of range", fmt.Sprintf(`{"requester_id":%d,"priority":7}`, sd.req.ID), 400, []string{"priority"}, "invalid_value"},
		{"unknown field", fmt.Sprintf(`{"requester_id":%d,"colour":"red"}`, sd.req.ID), 400, []string{"colour"}, "invalid_field"},
		{"wrong type", fmt.Sprintf(`{"requester_id":%d,"priority":"high"}`, sd.req.ID), 400, []string{"priority"}, "datatype_mismatch"},
		{"unknown responder", fmt.Sprintf(`{"requester_id":%d,"responder_id":5}`, sd.req.ID), 400, []string{"responder_id"}, "invalid_value"},
		{"unknown custom field", fmt.Sprintf(`{"requester_id":%d,"custom_fields":{"nope":1}}`, sd.req.ID), 400, []string{"nope"}, "invalid_value"},
		{"bad due_by", fmt.Sprintf(`{"requester_id":%d,"due_by":"tomorrow"}`, sd.req.ID), 400, []string{"due_by"}, "invalid_value"},
		{"invalid JSON", `{"subject":`, 400, []string{""}, "invalid_json"},
		{"custom status", fmt.Sprintf(`{"requester_id":%d,"status":6}`, sd.req.ID), 201, nil, ""},
		{"by requester_id", fmt.Sprintf(`{"requester_id":%d,"subject":"VPN down","priority":4,"responder_id":%d,"group_id":%d,"tags":["vpn"]}`, sd.req.ID, sd.agent.ID, sd.group.ID), 201, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, sd.s, req{method: "POST", path: "/tickets", body: tt.body}).want(t, tt.status)
			for i, f := range tt.errFields {
				code := r.fieldErr(f)
				if code == "" || (i == 0 && code != tt.code) {
					t.Errorf("field %q: code %q, want %q; body %s", f, code, tt.code, r.raw)
				}
			}
			if tt.status == 201 {
				id := num(r.obj("ticket")["id"])
				if loc := r.header.Get("Location"); loc != fmt.Sprintf("%s/api/v2/tickets/%d", sd.s.URL, id) {
					t.Errorf("Location = %q", loc)
				}
			}
		})
	}

	t.Run("unknown email creates the requester", func(t *testing.T) {
		r := do(t, sd.s, req{method: "POST", path: "/tickets", body: `{"email":"new.person@example.com","name":"New Person","subject":"Hello"}`}).want(t, 201)
		rid := num(r.obj("ticket")["requester_id"])
		if rid < 1<<31 {
			t.Errorf("requester id %d: want a large id (int64)", rid)
		}
		rq := get(t, sd.s, fmt.Sprintf("/requesters/%d", rid)).want(t, 200).obj("requester")
		if rq["primary_email"] != "new.person@example.com" || rq["first_name"] != "New" {
			t.Errorf("created requester = %v", rq)
		}
		// A second ticket by the same e-mail reuses the requester.
		r2 := do(t, sd.s, req{method: "POST", path: "/tickets", body: `{"email":"NEW.person@example.com"}`}).want(t, 201)
		if num(r2.obj("ticket")["requester_id"]) != rid {
			t.Errorf("second ticket requester %v, want %d", r2.obj("ticket")["requester_id"], rid)
		}
	})

	t.Run("defaults and wire shape", func(t *testing.T) {
		r := do(t, sd.s, req{method: "POST", path: "/tickets", body: fmt.Sprintf(`{"requester_id":%d}`, sd.req.ID)}).want(t, 201)
		tk := r.obj("ticket")
		if num(tk["status"]) != 2 || num(tk["priority"]) != 1 || num(tk["source"]) != 2 || num(tk["workspace_id"]) != sdsim.DefaultWorkspaceID {
			t.Errorf("defaults: %s", r.raw)
		}
		for _, k := range []string{"responder_id", "group_id", "category", "requested_for_id"} {
			v, present := tk[k]
			if !present || v != nil {
				t.Errorf("%s = %v (present %v), want an explicit null", k, v, present)
			}
		}
		for _, k := range []string{"created_at", "updated_at", "due_by", "fr_due_by"} {
			if s, _ := tk[k].(string); !stampRE.MatchString(s) {
				t.Errorf("%s = %q, want YYYY-MM-DDTHH:MM:SSZ", k, tk[k])
			}
		}
		if tk["created_at"] != sd.clock.Now().Format(time.RFC3339) {
			t.Errorf("created_at %v, want the desk clock %v", tk["created_at"], sd.clock.Now())
		}
	})
}

func TestViewIncludes(t *testing.T) {
	sd := newSeeded(t)
	d := sd.s.Desk
	asset := d.AddAsset(sdsim.Asset{Name: "Laptop", AssetTypeID: 1})
	prob := d.AddProblem(sdsim.Problem{Subject: "VPN flaps", RequesterID: sd.agent.ID})
	tk := sd.ticket(sdsim.Ticket{Subject: "VPN", ProblemID: prob.ID, AssetDisplayIDs: []int64{asset.DisplayID}, ChildIDs: []int64{7}, Tags: []string{"vpn"}})
	for i := range 12 {
		d.AddConversation(sdsim.Conversation{TicketID: tk.ID, UserID: sd.agent.ID, Body: fmt.Sprintf("note %d", i), Source: 2, Private: true})
	}
	tests := []struct {
		include string
		check   func(t *testing.T, tk map[string]any)
	}{
		{"conversations", func(t *testing.T, tk map[string]any) {
			if l, _ := tk["conversations"].([]any); len(l) != 10 {
				t.Errorf("conversations: %d, want the first 10", len(l))
			}
		}},
		{"requester", func(t *testing.T, tk map[string]any) {
			if m, _ := tk["requester"].(map[string]any); m["email"] != "rita@example.com" || m["name"] != "Rita Requester" {
				t.Errorf("requester = %v", tk["requester"])
			}
		}},
		{"requested_for", func(t *testing.T, tk map[string]any) {
			if v, ok := tk["requested_for"]; !ok || v != nil {
				t.Errorf("requested_for = %v, want null", v)
			}
		}},
		{"stats", func(t *testing.T, tk map[string]any) {
			m, _ := tk["stats"].(map[string]any)
			if _, ok := m["resolved_at"]; !ok {
				t.Errorf("stats = %v", tk["stats"])
			}
		}},
		{"problem", func(t *testing.T, tk map[string]any) {
			if m, _ := tk["problem"].(map[string]any); m["subject"] != "VPN flaps" {
				t.Errorf("problem = %v", tk["problem"])
			}
		}},
		{"assets", func(t *testing.T, tk map[string]any) {
			if l, _ := tk["assets"].([]any); len(l) != 1 || l[0].(map[string]any)["name"] != "Laptop" {
				t.Errorf("assets = %v", tk["assets"])
			}
		}},
		{"tags", func(t *testing.T, tk map[string]any) {
			if l, _ := tk["tags"].([]any); len(l) != 1 || l[0] != "vpn" {
				t.Errorf("tags = %v", tk["tags"])
			}
		}},
		{"related_tickets", func(t *testing.T, tk map[string]any) {
			if m, _ := tk["related_tickets"].(map[string]any); len(m["child_ids"].([]any)) != 1 {
				t.Errorf("related_tickets = %v", tk["related_tickets"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.include, func(t *testing.T) {
			r := get(t, sd.s, fmt.Sprintf("/tickets/%d?include=%s", tk.ID, tt.include)).want(t, 200)
			tt.check(t, r.obj("ticket"))
		})
	}
	plain := get(t, sd.s, fmt.Sprintf("/tickets/%d", tk.ID)).want(t, 200).obj("ticket")
	for _, k := range []string{"conversations", "requester", "stats", "assets", "problem"} {
		if _, ok := plain[k]; ok {
			t.Errorf("%s embedded without include", k)
		}
	}
	r := get(t, sd.s, fmt.Sprintf("/tickets/%d?include=everything", tk.ID)).want(t, 400)
	if r.fieldErr("include") != "invalid_value" {
		t.Errorf("bad include: %s", r.raw)
	}
}

func TestUpdateTicket(t *testing.T) {
	sd := newSeeded(t)
	sd.s.Desk.AddStatus(7, "Scheduled")
	tk := sd.ticket(sdsim.Ticket{Subject: "x", ResponderID: sd.agent.ID, Tags: []string{"a", "b"}})
	path := fmt.Sprintf("/tickets/%d", tk.ID)
	tests := []struct {
		name   string
		body   string
		status int
		check  func(t *testing.T, tk map[string]any)
		field  string
	}{
		{"custom status", `{"status":7}`, 200, func(t *testing.T, tk map[string]any) {
			if num(tk["status"]) != 7 {
				t.Errorf("status %v", tk["status"])
			}
		}, ""},
		{"status not a choice", `{"status":99}`, 400, nil, "status"},
		{"tags replace", `{"tags":["c"]}`, 200, func(t *testing.T, tk map[string]any) {
			if fmt.Sprint(tk["tags"]) != "[c]" {
				t.Errorf("tags %v", tk["tags"])
			}
		}, ""},
		{"responder null unassigns", `{"responder_id":null}`, 200, func(t *testing.T, tk map[string]any) {
			if v, ok := tk["responder_id"]; !ok || v != nil {
				t.Errorf("responder_id %v", v)
			}
		}, ""},
		{"assign group and agent", fmt.Sprintf(`{"responder_id":%d,"group_id":%d,"priority":4}`, sd.agent.ID, sd.group.ID), 200, func(t *testing.T, tk map[string]any) {
			if num(tk["responder_id"]) != sd.agent.ID || num(tk["group_id"]) != sd.group.ID || num(tk["priority"]) != 4 {
				t.Errorf("ticket %v", tk)
			}
		}, ""},
		{"workspace is read-only", `{"workspace_id":3}`, 400, nil, "workspace_id"},
		{"unknown field", `{"bogus":1}`, 400, nil, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := sd.s.Desk.Ticket(tk.ID)
			sd.clock.Advance(time.Minute)
			r := do(t, sd.s, req{method: "PUT", path: path, body: tt.body}).want(t, tt.status)
			after, _ := sd.s.Desk.Ticket(tk.ID)
			if tt.status != 200 {
				if r.fieldErr(tt.field) == "" {
					t.Errorf("no error on %s: %s", tt.field, r.raw)
				}
				if !after.UpdatedAt.Equal(before.UpdatedAt) {
					t.Errorf("a refused update moved updated_at")
				}
				return
			}
			tt.check(t, r.obj("ticket"))
			if !after.UpdatedAt.Equal(sd.clock.Now()) {
				t.Errorf("updated_at %v, want now %v", after.UpdatedAt, sd.clock.Now())
			}
		})
	}
	// Resolving records stats.resolved_at.
	do(t, sd.s, req{method: "PUT", path: path, body: `{"status":4}`}).want(t, 200)
	st := get(t, sd.s, path+"?include=stats").want(t, 200).obj("ticket")["stats"].(map[string]any)
	if st["resolved_at"] != sd.clock.Now().Format(time.RFC3339) {
		t.Errorf("stats after resolve = %v", st)
	}
}

func TestSoftDeleteAndRestore(t *testing.T) {
	sd := newSeeded(t)
	tk := sd.ticket(sdsim.Ticket{Subject: "to delete"})
	other := sd.ticket(sdsim.Ticket{Subject: "stays"})
	path := fmt.Sprintf("/tickets/%d", tk.ID)
	listed := func(q string) []int64 { return ids(get(t, sd.s, "/tickets"+q).want(t, 200).list("tickets")) }

	r := do(t, sd.s, req{method: "DELETE", path: path}).want(t, 204)
	if len(r.raw) != 0 {
		t.Errorf("204 with a body: %s", r.raw)
	}
	if v := get(t, sd.s, path).want(t, 200).obj("ticket")["deleted"]; v != true {
		t.Errorf("deleted = %v after delete", v)
	}
	if got := listed(""); !slices.Equal(got, []int64{other.ID}) {
		t.Errorf("list after delete = %v", got)
	}
	if got := listed("?filter=deleted"); !slices.Equal(got, []int64{tk.ID}) {
		t.Errorf("filter=deleted = %v", got)
	}
	q := url.PathEscape(`"priority:1"`)
	if got := ids(get(t, sd.s, "/tickets/filter?query="+q).want(t, 200).list("tickets")); slices.Contains(got, tk.ID) {
		t.Errorf("search finds a deleted ticket: %v", got)
	}
	do(t, sd.s, req{method: "PUT", path: path + "/restore"}).want(t, 204)
	if v := get(t, sd.s, path).want(t, 200).obj("ticket")["deleted"]; v != false {
		t.Errorf("deleted = %v after restore", v)
	}
	if got := listed(""); len(got) != 2 {
		t.Errorf("list after restore = %v", got)
	}
	// The vendor schema and SDK restore with GET; the simulator accepts it too.
	do(t, sd.s, req{method: "DELETE", path: path}).want(t, 204)
	do(t, sd.s, req{method: "GET", path: path + "/restore"}).want(t, 204)
	if v := get(t, sd.s, path).want(t, 200).obj("ticket")["deleted"]; v != false {
		t.Errorf("deleted = %v after GET restore", v)
	}
	do(t, sd.s, req{method: "DELETE", path: "/tickets/424242"}).want(t, 404)
}

func TestListTickets(t *testing.T) {
	sd := newSeeded(t)
	now := sd.clock.Now()
	d := sd.s.Desk
	ws := d.AddWorkspace(sdsim.Workspace{Name: "HR"})
	var recent []int64
	for i := range 35 {
		tk := sd.ticket(sdsim.Ticket{Subject: fmt.Sprint(i), CreatedAt: now.Add(-time.Duration(i+1) * time.Hour)})
		recent = append(recent, tk.ID)
	}
	old := sd.ticket(sdsim.Ticket{Subject: "old", CreatedAt: now.Add(-40 * 24 * time.Hour), UpdatedAt: now.Add(-2 * time.Hour)})
	ancient := sd.ticket(sdsim.Ticket{Subject: "ancient", CreatedAt: now.Add(-90 * 24 * time.Hour)})
	mine := sd.ticket(sdsim.Ticket{Subject: "mine", ResponderID: sdsim.DefaultAgentID, CreatedAt: now.Add(-time.Minute)})
	sd.ticket(sdsim.Ticket{Subject: "someone else's", ResponderID: sd.agent.ID, CreatedAt: now.Add(-time.Minute)})
	watched := sd.ticket(sdsim.Ticket{Subject: "watched", WatcherIDs: []int64{sdsim.DefaultAgentID}, ResponderID: sd.agent.ID, Status: 3, CreatedAt: now.Add(-time.Minute)})
	spam := sd.ticket(sdsim.Ticket{Subject: "spam", Spam: true, CreatedAt: now.Add(-time.Minute)})
	hr := sd.ticket(sdsim.Ticket{Subject: "hr", WorkspaceID: ws.ID, CreatedAt: now.Add(-time.Minute)})

	t.Run("default page and Link", func(t *testing.T) {
		r := get(t, sd.s, "/tickets").want(t, 200)
		if n := len(r.list("tickets")); n != 30 {
			t.Errorf("page 1 has %d tickets, want 30", n)
		}
		link := r.header.Get("Link")
		if !strings.Contains(link, `page=2`) || !strings.HasSuffix(link, `>; rel="next"`) || !strings.HasPrefix(link, "<"+sd.s.URL+"/api/v2/tickets?") {
			t.Errorf("Link = %q", link)
		}
		r2 := get(t, sd.s, "/tickets?page=2").want(t, 200)
		if r2.header.Get("Link") != "" {
			t.Errorf("last page has a Link: %q", r2.header.Get("Link"))
		}
		all := append(ids(r.list("tickets")), ids(r2.list("tickets"))...)
		if slices.Contains(all, old.ID) || slices.Contains(all, ancient.ID) {
			t.Errorf("tickets older than 30 days listed without updated_since")
		}
		if slices.Contains(all, spam.ID) || slices.Contains(all, hr.ID) {
			t.Errorf("spam or other-workspace ticket listed")
		}
		if len(all) != 35+3 {
			t.Errorf("listed %d tickets, want 38", len(all))
		}
	})
	t.Run("updated_since reaches old tickets", func(t *testing.T) {
		since := now.Add(-3 * time.Hour).Format(time.RFC3339)
		got := ids(get(t, sd.s, "/tickets?per_page=100&updated_since="+since).want(t, 200).list("tickets"))
		if !slices.Contains(got, old.ID) || slices.Contains(got, ancient.ID) {
			t.Errorf("updated_since list = %v", got)
		}
	})
	t.Run("order asc", func(t *testing.T) {
		got := ids(get(t, sd.s, "/tickets?order_by=created_at&order_type=asc&per_page=3").want(t, 200).list("tickets"))
		if !slices.Equal(got, []int64{recent[34], recent[33], recent[32]}) {
			t.Errorf("oldest first = %v", got)
		}
	})
	presets := []struct {
		q    string
		want []int64
	}{
		{"?filter=watching", []int64{watched.ID}},
		{"?filter=spam", []int64{spam.ID}},
		{"?workspace_id=" + fmt.Sprint(ws.ID), []int64{hr.ID}},
	}
	for _, p := range presets {
		t.Run(p.q, func(t *testing.T) {
			if got := ids(get(t, sd.s, "/tickets"+p.q).want(t, 200).list("tickets")); !slices.Equal(got, p.want) {
				t.Errorf("got %v, want %v", got, p.want)
			}
		})
	}
	t.Run("new_and_my_open", func(t *testing.T) {
		got := ids(get(t, sd.s, "/tickets?filter=new_and_my_open&per_page=100").want(t, 200).list("tickets"))
		if !slices.Contains(got, mine.ID) || slices.Contains(got, watched.ID) || len(got) != 36 {
			t.Errorf("new_and_my_open = %v", got)
		}
	})
	bad := []struct{ q, field string }{
		{"?per_page=101", "per_page"}, {"?per_page=0", "per_page"}, {"?page=0", "page"}, {"?page=x", "page"},
		{"?filter=mine", "filter"}, {"?order_by=subject", "order_by"}, {"?order_type=up", "order_type"},
		{"?updated_since=yesterday", "updated_since"}, {"?include=assets", "include"}, {"?workspace_id=77", "workspace_id"},
	}
	for _, b := range bad {
		t.Run(b.q, func(t *testing.T) {
			if r := get(t, sd.s, "/tickets"+b.q).want(t, 400); r.fieldErr(b.field) == "" {
				t.Errorf("no error on %s: %s", b.field, r.raw)
			}
		})
	}
	t.Run("list include", func(t *testing.T) {
		tk := get(t, sd.s, "/tickets?include=requester,stats&per_page=1").want(t, 200).list("tickets")[0].(map[string]any)
		if tk["requester"] == nil || tk["stats"] == nil {
			t.Errorf("list embeds missing: %v", tk)
		}
	})
}

func filterPath(q string, extra string) string {
	return "/tickets/filter?query=" + url.PathEscape(`"`+q+`"`) + extra
}

func TestFilter(t *testing.T) {
	sd := newSeeded(t)
	now := sd.clock.Now()
	d := sd.s.Desk
	d.AddStatus(6, "Waiting on vendor")
	d.AddCustomField(sdsim.CustomField{Name: "environment", Kind: sdsim.FieldString, Choices: []string{"Production", "Staging"}})
	hr := d.AddWorkspace(sdsim.Workspace{Name: "HR"})
	var unassignedUrgent []int64
	for i := range 70 {
		tk := sdsim.Ticket{Subject: fmt.Sprint(i), Priority: 1 + i%4, Status: []int{2, 3, 6, 4}[i%4], CreatedAt: now.Add(-time.Duration(i) * time.Hour)}
		if i%3 == 0 {
			tk.ResponderID = sd.agent.ID
		}
		if i%5 == 0 {
			tk.Tags = []string{"vpn"}
			tk.CustomFields = map[string]any{"environment": "Production"}
		}
		tk = sd.ticket(tk)
		if tk.ResponderID == 0 && tk.Priority == 4 {
			unassignedUrgent = append(unassignedUrgent, tk.ID)
		}
	}
	hrTicket := sd.ticket(sdsim.Ticket{Subject: "hr", WorkspaceID: hr.ID, Priority: 4})

	search := func(t *testing.T, path string) (ids64 []int64, total int64) {
		t.Helper()
		r := get(t, sd.s, path).want(t, 200)
		if _, ok := r.body["total"]; !ok {
			t.Fatalf("no total: %s", r.raw)
		}
		return ids(r.list("tickets")), num(r.body["total"])
	}
	t.Run("agent_id:0 and agent_id:null are the same", func(t *testing.T) {
		a, ta := search(t, filterPath("agent_id:0 AND priority:4", ""))
		b, tb := search(t, filterPath("agent_id:null AND priority:4", ""))
		if !slices.Equal(a, b) || ta != tb || ta != int64(len(unassignedUrgent)) {
			t.Errorf("agent_id:0 %v (%d) vs null %v (%d), want %d", a, ta, b, tb, len(unassignedUrgent))
		}
	})
	t.Run("pages of 30 until total", func(t *testing.T) {
		var all []int64
		p1, total := search(t, filterPath("priority:>2", ""))
		all = append(all, p1...)
		for page := 2; len(all) < int(total); page++ {
			p, tot := search(t, filterPath("priority:>2", fmt.Sprintf("&page=%d", page)))
			if tot != total || len(p) == 0 {
				t.Fatalf("page %d: total %d, %d tickets", page, tot, len(p))
			}
			all = append(all, p...)
		}
		if len(p1) != 30 || total != 52 || len(all) != 52 {
			t.Errorf("first page %d, total %d, walked %d", len(p1), total, len(all))
		}
		if r := get(t, sd.s, filterPath("priority:>2", "&page=3")); r.header.Get("Link") != "" {
			t.Errorf("filter sends a Link header")
		}
	})
	t.Run("custom status, tag, custom field, dates", func(t *testing.T) {
		if _, n := search(t, filterPath("status:6", "")); n != 17 {
			t.Errorf("status:6 total %d, want 17", n)
		}
		if _, n := search(t, filterPath("tag:'vpn' AND environment:'Production'", "")); n != 14 {
			t.Errorf("tag and custom field total %d, want 14", n)
		}
		day := now.Add(-24 * time.Hour).Format("2006-01-02")
		if _, n := search(t, filterPath("created_at:>'"+day+"'", "")); n == 0 || n == 70 {
			t.Errorf("created_at:> total %d", n)
		}
	})
	t.Run("workspace", func(t *testing.T) {
		got, _ := search(t, filterPath("priority:4", fmt.Sprintf("&workspace_id=%d", hr.ID)))
		if !slices.Equal(got, []int64{hrTicket.ID}) {
			t.Errorf("HR workspace search = %v", got)
		}
	})
	bad := []struct {
		name, rawQuery, field string
	}{
		{"missing query", "", "query"},
		{"no outer quotes", "?query=" + url.PathEscape("priority:4"), "query"},
		{"malformed", "?query=" + url.PathEscape(`"priority:4 AND"`), "query"},
		{"unknown field", "?query=" + url.PathEscape(`"colour:'red'"`), "query"},
		{"plus for spaces", "?query=" + strings.ReplaceAll(url.PathEscape(`"priority:4 AND status:2"`), "%20", "+"), "query"},
		{"too long", "?query=" + url.PathEscape(`"`+strings.Repeat("priority:4 OR ", 40)+`priority:4"`), "query"},
		{"workspace 0", "?query=" + url.PathEscape(`"priority:4"`) + "&workspace_id=0", "workspace_id"},
		{"bad page", "?query=" + url.PathEscape(`"priority:4"`) + "&page=-1", "page"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			r := get(t, sd.s, "/tickets/filter"+b.rawQuery).want(t, 400)
			if r.fieldErr(b.field) == "" {
				t.Errorf("no error on %s: %s", b.field, r.raw)
			}
			if msg := r.list("errors")[0].(map[string]any)["message"]; msg == "" {
				t.Errorf("empty message")
			}
		})
	}
}

func TestFilterPageSizeAndCap(t *testing.T) {
	s := newServer(t, sdsim.WithFilterPageSize(100), sdsim.WithFilterPageCap(2))
	for range 250 {
		s.Desk.AddTicket(sdsim.Ticket{Subject: "x", RequesterID: sdsim.DefaultAgentID})
	}
	for page, want := range map[int]int{1: 100, 2: 100} {
		r := get(t, s, filterPath("status:2", fmt.Sprintf("&page=%d", page))).want(t, 200)
		if len(r.list("tickets")) != want || num(r.body["total"]) != 250 {
			t.Errorf("page %d: %d tickets, total %v", page, len(r.list("tickets")), r.body["total"])
		}
	}
	if r := get(t, s, filterPath("status:2", "&page=3")).want(t, 400); r.fieldErr("page") != "invalid_value" ||
		!strings.Contains(string(r.raw), "You cannot access tickets beyond the 2nd page") {
		t.Errorf("page beyond the cap: %s", r.raw)
	}
}

func TestIndexLag(t *testing.T) {
	sd := newSeeded(t, sdsim.WithIndexLag(5*time.Minute))
	old := sd.ticket(sdsim.Ticket{Subject: "old", Priority: 2, CreatedAt: sd.clock.Now().Add(-time.Hour)})
	created := do(t, sd.s, req{method: "POST", path: "/tickets", body: fmt.Sprintf(`{"requester_id":%d,"priority":2}`, sd.req.ID)}).want(t, 201)
	newID := num(created.obj("ticket")["id"])
	do(t, sd.s, req{method: "PUT", path: fmt.Sprintf("/tickets/%d", old.ID), body: `{"priority":4}`}).want(t, 200)

	search := func(q string) []int64 { return ids(get(t, sd.s, filterPath(q, "")).want(t, 200).list("tickets")) }
	if got := search("priority:2"); !slices.Equal(got, []int64{old.ID}) {
		t.Errorf("within the lag, priority:2 = %v, want only the old ticket's stale version", got)
	}
	if got := search("priority:4"); len(got) != 0 {
		t.Errorf("within the lag, priority:4 = %v, want nothing", got)
	}
	// GET /tickets/{id} is always current.
	if p := num(get(t, sd.s, fmt.Sprintf("/tickets/%d", old.ID)).want(t, 200).obj("ticket")["priority"]); p != 4 {
		t.Errorf("view priority = %d, want 4", p)
	}
	sd.clock.Advance(5 * time.Minute)
	if got := search("priority:2"); !slices.Equal(got, []int64{newID}) {
		t.Errorf("after the lag, priority:2 = %v, want [%d]", got, newID)
	}
	if got := search("priority:4"); !slices.Equal(got, []int64{old.ID}) {
		t.Errorf("after the lag, priority:4 = %v", got)
	}
}

func TestConversations(t *testing.T) {
	sd := newSeeded(t)
	tk := sd.ticket(sdsim.Ticket{Subject: "printer", CreatedAt: sd.clock.Now().Add(-time.Hour)})
	base := fmt.Sprintf("/tickets/%d", tk.ID)

	sd.clock.Advance(time.Minute)
	reply := do(t, sd.s, req{method: "POST", path: base + "/reply", body: `{"body":"<p>We are on it</p>"}`}).want(t, 201).obj("conversation")
	if num(reply["source"]) != 0 || reply["private"] != false || reply["support_email"] != sdsim.SupportEmail ||
		fmt.Sprint(reply["to_emails"]) != "[rita@example.com]" || reply["body_text"] != "We are on it" || num(reply["user_id"]) != sdsim.DefaultAgentID {
		t.Errorf("reply = %v", reply)
	}
	if after, _ := sd.s.Desk.Ticket(tk.ID); !after.UpdatedAt.Equal(sd.clock.Now()) {
		t.Errorf("reply did not bump updated_at")
	}
	sd.clock.Advance(time.Minute)
	note := do(t, sd.s, req{method: "POST", path: base + "/notes", body: `{"body":"internal"}`}).want(t, 201).obj("conversation")
	if num(note["source"]) != 2 || note["private"] != true || note["support_email"] != nil {
		t.Errorf("note = %v", note)
	}
	public := do(t, sd.s, req{method: "POST", path: base + "/notes", body: `{"body":"visible","private":false}`}).want(t, 201).obj("conversation")
	if public["private"] != false || num(public["source"]) != 2 {
		t.Errorf("public note = %v", public)
	}
	if after, _ := sd.s.Desk.Ticket(tk.ID); !after.UpdatedAt.Equal(sd.clock.Now()) {
		t.Errorf("note did not bump updated_at")
	}
	list := get(t, sd.s, base+"/conversations").want(t, 200).list("conversations")
	if got := ids(list); !slices.Equal(got, []int64{num(reply["id"]), num(note["id"]), num(public["id"])}) {
		t.Errorf("conversations = %v", got)
	}
	embedded := get(t, sd.s, base+"?include=conversations").want(t, 200).obj("ticket")["conversations"].([]any)
	if len(embedded) != 3 {
		t.Errorf("include=conversations has %d", len(embedded))
	}

	tests := []struct {
		name   string
		r      req
		status int
	}{
		{"reply without body", req{method: "POST", path: base + "/reply", body: `{"cc_emails":[]}`}, 400},
		{"reply from an unknown address", req{method: "POST", path: base + "/reply", body: `{"body":"x","from_email":"me@evil.test"}`}, 400},
		{"note with unknown field", req{method: "POST", path: base + "/notes", body: `{"body":"x","colour":1}`}, 400},
		{"note on unknown ticket", req{method: "POST", path: "/tickets/99999/notes", body: `{"body":"x"}`}, 404},
		{"edit a note", req{method: "PUT", path: fmt.Sprintf("/conversations/%d", num(note["id"])), body: `{"body":"edited"}`}, 200},
		{"edit a reply", req{method: "PUT", path: fmt.Sprintf("/conversations/%d", num(reply["id"])), body: `{"body":"edited"}`}, 405},
		{"edit unknown", req{method: "PUT", path: "/conversations/1", body: `{"body":"x"}`}, 404},
		{"delete a reply", req{method: "DELETE", path: fmt.Sprintf("/conversations/%d", num(reply["id"]))}, 204},
		{"delete again", req{method: "DELETE", path: fmt.Sprintf("/conversations/%d", num(reply["id"]))}, 404},
		{"conversations of unknown ticket", req{path: "/tickets/99999/conversations"}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, sd.s, tt.r).want(t, tt.status)
			if tt.status == 405 && r.header.Get("Allow") != "DELETE" {
				t.Errorf("Allow = %q", r.header.Get("Allow"))
			}
		})
	}
	convs := sd.s.Desk.Conversations(tk.ID)
	if len(convs) != 2 || convs[0].Body != "edited" {
		t.Errorf("after edit and delete: %+v", convs)
	}
}

func TestTimeEntries(t *testing.T) {
	sd := newSeeded(t)
	tk := sd.ticket(sdsim.Ticket{Subject: "x"})
	sd.s.Desk.AddTimeEntry(sdsim.TimeEntry{TicketID: tk.ID, AgentID: sd.agent.ID, TimeSpent: "01:30", Note: "fixed"})
	l := get(t, sd.s, fmt.Sprintf("/tickets/%d/time_entries", tk.ID)).want(t, 200).list("time_entries")
	if len(l) != 1 || l[0].(map[string]any)["time_spent"] != "01:30" {
		t.Errorf("time entries = %v", l)
	}
	get(t, sd.s, "/tickets/4242/time_entries").want(t, 404)
}

// A desk that sanitises bodies drops HTML comments from notes, replies and
// edited notes; a plain desk keeps them.
func TestHTMLCommentsStripped(t *testing.T) {
	for _, strip := range []bool{false, true} {
		var opts []sdsim.Option
		if strip {
			opts = append(opts, sdsim.WithHTMLCommentsStripped())
		}
		s := newServer(t, opts...)
		id := s.Desk.AddTicket(sdsim.Ticket{Subject: "x"}).ID
		base := fmt.Sprintf("/tickets/%d", id)
		body := `{"body":"Paged on-call.\n<!-- deskbot:f=r/1/1.1/0 -->"}`
		note := do(t, s, req{method: "POST", path: base + "/notes", body: body}).want(t, 201).obj("conversation")
		reply := do(t, s, req{method: "POST", path: base + "/reply", body: body}).want(t, 201).obj("conversation")
		edited := do(t, s, req{method: "PUT", path: fmt.Sprintf("/conversations/%d", num(note["id"])),
			body: `{"body":"a <!-- x --> b <!-- unterminated"}`}).want(t, 200).obj("conversation")
		want := []string{"Paged on-call.\n<!-- deskbot:f=r/1/1.1/0 -->", "Paged on-call.\n<!-- deskbot:f=r/1/1.1/0 -->", "a <!-- x --> b <!-- unterminated"}
		if strip {
			want = []string{"Paged on-call.", "Paged on-call.", "a  b "}
		}
		if got := []string{note["body"].(string), reply["body"].(string), edited["body"].(string)}; !slices.Equal(got, want) {
			t.Errorf("strip=%v: bodies %q, want %q", strip, got, want)
		}
	}
}

package sdclient

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The vendor SDK's recorded example responses (testdata/vendor, MIT, see its
// README) are served to the client, and the fields a person sees must come
// out: a renamed or retyped field fails here, not on a customer's desk.

func vendorExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vendor", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveVendor answers pattern with a vendor example; pick, when not nil,
// chooses the part of the file that is the response body.
func serveVendor(t *testing.T, mux *http.ServeMux, pattern string, status int, file string, pick func([]byte) []byte) {
	body := vendorExample(t, file)
	if pick != nil {
		body = pick(body)
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, status, string(body))
	})
}

// firstElement unwraps ticketsResponse.json, which the SDK keeps as an array
// around one list envelope.
func firstElement(t *testing.T) func([]byte) []byte {
	return func(b []byte) []byte {
		var arr []json.RawMessage
		if err := json.Unmarshal(b, &arr); err != nil || len(arr) != 1 {
			t.Fatalf("ticketsResponse.json: want a one-element array: %v", err)
		}
		return arr[0]
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkVendorTicket asserts what the vendor's example ticket shows: the same
// values in ticketsResponse.json and updateTicket200.json (the latter with
// one cc address).
func checkVendorTicket(t *testing.T, tk *Ticket, cc []string) {
	t.Helper()
	at := mustTime(t, "2021-11-22T16:58:45Z")
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", tk.ID, int64(14000239432)},
		{"subject", tk.Subject, `Printer not connected"`},
		{"description", tk.Description, "<div>How do I connect printer?</div>"},
		{"description_text", tk.DescriptionText, "How do I connect printer?"},
		{"status", tk.Status, StatusOpen},
		{"priority", tk.Priority, PriorityMedium},
		{"source", tk.Source, SourceEmail},
		{"type", tk.Type, "Incident"},
		{"requester_id", tk.RequesterID, int64(1400023894234)},
		{"is_escalated", tk.IsEscalated, true},
		{"fr_escalated", tk.FrEscalated, true},
		{"spam", tk.Spam, true},
		{"created_at", tk.CreatedAt, at},
		{"updated_at", tk.UpdatedAt, at},
		{"due_by set", tk.DueBy != nil && tk.DueBy.Equal(at), true},
		{"fr_due_by set", tk.FrDueBy != nil && tk.FrDueBy.Equal(at), true},
		{"tags", strings.Join(tk.Tags, ","), "Hardware,Network,VPN"},
		{"cc_emails", strings.Join(tk.CCEmails, ","), strings.Join(cc, ",")},
		{"fwd_emails", strings.Join(tk.FwdEmails, ","), strings.Join(cc, ",")},
		{"reply_cc_emails", strings.Join(tk.ReplyCCEmails, ","), strings.Join(cc, ",")},
		{"custom_fields.choice", tk.CustomFields["choice"], "First Choice"},
		{"custom_fields.employee_id", tk.CustomFields["employee_id"], "E1234"},
		{"attachments", len(tk.Attachments), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if len(tk.Attachments) == 1 {
		a := tk.Attachments[0]
		if a.ID != 14000884384 || a.Name != "doc1.pdf" || a.ContentType != "application/pdf" || a.Size != 1024 || a.AttachmentURL != "https://s3.amazonaws.com/fs/doc1.pdf" {
			t.Errorf("attachment = %+v", a)
		}
	}
	// Fields the example does not carry stay at their "absent" value.
	if tk.ResponderID != nil || tk.GroupID != nil || tk.Deleted {
		t.Errorf("absent fields set: responder %v group %v deleted %v", tk.ResponderID, tk.GroupID, tk.Deleted)
	}
}

func TestVendorExamples(t *testing.T) {
	c, mux, _ := setup(t)
	serveVendor(t, mux, "GET /tickets", 200, "ticketsResponse.json", firstElement(t))
	serveVendor(t, mux, "PUT /tickets/14000239432", 200, "updateTicket200.json", nil)
	serveVendor(t, mux, "GET /tickets/14000239432", 200, "updateTicket200.json", nil)
	serveVendor(t, mux, "GET /tickets/500/time_entries", 200, "timeEntries200.json", nil)
	serveVendor(t, mux, "GET /tickets/1", 400, "badRequest.json", nil)
	ctx := t.Context()

	t.Run("list tickets", func(t *testing.T) {
		list, _, err := c.Tickets.List(ctx, nil)
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %v, %d tickets", err, len(list))
		}
		checkVendorTicket(t, list[0], []string{"andrea@freshservice.com", "john.doe@freshservice.com"})
	})
	t.Run("update ticket", func(t *testing.T) {
		tk, _, err := c.Tickets.Update(ctx, 14000239432, &TicketUpdate{Priority: Ptr(PriorityMedium)})
		if err != nil {
			t.Fatal(err)
		}
		checkVendorTicket(t, tk, []string{"john.doe@freshservice.com"})
	})
	t.Run("get ticket", func(t *testing.T) {
		tk, _, err := c.Tickets.Get(ctx, 14000239432)
		if err != nil {
			t.Fatal(err)
		}
		checkVendorTicket(t, tk, []string{"john.doe@freshservice.com"})
	})
	t.Run("time entries", func(t *testing.T) {
		list, _, err := c.TimeEntries.List(ctx, 500, nil)
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %v, %d entries", err, len(list))
		}
		checkVendorTimeEntry(t, list[0])
	})
	t.Run("time entry envelope", func(t *testing.T) {
		var env struct {
			TimeEntry *TimeEntry `json:"time_entry"`
		}
		if err := json.Unmarshal(vendorExample(t, "timeEntry200.json"), &env); err != nil || env.TimeEntry == nil {
			t.Fatalf("decode: %v", err)
		}
		checkVendorTimeEntry(t, env.TimeEntry)
	})
	t.Run("bad request", func(t *testing.T) {
		_, _, err := c.Tickets.Get(ctx, 1)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || !errors.Is(err, ErrValidation) {
			t.Fatalf("err = %v", err)
		}
		if apiErr.Description != "Validation failed" || len(apiErr.Errors) != 1 {
			t.Fatalf("APIError = %+v", apiErr)
		}
		fe := apiErr.Errors[0]
		if fe.Field != "include" || fe.Code != "invalid_value" || !strings.Contains(fe.Message, "related_tickets") {
			t.Errorf("field error = %+v", fe)
		}
	})
}

func checkVendorTimeEntry(t *testing.T, e *TimeEntry) {
	t.Helper()
	if e.ID != 14702899 || e.TaskID == nil || *e.TaskID != 45 || e.AgentID != 14007423 || e.TimeSpent != "10:15" ||
		!e.TimerRunning || !e.Billable || e.Note == nil || *e.Note != "Spent time on task" {
		t.Errorf("time entry = %+v", e)
	}
	if e.StartTime == nil || !e.StartTime.Equal(mustTime(t, "2021-10-15T12:31:42Z")) ||
		e.ExecutedAt == nil || !e.ExecutedAt.Equal(mustTime(t, "2021-10-15T12:31:00Z")) ||
		!e.CreatedAt.Equal(mustTime(t, "2021-10-15T12:31:42Z")) || !e.UpdatedAt.Equal(mustTime(t, "2021-10-15T12:31:42Z")) {
		t.Errorf("time entry dates = %v %v %v %v", e.StartTime, e.ExecutedAt, e.CreatedAt, e.UpdatedAt)
	}
	if e.CustomFields["field1"] != "Value 1" || e.CustomFields["field2"] != "Value 2" {
		t.Errorf("custom fields = %v", e.CustomFields)
	}
}

// TestVendorExamplesMatchJS keeps the JSON copies paired with the published
// modules (testdata/vendor/js), so neither is edited alone by accident.
func TestVendorExamplesMatchJS(t *testing.T) {
	jsons, _ := filepath.Glob(filepath.Join("testdata", "vendor", "*.json"))
	mods, _ := filepath.Glob(filepath.Join("testdata", "vendor", "js", "*.js"))
	base := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))
		}
		slices.Sort(out)
		return out
	}
	if j, m := base(jsons), base(mods); len(j) == 0 || !slices.Equal(j, m) {
		t.Errorf("json %v, js %v", j, m)
	}
	for _, p := range jsons {
		b, err := os.ReadFile(p)
		if err != nil || !json.Valid(b) {
			t.Errorf("%s: not JSON (%v)", p, err)
		}
	}
}

// TestDocumentedShapes decodes objects shaped like the documentation's
// examples (#view_an_agent, #view_a_requester, #view_a_group,
// #update_a_conversation, #show_a_canned_response; values are ours) and
// checks the fields sdclient had dropped before decisions.md rows 12 and 13.
func TestDocumentedShapes(t *testing.T) {
	tests := []struct {
		name, body string
		check      func(t *testing.T, body []byte)
	}{
		{"agent", `{"id":7,"first_name":"Ann","last_name":"Lee","work_phone_number":"5564435","mobile_phone_number":"664345",
			"reporting_manager_id":9,"address":"Main St 1","time_zone":"Edinburgh","time_format":"12h","language":"en","location_id":3,
			"background_information":"","scoreboard_level_id":1,"member_of":[4,5],"member_of_pending_approval":[6],"observer_of_pending_approval":[],
			"can_see_all_tickets_from_associated_departments":true,"has_logged_in":true,
			"roles":[{"role_id":7,"assignment_scope":"specified_groups","groups":[4,5]}],"last_login_at":"2020-07-30T07:46:41Z"}`,
			func(t *testing.T, b []byte) {
				var a Agent
				if err := json.Unmarshal(b, &a); err != nil {
					t.Fatal(err)
				}
				if *a.WorkPhoneNumber != "5564435" || *a.MobilePhoneNumber != "664345" || *a.ReportingManagerID != 9 || *a.Address != "Main St 1" ||
					*a.TimeFormat != "12h" || *a.LocationID != 3 || *a.ScoreboardLevelID != 1 || !a.HasLoggedIn ||
					!a.CanSeeAllTicketsFromAssociatedDepartments || len(a.MemberOfPendingApproval) != 1 ||
					len(a.Roles) != 1 || a.Roles[0].RoleID != 7 || len(a.Roles[0].Groups) != 2 || a.LastLoginAt == nil {
					t.Errorf("agent = %+v", a)
				}
			}},
		{"requester", `{"id":8,"first_name":"Bo","primary_email":"bo@example.com","work_phone_number":"62442","mobile_phone_number":"77762442",
			"reporting_manager_id":7,"address":"Tower 2","time_zone":"Edinburgh","time_format":"12h","language":"en","location_id":2,
			"background_information":"x","has_logged_in":false,"can_see_all_tickets_from_associated_departments":true,
			"created_at":"2020-03-30T07:46:41Z","updated_at":"2020-03-31T07:46:41Z"}`,
			func(t *testing.T, b []byte) {
				var r Requester
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatal(err)
				}
				if *r.WorkPhoneNumber != "62442" || *r.MobilePhoneNumber != "77762442" || *r.ReportingManagerID != 7 || *r.Address != "Tower 2" ||
					*r.TimeZone != "Edinburgh" || *r.TimeFormat != "12h" || *r.Language != "en" || *r.LocationID != 2 ||
					*r.BackgroundInformation != "x" || !r.CanSeeAllTicketsFromAssociatedDepartments || r.CreatedAt.IsZero() || r.UpdatedAt.IsZero() {
					t.Errorf("requester = %+v", r)
				}
			}},
		{"group", `{"id":5,"name":"Linux","business_hours_id":2,"auto_ticket_assign":true,"restricted":true,"approval_required":true,
			"members":[10003024749],"observers":[],"leaders":[10003024749],"members_pending_approval":[10002590061],
			"observers_pending_approval":[],"leaders_pending_approval":[]}`,
			func(t *testing.T, b []byte) {
				var g Group
				if err := json.Unmarshal(b, &g); err != nil {
					t.Fatal(err)
				}
				if *g.BusinessHoursID != 2 || !g.AutoTicketAssign || !g.Restricted || !g.ApprovalRequired ||
					g.Members[0] != 10003024749 || g.MembersPendingApproval[0] != 10002590061 {
					t.Errorf("group = %+v", g)
				}
			}},
		{"conversation", `{"id":3,"body":"b","attachments":[{"id":1,"content_type":"application/octet-stream","size":12,"name":"attachment.txt",
			"Attachment_url":"https://cdn.example.com/attachment.txt","created_at":"2017-09-11T10:07:54Z","updated_at":"2017-09-11T10:07:54Z"}]}`,
			func(t *testing.T, b []byte) {
				var c Conversation
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				if len(c.Attachments) != 1 || c.Attachments[0].Name != "attachment.txt" || c.Attachments[0].AttachmentURL != "https://cdn.example.com/attachment.txt" ||
					c.Attachments[0].Size != 12 || c.Attachments[0].CreatedAt == nil {
					t.Errorf("conversation attachments = %+v", c.Attachments)
				}
			}},
		{"canned response", `{"id":4,"title":"VPN","content":"c","content_html":"<p>c</p>","attachments":[{"id":2,"name":"vpn.pdf","size":3}]}`,
			func(t *testing.T, b []byte) {
				var cr CannedResponse
				if err := json.Unmarshal(b, &cr); err != nil {
					t.Fatal(err)
				}
				if len(cr.Attachments) != 1 || cr.Attachments[0].Name != "vpn.pdf" {
					t.Errorf("canned response attachments = %+v", cr.Attachments)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, []byte(tt.body)) })
	}
}

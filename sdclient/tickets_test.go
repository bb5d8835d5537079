package sdclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

func TestTicketsCreate(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("POST /tickets", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testBody(t, r, `{"subject":"Printer on fire","description":"<p>help</p>","email":"ann@example.com","priority":4,"status":2,"source":2,"tags":["hw"],"custom_fields":{"floor":3}}`)
		w.Header().Set("Location", "https://acme.example.com/api/v2/tickets/266")
		writeJSON(w, 201, `{"ticket":{"id":266,"subject":"Printer on fire","status":2,"priority":4,"responder_id":null,"workspace_id":3,"created_at":"2017-09-08T11:03:44Z"}}`)
	})
	tk, resp, err := c.Tickets.Create(t.Context(), &TicketCreate{
		Subject: "Printer on fire", Description: "<p>help</p>", Email: "ann@example.com",
		Priority: PriorityUrgent, Status: StatusOpen, Source: SourcePortal, Tags: []string{"hw"},
		CustomFields: map[string]any{"floor": 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID != 266 || tk.ResponderID != nil || *tk.WorkspaceID != 3 || !tk.CreatedAt.Equal(time.Date(2017, 9, 8, 11, 3, 44, 0, time.UTC)) {
		t.Errorf("ticket = %+v", tk)
	}
	if resp.StatusCode != 201 || resp.Header.Get("Location") == "" {
		t.Errorf("status %d location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestTicketsCreateValidation(t *testing.T) {
	c, mux, _ := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	cases := []struct {
		name string
		in   *TicketCreate
		want string
	}{
		{"nil", nil, "ticket is nil"},
		{"no requester", &TicketCreate{Subject: "x"}, "set email or requester_id"},
		{"bad email", &TicketCreate{Email: "not-an-address"}, "is not an e-mail address"},
		{"negative requester", &TicketCreate{RequesterID: -4}, "requester_id must be positive"},
	}
	for _, tc := range cases {
		_, _, err := c.Tickets.Create(t.Context(), tc.in)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "sdclient: create ticket: ") {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("%d requests sent", calls.Load())
	}
	// requester_id alone is enough.
	mux.HandleFunc("POST /tickets", func(w http.ResponseWriter, r *http.Request) {
		testBody(t, r, `{"requester_id":1000000678}`)
		writeJSON(w, 201, `{"ticket":{"id":1}}`)
	})
	if _, _, err := c.Tickets.Create(t.Context(), &TicketCreate{RequesterID: 1000000678}); err != nil {
		t.Fatal(err)
	}
}

func TestTicketsGetInclude(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/42", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, "include=conversations,requester,assets")
		writeJSON(w, 200, `{"ticket":{"id":42,"requester":{"id":5,"name":"Ann","email":"ann@example.com"},"conversations":[{"id":9,"private":true}],"assets":[{"id":1,"display_id":17}]}}`)
	})
	tk, _, err := c.Tickets.Get(t.Context(), 42, "conversations", "requester", "assets")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Requester == nil || tk.Requester.Email != "ann@example.com" || len(tk.Conversations) != 1 || !tk.Conversations[0].Private || tk.Assets[0].DisplayID != 17 {
		t.Errorf("embeds not decoded: %+v", tk)
	}
	if _, _, err := c.Tickets.Get(t.Context(), 42, "associated-assets"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad include: %v", err)
	}
	if _, _, err := c.Tickets.Get(t.Context(), 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("id 0: %v", err)
	}
}

func TestTicketsGetNotFound(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
	})
	_, resp, err := c.Tickets.Get(t.Context(), 404)
	if !errors.Is(err, ErrNotFound) || resp.StatusCode != 404 {
		t.Fatalf("err = %v", err)
	}
	if err.Error() != "sdclient: get ticket 404: 404 Not Found" {
		t.Errorf("message = %q", err)
	}
}

func TestTicketsList(t *testing.T) {
	c, mux, _ := setup(t)
	since := time.Date(2015, 1, 19, 2, 0, 0, 0, time.UTC)
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, "filter=new_and_my_open&include=stats&order_by=created_at&order_type=asc&page=2&per_page=50&updated_since=2015-01-19T02%3A00%3A00Z&workspace_id=3")
		writeJSON(w, 200, `{"tickets":[{"id":1},{"id":2}]}`)
	})
	ws := int64(3)
	got, resp, err := c.Tickets.List(t.Context(), &TicketListOptions{
		Filter: "new_and_my_open", UpdatedSince: &since, OrderBy: "created_at", OrderType: "asc",
		Include: []string{"stats"}, WorkspaceID: &ws, ListOptions: ListOptions{Page: 2, PerPage: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ID != 2 || resp.NextPage != 0 {
		t.Errorf("got %d tickets, next %d", len(got), resp.NextPage)
	}
	for _, bad := range []*TicketListOptions{{Filter: "all"}, {OrderType: "up"}, {Include: []string{"assets"}}} {
		if _, _, err := c.Tickets.List(t.Context(), bad); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}

func TestTicketsListAllFollowsLink(t *testing.T) {
	c, mux, _ := setup(t)
	var pages []string
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		pages = append(pages, r.URL.RawQuery)
		n, _ := strconv.Atoi(page)
		if n == 0 {
			n = 1
		}
		if n < 3 {
			w.Header().Set("Link", fmt.Sprintf(`<https://acme.example.com/api/v2/tickets?order_type=asc&per_page=100&page=%d>; rel="next"`, n+1))
		}
		writeJSON(w, 200, fmt.Sprintf(`{"tickets":[{"id":%d},{"id":%d}]}`, n*10, n*10+1))
	})
	var ids []int64
	for tk, err := range c.Tickets.ListAll(t.Context(), &TicketListOptions{OrderType: "asc"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	if fmt.Sprint(ids) != "[10 11 20 21 30 31]" {
		t.Errorf("ids = %v", ids)
	}
	want := []string{"order_type=asc&per_page=100", "order_type=asc&page=2&per_page=100", "order_type=asc&page=3&per_page=100"}
	if fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Errorf("queries = %q, want %q", pages, want)
	}
}

func TestListAllStopsOnNonAdvancingLink(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://acme.example.com/api/v2/tickets?page=1>; rel="next"`)
		writeJSON(w, 200, `{"tickets":[{"id":1}]}`)
	})
	var n int
	var last error
	for _, err := range c.Tickets.ListAll(t.Context(), nil) {
		n++
		last = err
		if n > 5 {
			t.Fatal("loops")
		}
	}
	if last == nil || !strings.Contains(last.Error(), "does not follow") {
		t.Errorf("last = %v", last)
	}
}

// A next link the client cannot follow (no page number) ends the walk with
// an error, never silently as if every page had been read.
func TestListAllReportsUnfollowableLink(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://acme.example.com/api/v2/tickets?cursor=abc>; rel="next"`)
		writeJSON(w, 200, `{"tickets":[{"id":1}]}`)
	})
	var got []int64
	var last error
	for tk, err := range c.Tickets.ListAll(t.Context(), nil) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, tk.ID)
	}
	if len(got) != 1 || !errors.Is(last, ErrTruncated) || !strings.Contains(last.Error(), "no page number") {
		t.Errorf("walked %v, last error %v", got, last)
	}
}

func TestTicketsUpdate(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("PUT /tickets/42", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PUT")
		testBody(t, r, `{"status":3,"responder_id":null,"group_id":7,"tags":[]}`)
		writeJSON(w, 200, `{"ticket":{"id":42,"status":3,"responder_id":null,"group_id":7}}`)
	})
	tk, _, err := c.Tickets.Update(t.Context(), 42, &TicketUpdate{Status: Ptr(StatusPending), ResponderID: Ptr(int64(0)), GroupID: Ptr(int64(7)), Tags: &[]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != 3 || *tk.GroupID != 7 {
		t.Errorf("ticket = %+v", tk)
	}
	if _, _, err := c.Tickets.Update(t.Context(), 42, &TicketUpdate{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty update: %v", err)
	}
}

func TestTicketsUpdateValidationError(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("PUT /tickets/42", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 400, `{"description":"Validation failed","errors":[{"field":"status","message":"It should be one of the choice value","code":"invalid_value"}]}`)
	})
	_, _, err := c.Tickets.Update(t.Context(), 42, &TicketUpdate{Status: Ptr(99)})
	want := "sdclient: update ticket 42: 400 Validation failed: status: It should be one of the choice value"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, ErrValidation) || apiErr.Errors[0].Code != "invalid_value" || apiErr.Method != "PUT" || apiErr.Path != "/tickets/42" {
		t.Errorf("api error = %#v", apiErr)
	}
}

func TestTicketsDeleteRestore(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("DELETE /tickets/5", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "DELETE")
		w.WriteHeader(204)
	})
	mux.HandleFunc("PUT /tickets/5/restore", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PUT")
		w.WriteHeader(204)
	})
	if resp, err := c.Tickets.Delete(t.Context(), 5); err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete: %v", err)
	}
	if resp, err := c.Tickets.Restore(t.Context(), 5); err != nil || resp.StatusCode != 204 {
		t.Fatalf("restore: %v", err)
	}
}

func TestTicketsFilterEncoding(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/filter", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		raw := r.URL.RawQuery
		if strings.Contains(raw, "+") {
			t.Errorf("query has '+': %s", raw)
		}
		if !strings.HasPrefix(raw, "query=%22") || !strings.Contains(raw, "%20AND%20") || !strings.HasSuffix(raw, "&page=2&workspace_id=0") {
			t.Errorf("raw query = %s", raw)
		}
		q, _, _ := strings.Cut(strings.TrimPrefix(raw, "query="), "&")
		val, err := url.QueryUnescape(q)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(val, `"`) || !strings.HasSuffix(val, `"`) {
			t.Errorf("value not in double quotes: %s", val)
		}
		if _, err := filter.ParseQuoted(val); err != nil {
			t.Errorf("desk cannot read %s: %v", val, err)
		}
		if !strings.Contains(val, "tag:'on fire'") {
			t.Errorf("value = %s", val)
		}
		writeJSON(w, 200, `{"tickets":[{"id":3},{"id":4}],"total":42}`)
	})
	ws := int64(0)
	page, _, err := c.Tickets.Filter(t.Context(), "agent_id:null AND (status:2 OR status:3) AND tag:'on fire'", &FilterOptions{WorkspaceID: &ws, Page: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 42 || len(page.Tickets) != 2 || page.Tickets[1].ID != 4 {
		t.Errorf("page = %+v", page)
	}
}

func TestTicketsFilterRejectedBeforeSending(t *testing.T) {
	c, mux, _ := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	long := strings.TrimSuffix(strings.Repeat("priority:4 OR ", 60), " OR ")
	cases := []struct {
		name, q string
		is      error
	}{
		{"syntax", "status:(", nil},
		{"empty", "", nil},
		{"too long", long, filter.ErrTooLong},
		{"macro", "status:open", nil},
	}
	for _, tc := range cases {
		_, _, err := c.Tickets.Filter(t.Context(), tc.q, nil)
		if !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), "sdclient: filter tickets: query: ") {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.is)
		}
	}
	if _, _, err := c.Tickets.Filter(t.Context(), "priority:4", &FilterOptions{Page: -1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("page -1: %v", err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d requests sent", calls.Load())
	}
}

// filterServer serves total tickets with ids 1..total in pages of size,
// counting requests; dup repeats the last ticket of a page on the next.
func filterServer(t *testing.T, mux *http.ServeMux, total, size int, reportTotal int, calls *atomic.Int32) {
	mux.HandleFunc("GET /tickets/filter", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 {
			t.Errorf("page = %d", page)
		}
		var parts []string
		for id := (page-1)*size + 1; id <= min(page*size, total); id++ {
			parts = append(parts, fmt.Sprintf(`{"id":%d}`, id))
		}
		writeJSON(w, 200, fmt.Sprintf(`{"tickets":[%s],"total":%d}`, strings.Join(parts, ","), reportTotal))
	})
}

func collect(t *testing.T, seq func(func(*Ticket, error) bool)) ([]int64, error) {
	t.Helper()
	var ids []int64
	var last error
	for tk, err := range seq {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, tk.ID)
	}
	return ids, last
}

func TestTicketsFilterAllPaging(t *testing.T) {
	cases := []struct {
		name                   string
		total, size, reportTot int
		maxPages               int
		wantIDs, wantCalls     int
		truncated              bool
	}{
		{"30 a page, total reached", 75, 30, 75, 0, 75, 3, false},
		{"100 a page", 250, 100, 250, 0, 250, 3, false},
		{"exact multiple stops on total", 60, 30, 60, 0, 60, 2, false},
		{"total lies high: short page stops", 45, 30, 1000, 0, 45, 2, false},
		{"total lies high: empty page stops", 60, 30, 1000, 0, 60, 3, false},
		{"nothing", 0, 30, 0, 0, 0, 1, false},
		{"cap truncates", 100, 30, 100, 2, 60, 2, true},
		{"cap not needed", 50, 30, 50, 2, 50, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, mux, _ := setup(t)
			var calls atomic.Int32
			filterServer(t, mux, tc.total, tc.size, tc.reportTot, &calls)
			ids, err := collect(t, c.Tickets.FilterAll(t.Context(), "priority:4", &FilterOptions{MaxPages: tc.maxPages}))
			if len(ids) != tc.wantIDs || int(calls.Load()) != tc.wantCalls {
				t.Errorf("got %d tickets in %d requests, want %d in %d", len(ids), calls.Load(), tc.wantIDs, tc.wantCalls)
			}
			if tc.truncated != errors.Is(err, ErrTruncated) {
				t.Errorf("err = %v, truncated want %v", err, tc.truncated)
			}
			if !tc.truncated && err != nil {
				t.Errorf("err = %v", err)
			}
			if tc.truncated && !strings.Contains(err.Error(), "60 of 100") {
				t.Errorf("message = %v", err)
			}
		})
	}
}

func TestTicketsFilterAllDedupesAndStopsEarly(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/filter", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("page") {
		case "1":
			writeJSON(w, 200, `{"tickets":[{"id":1},{"id":2}],"total":4}`)
		case "2": // index shifted: ticket 2 again
			writeJSON(w, 200, `{"tickets":[{"id":2},{"id":3}],"total":4}`)
		case "3":
			writeJSON(w, 200, `{"tickets":[{"id":4}],"total":4}`)
		default:
			t.Errorf("page %s requested", r.URL.Query().Get("page"))
		}
	})
	ids, err := collect(t, c.Tickets.FilterAll(t.Context(), "priority:4", nil))
	if err != nil || fmt.Sprint(ids) != "[1 2 3 4]" {
		t.Errorf("ids = %v err = %v", ids, err)
	}
	// Stopping the loop early sends no more requests.
	for range c.Tickets.FilterAll(t.Context(), "priority:4", nil) {
		break
	}
}

func TestTicketsFilterAllError(t *testing.T) {
	c, mux, _ := setup(t, WithMaxAttempts(1))
	mux.HandleFunc("GET /tickets/filter", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, 400, `{"description":"Validation failed","errors":[{"field":"query","message":"[:invalid_field]","code":"invalid_value"}]}`)
			return
		}
		writeJSON(w, 200, `{"tickets":[{"id":1}],"total":2}`)
	})
	ids, err := collect(t, c.Tickets.FilterAll(t.Context(), "priority:4", nil))
	if len(ids) != 1 || !errors.Is(err, ErrValidation) {
		t.Errorf("ids %v err %v", ids, err)
	}
}

package sdclient_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// End-to-end: the real client against the simulator over HTTP.

type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.d)
}

func e2e(t testing.TB, key string, opts ...sdsim.Option) (*sdsim.Server, *sdclient.Client, *waits) {
	t.Helper()
	s := sdsim.NewServer(opts...)
	t.Cleanup(s.Close)
	w := &waits{}
	// Every exchange is checked against the vendor schema's digest
	// (contract_test.go).
	c, err := sdclient.New(s.URL, key, sdclient.WithRatePerMinute(1_000_000), sdclient.WithSleep(w.sleep),
		sdclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: &contractTransport{t: t, inner: http.DefaultTransport}}))
	if err != nil {
		t.Fatal(err)
	}
	return s, c, w
}

// e2eOnFakeClock serves a desk limited to deskRate requests a minute and
// a client of it with its own rate and reserve, both on one fake clock. The
// client compares Retry-After with the context's (real) deadline: the fake
// clock starts behind real time so that the fake waits fit.
func e2eOnFakeClock(t *testing.T, deskRate, rate, reserve int) (*sdsim.Server, *sdclient.Client, *clockwork.FakeClock) {
	t.Helper()
	clk := clockwork.NewFakeClockAt(time.Now().Add(-time.Hour))
	s := sdsim.NewServer(sdsim.WithClock(clk.Now), sdsim.WithRateLimit(deskRate))
	t.Cleanup(s.Close)
	c, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithClock(clk), sdclient.WithRatePerMinute(rate),
		sdclient.WithReserve(reserve), sdclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return s, c, clk
}

type result[T any] struct {
	v   T
	err error
}

func must[T any](v T, _ *sdclient.Response, err error) result[T] { return result[T]{v, err} }

func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

// editor is a collection's create, update, get and delete (crud.go).
type editor[T, B any] interface {
	Create(ctx context.Context, body *B) (*T, *sdclient.Response, error)
	Update(ctx context.Context, id int64, body *B) (*T, *sdclient.Response, error)
	Get(ctx context.Context, id int64) (*T, *sdclient.Response, error)
	Delete(ctx context.Context, id int64) (*sdclient.Response, error)
}

// walk takes a collection through its life against the simulator: create
// an object, update it, read it, list the collection (list: its List) and
// delete the object; id is the object's path identifier.
func walk[T, B, P any](t *testing.T, s editor[T, B], list func(context.Context, P) ([]*T, *sdclient.Response, error), create, update *B, id func(*T) int64) {
	t.Helper()
	ctx := context.Background()
	v := must(s.Create(ctx, create)).get(t)
	must(s.Update(ctx, id(v), update)).get(t)
	must(s.Get(ctx, id(v))).get(t)
	var all P
	must(list(ctx, all)).get(t)
	if _, err := s.Delete(ctx, id(v)); err != nil {
		t.Error(err)
	}
}

func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestE2ETicketLifecycle(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey)
	ctx := context.Background()
	s.Desk.AddStatus(6, "Waiting on vendor")
	agent := s.Desk.AddAgent(sdsim.Agent{FirstName: "Sam", LastName: "Support", Email: "sam@example.com"})

	tk := must(c.Tickets.Create(ctx, &sdclient.TicketCreate{Email: "new.user@example.com", Subject: "VPN down", Priority: 4,
		ResponderID: agent.ID, Tags: []string{"vpn"}})).get(t)
	if tk.ID == 0 || tk.ResponderID == nil || *tk.ResponderID != agent.ID || tk.RequesterID < 1<<32 {
		t.Fatalf("created %+v", tk)
	}
	got := must(c.Tickets.Get(ctx, tk.ID, "requester", "stats", "conversations")).get(t)
	if got.Requester == nil || got.Requester.Email != "new.user@example.com" || got.Stats == nil || got.Conversations == nil && len(got.Conversations) != 0 {
		t.Errorf("get with include = %+v", got)
	}
	up := must(c.Tickets.Update(ctx, tk.ID, &sdclient.TicketUpdate{Status: sdclient.Ptr(6), Tags: &[]string{"vendor"}, ResponderID: sdclient.Ptr(int64(0))})).get(t)
	if up.Status != 6 || !slices.Equal(up.Tags, []string{"vendor"}) || up.ResponderID != nil {
		t.Errorf("updated %+v", up)
	}
	_, _, err := c.Tickets.Update(ctx, tk.ID, &sdclient.TicketUpdate{Status: sdclient.Ptr(99)})
	var apiErr *sdclient.APIError
	if !errors.Is(err, sdclient.ErrValidation) || !errors.As(err, &apiErr) || len(apiErr.Errors) == 0 || apiErr.Errors[0].Field != "status" {
		t.Errorf("status 99: %v", err)
	}
	if _, err := c.Tickets.Delete(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	if d := must(c.Tickets.Get(ctx, tk.ID)).get(t); !d.Deleted {
		t.Errorf("deleted ticket reads deleted=false")
	}
	deleted := must(c.Tickets.List(ctx, &sdclient.TicketListOptions{Filter: "deleted"})).get(t)
	if len(deleted) != 1 || deleted[0].ID != tk.ID {
		t.Errorf("filter=deleted = %v", deleted)
	}
	if _, err := c.Tickets.Restore(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	if d := must(c.Tickets.Get(ctx, tk.ID)).get(t); d.Deleted {
		t.Errorf("restored ticket still deleted")
	}
	if _, _, err := c.Tickets.Get(ctx, 424242); !errors.Is(err, sdclient.ErrNotFound) {
		t.Errorf("unknown ticket: %v", err)
	}

	// Conversations.
	reply := must(c.Conversations.Reply(ctx, tk.ID, &sdclient.ReplyRequest{Body: "<p>On it</p>"})).get(t)
	note := must(c.Conversations.Note(ctx, tk.ID, &sdclient.NoteRequest{Body: "internal", Private: true})).get(t)
	if reply.Source != sdclient.ConversationSourceEmail || reply.Private || len(reply.ToEmails) != 1 ||
		note.Source != sdclient.ConversationSourceNote || !note.Private {
		t.Errorf("reply %+v note %+v", reply, note)
	}
	edited := must(c.Conversations.Update(ctx, note.ID, "edited")).get(t)
	if edited.Body != "edited" {
		t.Errorf("edited note %+v", edited)
	}
	if _, _, err := c.Conversations.Update(ctx, reply.ID, "edit a reply"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("editing a reply: %v", err)
	}
	all := collect(t, c.Conversations.ListAll(ctx, tk.ID, nil))
	if len(all) != 2 {
		t.Errorf("conversations %d", len(all))
	}
	if _, err := c.Conversations.Delete(ctx, reply.ID); err != nil {
		t.Fatal(err)
	}
	if l := must(c.Conversations.List(ctx, tk.ID, nil)).get(t); len(l) != 1 {
		t.Errorf("after delete %d conversations", len(l))
	}
	s.Desk.AddTimeEntry(sdsim.TimeEntry{TicketID: tk.ID, AgentID: agent.ID, TimeSpent: "00:45"})
	if te := collect(t, c.TimeEntries.ListAll(ctx, tk.ID, nil)); len(te) != 1 {
		t.Errorf("time entries %d", len(te))
	}
}

func TestE2EFilterPaging(t *testing.T) {
	for _, size := range []int{30, 100} {
		t.Run("page size "+itoa(size), func(t *testing.T) {
			s, c, _ := e2e(t, sdsim.DefaultAPIKey, sdsim.WithFilterPageSize(size))
			for i := range 250 {
				s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Priority: 1 + i%2})
			}
			s.Desk.ResetRequests()
			ctx := context.Background()
			got := collect(t, c.Tickets.FilterAll(ctx, "priority:2 OR priority:1", nil))
			if len(got) != 250 {
				t.Errorf("walked %d tickets, want 250", len(got))
			}
			if n, want := len(s.Desk.Requests()), (250+size-1)/size; n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
			page := must(c.Tickets.Filter(ctx, "priority:2 AND agent_id:null", nil)).get(t)
			if page.Total != 125 || len(page.Tickets) != min(size, 125) {
				t.Errorf("one page: total %d, %d tickets", page.Total, len(page.Tickets))
			}
			// A page cap on the client reports truncation.
			var truncated error
			for _, err := range c.Tickets.FilterAll(ctx, "priority:1", &sdclient.FilterOptions{MaxPages: 1}) {
				if err != nil {
					truncated = err
				}
			}
			if size == 30 && !errors.Is(truncated, sdclient.ErrTruncated) {
				t.Errorf("MaxPages 1 over 125 results: %v", truncated)
			}
		})
	}
}

func TestE2EListAllFollowsLink(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey)
	now := time.Now()
	for i := range 230 {
		s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, CreatedAt: now.Add(-time.Duration(i)*24*time.Hour - time.Hour)})
	}
	s.Desk.ResetRequests()
	since := now.Add(-400 * 24 * time.Hour)
	got := collect(t, c.Tickets.ListAll(context.Background(), &sdclient.TicketListOptions{UpdatedSince: &since}))
	if len(got) != 230 {
		t.Errorf("ListAll walked %d, want 230", len(got))
	}
	if n := len(s.Desk.Requests()); n != 3 {
		t.Errorf("%d requests for 230 tickets at 100 a page", n)
	}
	recent := collect(t, c.Tickets.ListAll(context.Background(), nil))
	if len(recent) != 30 {
		t.Errorf("without updated_since: %d tickets, want the 30 of the last 30 days", len(recent))
	}
}

func TestE2EResources(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey, sdsim.WithGenerated(5, 40))
	ctx := context.Background()

	me := must(c.Agents.Me(ctx)).get(t)
	if me.ID != sdsim.DefaultAgentID {
		t.Errorf("me = %d", me.ID)
	}
	a := must(c.Agents.Create(ctx, &sdclient.AgentRequest{PersonRequest: sdclient.PersonRequest{FirstName: sdclient.Ptr("Kim")}, Email: sdclient.Ptr("kim@example.com"), Roles: []sdclient.AgentRole{{RoleID: 1, AssignmentScope: "entire_helpdesk"}}})).get(t)
	if byMail := must(c.Agents.GetByEmail(ctx, "kim@example.com")).get(t); byMail.ID != a.ID {
		t.Errorf("GetByEmail = %d", byMail.ID)
	}
	if _, _, err := c.Agents.GetByEmail(ctx, "nobody@example.com"); !errors.Is(err, sdclient.ErrNotFound) {
		t.Errorf("unknown e-mail: %v", err)
	}
	if _, _, err := c.Agents.Create(ctx, &sdclient.AgentRequest{PersonRequest: sdclient.PersonRequest{FirstName: sdclient.Ptr("K")}, Email: sdclient.Ptr("kim@example.com"), Roles: []sdclient.AgentRole{{RoleID: 1, AssignmentScope: "entire_helpdesk"}}}); !errors.Is(err, sdclient.ErrConflict) {
		t.Errorf("duplicate agent: %v", err)
	}
	must(c.Agents.Update(ctx, a.ID, &sdclient.AgentRequest{PersonRequest: sdclient.PersonRequest{JobTitle: sdclient.Ptr("Engineer")}})).get(t)
	must(c.Agents.Get(ctx, a.ID)).get(t)
	if agents := collect(t, c.Agents.ListAll(ctx, nil)); len(agents) < 15 {
		t.Errorf("%d agents", len(agents))
	}

	r := must(c.Requesters.Create(ctx, &sdclient.RequesterRequest{PersonRequest: sdclient.PersonRequest{FirstName: sdclient.Ptr("Ola")}, PrimaryEmail: sdclient.Ptr("ola@example.com")})).get(t)
	must(c.Requesters.Update(ctx, r.ID, &sdclient.RequesterRequest{PersonRequest: sdclient.PersonRequest{JobTitle: sdclient.Ptr("Accountant")}})).get(t)
	must(c.Requesters.Get(ctx, r.ID)).get(t)
	must(c.Requesters.List(ctx, nil)).get(t)

	walk(t, c.Groups, c.Groups.List, &sdclient.GroupRequest{Name: sdclient.Ptr("Printers")},
		&sdclient.GroupRequest{Description: sdclient.Ptr("toner")}, func(g *sdclient.Group) int64 { return g.ID })
	walk(t, c.Departments, c.Departments.List, &sdclient.DepartmentRequest{Name: sdclient.Ptr("Legal2")},
		&sdclient.DepartmentRequest{Description: sdclient.Ptr("law")}, func(d *sdclient.Department) int64 { return d.ID })
	walk(t, c.Assets, c.Assets.List, &sdclient.AssetRequest{Name: sdclient.Ptr("Laptop"), AssetTypeID: sdclient.Ptr(int64(21000000100))},
		&sdclient.AssetRequest{Description: sdclient.Ptr("spare")}, func(a *sdclient.Asset) int64 { return a.DisplayID })
	if p := must(c.Changes.Filter(ctx, "priority:1", nil)).get(t); p.Total == 0 || len(p.Changes) == 0 {
		t.Errorf("changes filter = %+v", p)
	}
	walk(t, c.Changes, c.Changes.List,
		&sdclient.ChangeRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Subject: sdclient.Ptr("Patch VPN")}, RequesterID: sdclient.Ptr(sdsim.DefaultAgentID)},
		&sdclient.ChangeRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Description: sdclient.Ptr("tonight")}}, func(c *sdclient.Change) int64 { return c.ID })
	walk(t, c.Problems, c.Problems.List,
		&sdclient.ProblemRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Subject: sdclient.Ptr("Flaky Wi-Fi")}, RequesterID: sdclient.Ptr(sdsim.DefaultAgentID)},
		&sdclient.ProblemRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Description: sdclient.Ptr("again")}}, func(p *sdclient.Problem) int64 { return p.ID })
	start := time.Now().Add(24 * time.Hour)
	end := start.Add(4 * time.Hour)
	walk(t, c.Releases, c.Releases.List,
		&sdclient.ReleaseRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Subject: sdclient.Ptr("Q3 image")}, PlannedStartDate: &start, PlannedEndDate: &end},
		&sdclient.ReleaseRequest{ServiceRecordRequest: sdclient.ServiceRecordRequest{Status: sdclient.Ptr(3)}}, func(r *sdclient.Release) int64 { return r.ID })

	cats := must(c.Solutions.ListCategories(ctx, nil)).get(t)
	folders := collect(t, c.Solutions.ListAllFolders(ctx, cats[0].ID, nil))
	if arts := collect(t, c.Solutions.ListAllArticles(ctx, folders[0].ID, nil)); len(arts) == 0 {
		t.Error("no articles")
	}
	if p := must(c.Products.List(ctx, nil)).get(t); len(p) == 0 {
		t.Error("no products")
	}
	if v := must(c.Vendors.List(ctx, nil)).get(t); len(v) == 0 {
		t.Error("no vendors")
	}
	if cr := must(c.CannedResponses.List(ctx, nil)).get(t); len(cr) == 0 {
		t.Error("no canned responses")
	}
	must(c.TicketFields.List(ctx, nil)).get(t)
	var statuses []int64
	for _, f := range must(c.TicketFormFields.List(ctx, nil)).get(t) {
		if f.Name == "status" {
			for _, ch := range f.Choices {
				statuses = append(statuses, ch.ID)
			}
		}
	}
	if !slices.Equal(statuses, []int64{2, 3, 4, 5, 6, 7}) {
		t.Errorf("status choices %v", statuses)
	}
	_ = s
}

func TestE2EErrorsAndRetries(t *testing.T) {
	s, c, w := e2e(t, sdsim.DefaultAPIKey, sdsim.WithGenerated(1, 20))
	ctx := context.Background()

	bad, err := sdclient.New(s.URL, "wrong-key", sdclient.WithSleep(w.sleep))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.Agents.Me(ctx); !errors.Is(err, sdclient.ErrUnauthorized) {
		t.Errorf("wrong key: %v", err)
	}
	ro, err := sdclient.New(s.URL, sdsim.ReadOnlyAPIKey, sdclient.WithSleep(w.sleep))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ro.Conversations.Note(ctx, 1, &sdclient.NoteRequest{Body: "x", Private: true}); !errors.Is(err, sdclient.ErrForbidden) {
		t.Errorf("read-only note: %v", err)
	}

	// A 429 is retried after Retry-After seconds.
	s.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultRateLimit, RetryAfter: 1, PathPrefix: "/api/v2/tickets/1"})
	_, resp, err := c.Tickets.Get(ctx, 1)
	if err != nil || resp.Attempts != 2 {
		t.Fatalf("after one 429: %v (attempts %v)", err, resp)
	}
	if ws := w.all(); len(ws) == 0 || ws[len(ws)-1] != time.Second {
		t.Errorf("waits %v, want the last to be Retry-After 1s", ws)
	}
	// A 500 on a GET is retried.
	s.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultServerError, Method: "GET"})
	if _, resp, err := c.Agents.Me(ctx); err != nil || resp.Attempts != 2 {
		t.Errorf("after one 500: %v", err)
	}
	// When 429s persist the caller gets a *RateLimitError with the wait.
	one, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithSleep(w.sleep), sdclient.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	s.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultRateLimit, RetryAfter: 1})
	_, _, err = one.Agents.Me(ctx)
	var rl *sdclient.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Errorf("persistent 429: %v", err)
	}
	// A dropped connection on a POST is not blindly retried.
	s.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultDrop, Method: "POST"})
	if _, _, err := c.Conversations.Note(ctx, 1, &sdclient.NoteRequest{Body: "x", Private: true}); err == nil {
		t.Errorf("dropped POST reported success")
	}
}

func itoa(n int) string {
	return string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

// The reserve for interactive callers holds against the simulator's real
// rate limiting: another integration spends the account, a background
// request gets a 429 and everybody waits Retry-After on the (fake) clock;
// later, with no more credits left than the reserve, background requests
// hold back while interactive ones go, and no further 429 is spent.
func TestE2EInteractiveAheadOfBackgroundThrough429(t *testing.T) {
	// The client compares Retry-After with the context's (real) deadline:
	// start the fake clock behind real time so that the fake waits fit.
	s, c, clk := e2eOnFakeClock(t, 20, 100, 5)
	bgTicket := s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Subject: "background"})
	inTicket := s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Subject: "interactive"})
	ic := c.Interactive()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	// Another integration spends the whole budget: 10 credits now, 10 at +20s.
	spend := func(n int) {
		for range n {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v2/agents/me", nil)
			req.SetBasicAuth(sdsim.DefaultAPIKey, "X")
			res, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
	}
	spend(10)
	clk.Advance(20 * time.Second)
	spend(10)
	clk.Advance(10 * time.Second) // t=30s: the first credits come back at t=60s
	count := func(path string, status int) int {
		n := 0
		for _, r := range s.Desk.Requests() {
			if r.Path == path && r.Status == status {
				n++
			}
		}
		return n
	}
	bgPath := "/api/v2/tickets/" + strconv.FormatInt(bgTicket.ID, 10)
	inPath := "/api/v2/tickets/" + strconv.FormatInt(inTicket.ID, 10)

	get := func(cl *sdclient.Client, id int64) chan error {
		ch := make(chan error, 1)
		go func() { _, _, err := cl.Tickets.Get(ctx, id); ch <- err }()
		return ch
	}
	// The background request meets the 429 (Retry-After 30) and sleeps on
	// the clock; an interactive one started meanwhile waits for the pause
	// too rather than spend another 429.
	bg := get(c, bgTicket.ID)
	if err := clk.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := count(bgPath, http.StatusTooManyRequests); n != 1 {
		t.Fatalf("%d 429s for the background request, want 1", n)
	}
	in := get(ic, inTicket.ID)
	if err := clk.BlockUntilContext(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if n := count(inPath, 0) + count(inPath, 200) + count(inPath, 429); n != 0 {
		t.Fatalf("interactive request sent during the pause")
	}
	clk.Advance(30 * time.Second) // t=60s: Retry-After is over, 10 credits back
	for _, ch := range []chan error{bg, in} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	// 8 credits are left, more than the reserve of 5: three interactive
	// requests bring them down to it. Then background holds back while
	// interactive requests still go.
	for i := range 3 {
		if _, _, err := ic.Tickets.Get(ctx, inTicket.ID); err != nil {
			t.Fatalf("interactive request %d: %v", i, err)
		}
	}
	bg = get(c, bgTicket.ID)
	if err := clk.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, _, err := ic.Tickets.Get(ctx, inTicket.ID); err != nil {
			t.Fatalf("interactive request %d in the reserve: %v", i, err)
		}
	}
	if n := count(bgPath, http.StatusOK); n != 1 {
		t.Fatalf("background request went into the reserve: %d served", n)
	}
	clk.Advance(time.Minute) // the desk's window has rolled
	if err := <-bg; err != nil {
		t.Fatal(err)
	}
	if n := count(bgPath, http.StatusTooManyRequests) + count(inPath, http.StatusTooManyRequests); n != 1 {
		t.Errorf("%d 429s in all, want only the first", n)
	}
	if n := count(inPath, http.StatusOK); n != 8 {
		t.Errorf("%d interactive requests served, want 8", n)
	}
}

// CustomFields reads the account's custom ticket fields from the form,
// with the kind a filter query compares each with; default fields are not
// among them.
func TestE2ECustomFields(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey)
	s.Desk.AddCustomField(sdsim.CustomField{Name: "location", Kind: sdsim.FieldString})
	s.Desk.AddCustomField(sdsim.CustomField{Name: "site", Kind: sdsim.FieldString, Choices: []string{"HQ", "Lab"}})
	s.Desk.AddCustomField(sdsim.CustomField{Name: "seats", Kind: sdsim.FieldNumber})
	s.Desk.AddCustomField(sdsim.CustomField{Name: "vip", Kind: sdsim.FieldBool})
	s.Desk.AddCustomField(sdsim.CustomField{Name: "go_live", Kind: sdsim.FieldDate})
	got, err := c.CustomFields(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]filter.Kind{"location": filter.KindString, "site": filter.KindString,
		"seats": filter.KindNumber, "vip": filter.KindBool, "go_live": filter.KindDate}
	if !maps.Equal(got, want) {
		t.Errorf("custom fields = %v, want %v", got, want)
	}
}

// The client's budget holds in the desk's credits: views with include=
// cost more, and a client configured at the desk's own rate never meets a
// 429 because of them.
func TestE2EIncludeCreditsWithinTheRate(t *testing.T) {
	s, c, clk := e2eOnFakeClock(t, 10, 10, 1)
	tk := s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Subject: "x"})
	ic := c.Interactive()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		for range 4 { // 3 credits each: the fourth waits for the window
			if _, _, err := ic.Tickets.Get(ctx, tk.ID, "conversations", "requester"); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := clk.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the fourth view did not wait for credits: %v", err)
	}
	if n := len(s.Desk.Requests()); n != 3 {
		t.Fatalf("%d requests before the window rolled, want 3 (9 credits of 10)", n)
	}
	clk.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Desk.Requests() {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("the desk answered 429 to %s %s", r.Method, r.Path)
		}
	}
}

// An iterator ranged a second time walks every page again from the first.
func TestE2EIteratorsRangeAgain(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey)
	for range 45 {
		s.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 2})
	}
	ctx := t.Context()
	list := c.Tickets.ListAll(ctx, &sdclient.TicketListOptions{ListOptions: sdclient.ListOptions{PerPage: 20}})
	filter := c.Tickets.FilterAll(ctx, "priority:2", nil)
	for name, seq := range map[string]func() int{
		"ListAll":   func() int { return len(collect(t, list)) },
		"FilterAll": func() int { return len(collect(t, filter)) },
	} {
		if first, second := seq(), seq(); first != 45 || second != 45 {
			t.Errorf("%s: %d items, then %d when ranged again; want 45 both times", name, first, second)
		}
	}
}

// The ticket list budget (WithListRatePerMinute) holds within the overall
// one: background lists stop at the list budget less its reserve while
// other requests still go, an interactive list may use the reserve, and
// the waiting list goes once the window rolls.
func TestE2ETicketListBudget(t *testing.T) {
	clk := clockwork.NewFakeClockAt(time.Now().Add(-time.Hour))
	s := sdsim.NewServer(sdsim.WithClock(clk.Now))
	t.Cleanup(s.Close)
	tk := s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Subject: "x"})
	c, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithClock(clk), sdclient.WithRatePerMinute(100),
		sdclient.WithListRatePerMinute(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.BackgroundListBudget(); got != 4 {
		t.Fatalf("background list budget %d, want 4 (5 less a reserve of 1)", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	since := clk.Now().Add(-time.Hour)
	list := func(cl *sdclient.Client) error {
		_, _, err := cl.Tickets.List(ctx, &sdclient.TicketListOptions{UpdatedSince: &since})
		return err
	}
	for i := range 2 {
		if err := list(c); err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
		if _, _, err := c.Tickets.Filter(ctx, "priority:1", nil); err != nil {
			t.Fatalf("filter %d: %v", i, err)
		}
	}
	waiting := make(chan error, 1)
	go func() { waiting <- list(c) }()
	if err := clk.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Tickets.Get(ctx, tk.ID); err != nil {
		t.Fatalf("a ticket view waited for the list budget: %v", err)
	}
	if err := list(c.Interactive()); err != nil {
		t.Fatalf("an interactive list could not use the reserve: %v", err)
	}
	lists := func() int {
		n := 0
		for _, r := range s.Desk.Requests() {
			if r.Path == "/api/v2/tickets" || r.Path == "/api/v2/tickets/filter" {
				n++
			}
		}
		return n
	}
	if n := lists(); n != 5 {
		t.Fatalf("%d ticket lists sent, want 5: the waiting one must not have gone", n)
	}
	clk.Advance(time.Minute)
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	if n := lists(); n != 6 {
		t.Errorf("%d ticket lists after the window rolled, want 6", n)
	}
}

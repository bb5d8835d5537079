package feed

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// shortPagesDesk answers search pages past pages as empty, with the
// total still counting every match: a cap that does not say so.
type shortPagesDesk struct {
	Desk
	pages int
}

func (d shortPagesDesk) FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error) {
	p, resp, err := d.Desk.FilterTickets(ctx, query, opts)
	if err == nil && opts != nil && opts.Page > d.pages {
		p.Tickets = nil
	}
	return p, resp, err
}

// addDeskTickets adds open and closed tickets, one a minute up to t0, the
// closed ones spread among the open; the oldest is open, urgent and
// unassigned (the others low to high). It returns the oldest's id.
func addDeskTickets(d *sdsim.Desk, open, closed int) int64 {
	return addDeskTicketsEvery(d, open, closed, time.Minute)
}

// addDeskTicketsEvery is addDeskTickets, one ticket every apart.
func addDeskTicketsEvery(d *sdsim.Desk, open, closed int, apart time.Duration) int64 {
	all := open + closed
	var oldest int64
	for i := range all {
		at := t0.Add(-time.Duration(all-i) * apart)
		tk := sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 1 + i%3, CreatedAt: at, UpdatedAt: at}
		switch {
		case i == 0:
			tk.Priority = 4
		case (i-1)*(open-1)/(all-1) == i*(open-1)/(all-1):
			tk.Status = 5 // closed
		}
		id := d.AddTicket(tk).ID
		if i == 0 {
			oldest = id
		}
	}
	return oldest
}

// TestFullSyncPastSearchCap: a desk whose search stops paging (a 400 past
// its 10th page, as Freshdesk answers, or empty pages short of the total)
// still has every open ticket mirrored by the first full sync, the oldest
// one (far beyond the cap) too, the sync reported complete only then, and
// the way it read said.
func TestFullSyncPastSearchCap(t *testing.T) {
	for _, tc := range []struct {
		name         string
		open, closed int
		apart        time.Duration // between two tickets' creation; default a minute
		simCap       int           // sdsim's search page cap
		emptyAfter   int           // the desk answers empty pages past this one
		refusedPage  int           // the search page the desk refused (0: none asked)
		searchPages  int           // search pages read (-1: more than the list would have cost)
		listRequests bool
	}{
		// At 30 a page the search would take 667 requests, the list 201:
		// the sync counts the tickets and walks the list.
		{name: "20,000 open, cap of 10 pages", open: 20000, simCap: 10, searchPages: 1, listRequests: true},
		// More closed tickets: the list (20 requests) costs more than
		// the search (14), so the sync pages the search until the desk
		// refuses page 11; windows would cost more than the list.
		{name: "400 open of 1,900, refused past page 10", open: 400, closed: 1500, simCap: 10, refusedPage: 11, searchPages: 11, listRequests: true},
		{name: "400 open of 1,900, empty pages past 10", open: 400, closed: 1500, emptyAfter: 10, searchPages: 11, listRequests: true},
		{name: "400 open of 1,900, no cap", open: 400, closed: 1500, searchPages: 14},
		// Mostly closed (the list: 321 requests): past the cap the rest
		// is read by created_at windows of at most 300 tickets.
		{name: "2,000 open of 32,000, by created_at windows", open: 2000, closed: 30000, simCap: 10, refusedPage: 11, searchPages: -1},
		// ... unless one day holds more open tickets than 10 pages: the list.
		{name: "2,000 open of 32,000 in one day, by the list", open: 2000, closed: 30000, apart: time.Second, simCap: 10, searchPages: -1, listRequests: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var simOpts []sdsim.Option
			if tc.simCap > 0 {
				simOpts = append(simOpts, sdsim.WithFilterPageCap(tc.simCap))
			}
			e := newEnv(t, simOpts)
			oldest := addDeskTicketsEvery(e.sim.Desk, tc.open, tc.closed, cmp.Or(tc.apart, time.Minute))
			f := e.f
			if tc.emptyAfter > 0 {
				f = e.newFeed(shortPagesDesk{clientDesk(e.client), tc.emptyAfter})
			}
			res := f.Sync(t.Context(), Inline())
			if n := openMirrored(f); !res.Complete || n != tc.open {
				t.Fatalf("sync complete=%v with %d open tickets mirrored (err %v), want complete with all %d", res.Complete, n, res.Err, tc.open)
			}
			if tk := f.Tickets([]int64{oldest})[oldest]; tk == nil || tk.Priority != 4 {
				t.Errorf("the oldest urgent ticket #%d is mirrored as %+v, want it", oldest, tk)
			}
			if err := f.Health(t.Context(), time.Minute); err != nil {
				t.Errorf("MirrorHealth after the sync: %v", err)
			}
			if tc.refusedPage > 0 {
				n := 0
				for _, r := range e.sim.Desk.Requests() {
					q, _ := url.ParseQuery(r.RawQuery)
					if r.Path == "/api/v2/tickets/filter" && q.Get("page") == fmt.Sprint(tc.refusedPage) && !strings.Contains(q.Get("query"), "created_at") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("page %d of the open query asked %d times, want once (refused, then another way)", tc.refusedPage, n)
				}
			}
			search := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", nil)
			list := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets", map[string]string{"updated_since": "1970-01-01T00:00:00Z"})
			if (list > 0) != tc.listRequests {
				t.Errorf("%d list requests from 1970, want some: %v", list, tc.listRequests)
			}
			if tc.listRequests {
				// 100 a page, the keyset re-reading the last ticket of each.
				if most := (tc.open+tc.closed)/99 + 1; list > most {
					t.Errorf("%d list requests, want at most %d", list, most)
				}
			}
			counted := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", map[string]string{"query": `"` + allTicketsQuery + `"`})
			t.Logf("%d search requests (%d counting), %d list walks from 1970", search-counted, counted, list)
			switch got, listCost := search-counted, (tc.open+tc.closed)/100+1; {
			case tc.searchPages >= 0 && got != tc.searchPages:
				t.Errorf("%d search pages read (and %d counts), want %d", got, counted, tc.searchPages)
			case tc.searchPages < 0 && !tc.listRequests && got >= listCost:
				t.Errorf("%d search requests by windows, want fewer than the list's %d", got, listCost)
			}
		})
	}
}

// openMirrored counts the open tickets in f's mirrors (the feed adds the
// closed tickets that changed lately too).
func openMirrored(f *Feed) int {
	n := 0
	for _, m := range f.mirrors {
		m.mu.Lock()
		for _, t := range m.tickets {
			if sdclient.IsOpenStatus(t.Status) {
				n++
			}
		}
		m.mu.Unlock()
	}
	return n
}

// TestFullSyncByListIsNotCompleteUntilTheEnd: a list walk that fails
// half-way leaves the mirror incomplete and /readyz saying the first sync
// is under way, never complete.
func TestFullSyncByListIsNotCompleteUntilTheEnd(t *testing.T) {
	e := newEnv(t, []sdsim.Option{sdsim.WithFilterPageCap(10)})
	addDeskTickets(e.sim.Desk, 2000, 0)
	f := e.newFeed(&failListDesk{Desk: clientDesk(e.client), after: 5})
	if res := f.Sync(t.Context(), Inline()); res.Complete || res.Err == nil {
		t.Fatalf("sync complete with %d tickets after the list failed", res.Tickets)
	}
	if herr := f.Health(t.Context(), time.Minute); herr == nil {
		t.Error("MirrorHealth: nil after a failed first sync, want not ready")
	}
}

// failListDesk fails the ticket list after a number of pages.
type failListDesk struct {
	Desk
	after, n int
}

func (d *failListDesk) ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error) {
	d.n++
	if d.n > d.after {
		return nil, nil, fmt.Errorf("list page %d: %w", d.n, sdclient.ErrNotFound)
	}
	return d.Desk.ListTickets(ctx, opts)
}

// TestMirrorHealthSaysTheSyncReadsTheList: while a first full sync walks
// the list, /readyz says so and why.
func TestMirrorHealthSaysTheSyncReadsTheList(t *testing.T) {
	e := newEnv(t, []sdsim.Option{sdsim.WithFilterPageCap(10)})
	addDeskTickets(e.sim.Desk, 2000, 0)
	var health string
	d := &hookListDesk{Desk: clientDesk(e.client)}
	f := e.newFeed(d)
	d.hook = func() {
		if err := f.Health(t.Context(), time.Minute); err != nil && health == "" && d.n == 3 {
			health = err.Error()
		}
	}
	if res := f.Sync(t.Context(), Inline()); !res.Complete {
		t.Fatal(res.Err)
	}
	const start, how = "the first full sync of the default workspace is under way: syncing ", " of 2,000 by the ticket list (1970 open tickets left at 30 a search page"
	if !strings.HasPrefix(health, start) || !strings.Contains(health, how) {
		t.Errorf("MirrorHealth during the list walk:\n%s\nwant %q...%q", health, start, how)
	}
}

// hookListDesk calls hook before each list page.
type hookListDesk struct {
	Desk
	n    int
	hook func()
}

func (d *hookListDesk) ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error) {
	d.n++
	d.hook()
	return d.Desk.ListTickets(ctx, opts)
}

// BenchmarkFirstSync: the requests of the first sync of a desk of N open
// tickets (the open statuses, the full sync, the feed after it), and the
// minutes they take at the default budget: 60 requests a minute, of which
// 24 ticket lists (GET /tickets and /tickets/filter). Goal: at most 60
// minutes at 100,000.
func BenchmarkFirstSync(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) {
			clk, sim := testkit.FakeDesk(b, t0)
			addDeskTickets(sim.Desk, n, 0)
			var requests, lists int
			for b.Loop() {
				b.StopTimer()
				st := testkit.Store(b, filepath.Join(b.TempDir(), "state.db"))
				f, err := New(clientDesk(testkit.DeskClient(b, sim)), WithLogger(testkit.Logger()), WithClock(clk), WithMirrorStore(st))
				if err != nil {
					b.Fatal(err)
				}
				sim.Desk.ResetRequests()
				b.StartTimer()
				res := f.Sync(b.Context(), Inline())
				if !res.Complete || res.Tickets != n {
					b.Fatalf("first sync: complete=%v tickets=%d err=%v", res.Complete, res.Tickets, res.Err)
				}
				requests, lists = 0, 0
				for _, r := range sim.Desk.Requests() {
					requests++
					if r.Method == "GET" && (r.Path == "/api/v2/tickets" || r.Path == "/api/v2/tickets/filter") {
						lists++
					}
				}
			}
			b.ReportMetric(float64(requests), "requests")
			b.ReportMetric(max(float64(lists)/24, float64(requests)/60), "minutes-at-default-budget")
		})
	}
}

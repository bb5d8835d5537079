package sdclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

const walkTickets = 10000

// BenchmarkWalkTickets walks 10,000 tickets through the simulator over HTTP
// with the client's FilterAll (pages of 30, the real desk, and 100, the
// description) and ListAll (Link paging, 100 a page), reporting the
// requests one walk took against the minimum possible.
func BenchmarkWalkTickets(b *testing.B) {
	cases := []struct {
		name     string
		pageSize int // the desk's filter page size
		walk     func(ctx context.Context, c *sdclient.Client) (int, error)
		perPage  int // page size of the walk
	}{
		{"filter-30", 30, filterWalk, 30},
		{"filter-100", 100, filterWalk, 100},
		{"list-100", 30, listWalk, 100},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s, c, _ := e2e(b, sdsim.DefaultAPIKey, sdsim.WithFilterPageSize(tc.pageSize))
			now := time.Now()
			for i := range walkTickets {
				s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID, Priority: 1 + i%4,
					CreatedAt: now.Add(-time.Duration(walkTickets-i) * time.Minute)})
			}
			ctx := context.Background()
			var requests int
			for b.Loop() {
				s.Desk.ResetRequests()
				n, err := tc.walk(ctx, c)
				if err != nil {
					b.Fatal(err)
				}
				if n != walkTickets {
					b.Fatalf("walked %d tickets, want %d", n, walkTickets)
				}
				requests = len(s.Desk.Requests())
			}
			b.ReportMetric(float64(requests), "requests/walk")
			b.ReportMetric(float64((walkTickets+tc.perPage-1)/tc.perPage), "min-requests/walk")
		})
	}
}

func filterWalk(ctx context.Context, c *sdclient.Client) (int, error) {
	n := 0
	for _, err := range c.Tickets.FilterAll(ctx, "priority:>1", nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func listWalk(ctx context.Context, c *sdclient.Client) (int, error) {
	since := time.Now().Add(-365 * 24 * time.Hour)
	n := 0
	for _, err := range c.Tickets.ListAll(ctx, &sdclient.TicketListOptions{UpdatedSince: &since}) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

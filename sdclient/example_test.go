package sdclient_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/deskbot/deskbot/sdclient"
)

// Find urgent unassigned tickets. The query is checked and encoded
// ("..." around it, %20 for spaces) before it is sent.
func ExampleTicketsService_Filter() {
	// A stand-in for the desk; use the account's address in real life.
	desk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.URL.Path + "?" + r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"tickets":[{"id":42,"subject":"VPN down","priority":4}],"total":1}`)
	}))
	defer desk.Close()

	client, err := sdclient.New(desk.URL, "your-api-key", sdclient.WithRatePerMinute(60))
	if err != nil {
		log.Fatal(err)
	}
	page, _, err := client.Tickets.Filter(context.Background(), "priority:4 AND agent_id:null", nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range page.Tickets {
		fmt.Printf("#%d %s (%d of %d)\n", t.ID, t.Subject, len(page.Tickets), page.Total)
	}
	// Output:
	// /api/v2/tickets/filter?query=%22priority%3A4%20AND%20agent_id%3Anull%22
	// #42 VPN down (1 of 1)
}

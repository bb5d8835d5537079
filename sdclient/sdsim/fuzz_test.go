package sdsim_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// FuzzFilterQuery: whatever the query, GET /tickets/filter answers 200 or
// 400 with a JSON body, never a 5xx or a panic.
func FuzzFilterQuery(f *testing.F) {
	for _, s := range []string{`"status:2"`, `"agent_id:null AND (priority:3 OR priority:4)"`, `status:2`, `"tag:'vpn'"`,
		`"created_at:>'2026-01-01'"`, `"(((("`, `""`, `"environment:'Production' AND vip_requester:true"`} {
		f.Add(s)
	}
	d := sdsim.New(sdsim.WithGenerated(1, 200))
	h := d.Handler()
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/api/v2/tickets/filter?query="+url.PathEscape(q), nil)
		r.SetBasicAuth(sdsim.DefaultAPIKey, "X")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("query %q: status %d: %s", q, w.Code, w.Body)
		}
	})
}

package sdsim_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

var genNow = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

func snapshot(t *testing.T, d *sdsim.Desk) string {
	t.Helper()
	var all []any
	for _, id := range d.TicketIDs() {
		tk, _ := d.Ticket(id)
		all = append(all, tk, d.Conversations(id))
	}
	all = append(all, d.Agents(), d.Groups(), d.Requesters())
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGenerateDeterministic(t *testing.T) {
	gen := func(seed int64) *sdsim.Desk {
		d := sdsim.New(sdsim.WithClock(func() time.Time { return genNow }))
		d.Generate(seed, 500, genNow)
		return d
	}
	a, b, c := snapshot(t, gen(42)), snapshot(t, gen(42)), snapshot(t, gen(43))
	if a != b {
		t.Error("the same seed generated different desks")
	}
	if a == c {
		t.Error("different seeds generated the same desk")
	}
}

func TestGenerateShape(t *testing.T) {
	d := sdsim.New(sdsim.WithClock(func() time.Time { return genNow }), sdsim.WithGenerated(7, 2000))
	ids := d.TicketIDs()
	if len(ids) != 2000 {
		t.Fatalf("%d tickets", len(ids))
	}
	if ws := d.Workspaces(); len(ws) != 2 {
		t.Errorf("workspaces = %v", ws)
	}
	st := d.Statuses()
	if st[sdsim.StatusWaitingOnVendor] != "Waiting on vendor" || st[sdsim.StatusScheduled] != "Scheduled" {
		t.Errorf("statuses = %v", st)
	}
	count := map[string]int{}
	prevCreated := time.Time{}
	for _, id := range ids {
		tk, _ := d.Ticket(id)
		open := tk.Status != 4 && tk.Status != 5
		if tk.CreatedAt.Before(prevCreated) {
			count["out of order"]++
		}
		prevCreated = tk.CreatedAt
		if open && !tk.DueBy.IsZero() && tk.DueBy.Before(genNow) {
			count["overdue"]++
		}
		if open && tk.Priority == 4 && tk.ResponderID == 0 {
			count["unassigned urgent"]++
		}
		if tk.Status > 5 {
			count["custom status"]++
		}
		if tk.WorkspaceID == sdsim.HRWorkspaceID {
			count["hr"]++
		}
		if genNow.Sub(tk.CreatedAt) > 30*24*time.Hour {
			count["older than 30 days"]++
		}
		if len(d.Conversations(id)) > 0 {
			count["with conversations"]++
		}
		count["source"+string(rune('0'+tk.Source%10))]++
		if tk.UpdatedAt.Before(tk.CreatedAt) || tk.UpdatedAt.After(genNow) {
			count["bad updated_at"]++
		}
	}
	for _, k := range []string{"overdue", "unassigned urgent", "custom status", "hr", "older than 30 days", "with conversations"} {
		if count[k] == 0 {
			t.Errorf("no %s tickets (%v)", k, count)
		}
	}
	if count["out of order"] > 0 || count["bad updated_at"] > 0 {
		t.Errorf("inconsistent times: %v", count)
	}
	groups := map[string]bool{}
	for _, g := range d.Groups() {
		groups[g.Name] = true
	}
	for _, g := range []string{"Service Desk", "Network", "Hardware", "HR Operations"} {
		if !groups[g] {
			t.Errorf("no group %q", g)
		}
	}
	readOnly := 0
	for _, a := range d.Agents() {
		if !strings.Contains(a.Email, "@") || a.FirstName == "" || a.LastName == "" {
			t.Errorf("agent %+v lacks a name or e-mail", a)
		}
		if a.ReadOnly {
			readOnly++
		}
	}
	if readOnly != 1 {
		t.Errorf("%d read-only agents, want 1", readOnly)
	}
}

func TestGeneratedReadOnlyKey(t *testing.T) {
	s := newServer(t, sdsim.WithGenerated(1, 20))
	do(t, s, req{path: "/tickets", key: sdsim.ReadOnlyAPIKey}).want(t, 200)
	do(t, s, req{method: "PUT", path: "/tickets/1", key: sdsim.ReadOnlyAPIKey, body: `{"priority":2}`}).want(t, 403)
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		d := sdsim.New()
		d.Generate(1, 10000, genNow)
	}
}

func BenchmarkFilterPage(b *testing.B) {
	srv := sdsim.NewServer(sdsim.WithGenerated(1, 10000))
	defer srv.Close()
	client := srv.Client()
	page := 0
	for b.Loop() {
		page = page%20 + 1
		hr, _ := http.NewRequest("GET", srv.URL+"/api/v2/tickets/filter?query=%22priority:%3E2%20AND%20agent_id:null%22&page="+strconv.Itoa(page), nil)
		hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
		res, err := client.Do(hr)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

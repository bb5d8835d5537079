package rules

import (
	"fmt"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// groupNames names one group.
type groupNames map[int64]string

func (g groupNames) Requester(int64) (Person, bool) { return Person{}, false }
func (g groupNames) Agent(int64) (Person, bool)     { return Person{}, false }
func (g groupNames) Group(id int64) (GroupInfo, bool) {
	n, ok := g[id]
	return GroupInfo{Name: n}, ok
}

const digestFile = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: hourly
    cron: "0 * * * *"
    digest: {breaching_within: 2h, list: 1}
`

// A digest counts the open tickets it matches by status, priority and
// group (named when known), lists the oldest unassigned and what is due
// within its window (overdue counted); its preview is at its next run.
func TestDigestReport(t *testing.T) {
	set, err := Load("d.yaml", []byte(digestFile))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 3, 10, 9, 30, 0, 0, time.UTC)
	i64 := func(v int64) *int64 { return &v }
	tm := func(d time.Duration) *time.Time { x := at.Add(d); return &x }
	tickets := []*sdclient.Ticket{
		{ID: 1, Status: 2, Priority: 4, GroupID: i64(3), DueBy: tm(-time.Hour), CreatedAt: at.Add(-time.Hour)},
		{ID: 2, Status: 3, Priority: 2, ResponderID: i64(7), DueBy: tm(time.Hour), CreatedAt: at.Add(-2 * time.Hour)},
		{ID: 3, Status: 17, Priority: 2, GroupID: i64(9), CreatedAt: at.Add(-3 * time.Hour)},
		{ID: 4, Status: 4, Priority: 4}, // resolved: not counted
	}
	ps := PreviewDigests(set, tickets, at, groupNames{3: "Hardware"})
	if len(ps) != 1 || !ps[0].Next.Equal(at.Add(30*time.Minute)) {
		t.Fatalf("previews %+v; want one at 10:00", ps)
	}
	r := ps[0].Report
	for _, tc := range []struct{ what, got, want string }{
		{"total", fmt.Sprint(r.Total), "3"},
		{"by status", fmt.Sprint(r.ByStatus), "[{Open 1} {Pending 1} {status 17 1}]"},
		{"by priority", fmt.Sprint(r.ByPriority), "[{Medium 2} {Urgent 1}]"},
		{"by group", fmt.Sprint(r.ByGroup), "[{Hardware 1} {group 9 1} {no group 1}]"},
		{"unassigned", fmt.Sprint(r.UnassignedTotal, len(r.Unassigned), r.Unassigned[0].ID), "2 1 3"},
		{"breaching", fmt.Sprint(r.BreachingTotal, r.Overdue, len(r.Breaching), r.Breaching[0].ID), "2 1 1 1"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s; want %s", tc.what, tc.got, tc.want)
		}
	}
	if got := StatusName(17); got != "status 17" {
		t.Errorf("StatusName(17) = %q", got)
	}
}

// BenchmarkDigestReport computes a digest over a 10,000-ticket mirror:
// CPU only, no desk request (the report reads the tickets and the names
// already known).
func BenchmarkDigestReport(b *testing.B) {
	set, err := Load("d.yaml", []byte(digestFile))
	if err != nil {
		b.Fatal(err)
	}
	d := set.Digests()[0]
	d.Within, d.List = 2*time.Hour, 2
	t0 := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	ts := make([]*sdclient.Ticket, 10000)
	for i := range ts {
		due := t0.Add(time.Duration(i) * time.Minute)
		var agent int64
		if i%3 == 0 {
			agent = 7
		}
		group := int64(i % 12)
		ts[i] = &sdclient.Ticket{ID: int64(i + 1), Status: 2 + i%2, Priority: 1 + i%4, ResponderID: &agent, GroupID: &group,
			DueBy: &due, CreatedAt: t0.Add(-time.Duration(i) * time.Minute)}
	}
	var r DigestReport
	for b.Loop() {
		r = d.Report(ts, t0, nil)
	}
	if r.Total != 10000 || r.BreachingTotal != 121 {
		b.Fatalf("report: %d tickets, %d breaching", r.Total, r.BreachingTotal)
	}
	b.ReportMetric(0, "desk-requests/digest")
}

package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

func ptr[T any](v T) *T { return &v }

// mirrorTicket is a ticket as the desk sends it, with every kind of field
// set: pointers, custom fields of each JSON type, tags, due dates, embeds.
func mirrorTicket(id int64, updated time.Time, subject string) *sdclient.Ticket {
	return &sdclient.Ticket{
		ID:              id,
		WorkspaceID:     ptr(int64(2)),
		Subject:         subject,
		Description:     "<div>Printer on floor 3 is <b>jammed</b> again</div>",
		DescriptionText: "Printer on floor 3 is jammed again",
		Status:          sdclient.StatusOpen,
		Priority:        sdclient.PriorityUrgent,
		Source:          sdclient.SourcePortal,
		Urgency:         ptr(3),
		Impact:          nil,
		Type:            "Incident",
		RequesterID:     1000 + id,
		RequestedForID:  nil,
		ResponderID:     ptr(int64(17)),
		GroupID:         ptr(int64(7)),
		DepartmentID:    nil,
		Category:        ptr("Hardware"),
		SubCategory:     ptr("Printer"),
		ItemCategory:    nil,
		DueBy:           ptr(updated.Add(48 * time.Hour)),
		FrDueBy:         ptr(updated.Add(4*time.Hour + 500*time.Millisecond)),
		IsEscalated:     true,
		CCEmails:        []string{"boss@example.com"},
		FwdEmails:       []string{},
		ToEmails:        nil,
		Tags:            []string{"printer", "vip", "ünïcødé ✓"},
		CustomFields: map[string]any{
			"asset_tag": "PRN-0042",
			"floor":     float64(3),
			"urgent_ok": true,
			"ratio":     0.25,
			"none":      nil,
			"list":      []any{"a", float64(1)},
			"nested":    map[string]any{"k": "v"},
		},
		CreatedAt: updated.Add(-time.Hour),
		UpdatedAt: updated,
		Requester: &sdclient.TicketRequester{ID: 1000 + id, Name: "Ann", Email: "ann@example.com", Phone: ptr("+1 555")},
		Stats:     &sdclient.TicketStats{FirstRespondedAt: ptr(updated.Add(-30 * time.Minute))},
	}
}

func apply(t *testing.T, s *store.Store, ws int64, put []*sdclient.Ticket, del []int64, st store.MirrorState) int64 {
	t.Helper()
	v, err := s.MirrorApply(t.Context(), ws, put, del, st)
	if err != nil {
		t.Fatalf("MirrorApply(workspace %d): %v", ws, err)
	}
	return v
}

func load(t *testing.T, s *store.Store, ws int64) ([]*sdclient.Ticket, store.MirrorState) {
	t.Helper()
	ts, st, err := s.MirrorLoad(t.Context(), ws)
	if err != nil {
		t.Fatalf("MirrorLoad(workspace %d): %v", ws, err)
	}
	return ts, st
}

func ids(ts []*sdclient.Ticket) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func equalTickets(t *testing.T, what string, got, want []*sdclient.Ticket) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	t.Errorf("%s: tickets differ\ngot  %s\nwant %s", what, g, w)
}

func testMirrorRoundTrip(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	t1, t2, t3 := mirrorTicket(3, t0, "three"), mirrorTicket(1, t0.Add(time.Second), "one"), mirrorTicket(2, t0, "two")
	st := store.MirrorState{
		Cursor:      t0.Add(123456 * time.Microsecond),
		TrashCursor: t0.Add(-time.Hour),
		Complete:    true,
		FullSyncAt:  time.Date(2026, 3, 2, 11, 0, 0, 0, time.FixedZone("CET", 3600)),
		Version:     42, // ignored
	}
	if v := apply(t, s, 3, []*sdclient.Ticket{t1, nil, t2, t3}, nil, st); v != 1 {
		t.Errorf("first MirrorApply = version %d; want 1", v)
	}
	want := []*sdclient.Ticket{t2, t3, t1}
	got, gotSt := load(t, s, 3)
	equalTickets(t, "MirrorLoad", got, want)
	wantSt := st
	wantSt.Version = 1
	if !gotSt.Cursor.Equal(st.Cursor) || !gotSt.TrashCursor.Equal(st.TrashCursor) || !gotSt.FullSyncAt.Equal(st.FullSyncAt) ||
		gotSt.Complete != st.Complete || gotSt.Version != 1 {
		t.Errorf("state = %+v; want %+v", gotSt, wantSt)
	}
	if gotSt.Cursor.Location() != time.UTC || gotSt.FullSyncAt.Location() != time.UTC {
		t.Errorf("state times %v, %v; want UTC", gotSt.Cursor, gotSt.FullSyncAt)
	}

	// A zero-id ticket fails the whole apply: nothing changes.
	_, err := s.MirrorApply(ctx, 3, []*sdclient.Ticket{mirrorTicket(9, t0, "nine"), {Subject: "no id"}}, []int64{1}, store.MirrorState{})
	if err == nil || !strings.Contains(err.Error(), "apply mirror of workspace 3") || !strings.Contains(err.Error(), "id 0") {
		t.Errorf("MirrorApply of a ticket with id 0 = %v; want an error naming the workspace and id 0", err)
	}
	got, gotSt = load(t, s, 3)
	equalTickets(t, "MirrorLoad after a failed apply", got, want)
	if gotSt.Version != 1 {
		t.Errorf("version after a failed apply = %d; want 1", gotSt.Version)
	}

	// An empty apply stores the state alone; zero times stay zero.
	if v := apply(t, s, 3, nil, nil, store.MirrorState{}); v != 2 {
		t.Errorf("empty MirrorApply = version %d; want 2", v)
	}
	got, gotSt = load(t, s, 3)
	equalTickets(t, "MirrorLoad after an empty apply", got, want)
	if gotSt != (store.MirrorState{Version: 2}) {
		t.Errorf("state after storing the zero state = %+v; want zero times, Complete false, Version 2", gotSt)
	}

	// The mirror survives a restart.
	do(t, s.Close())
	s = open(t)
	got, gotSt = load(t, s, 3)
	equalTickets(t, "MirrorLoad after reopen", got, want)
	if gotSt.Version != 2 {
		t.Errorf("version after reopen = %d; want 2", gotSt.Version)
	}
}

// An older copy never overwrites a newer one; an equal or newer one does.
func testMirrorNotOlder(t *testing.T, open Open) {
	s := open(t)
	at10 := t0.Add(time.Hour) // 10:00
	subject := func() string {
		t.Helper()
		ts, _ := load(t, s, 1)
		if len(ts) != 1 {
			t.Fatalf("mirror holds %v; want ticket 5 alone", ids(ts))
		}
		return ts[0].Subject
	}
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, at10, "new")}, nil, store.MirrorState{})
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, at10.Add(-time.Minute), "stale")}, nil, store.MirrorState{})
	if got := subject(); got != "new" {
		t.Errorf("after a 09:59 copy over the 10:00 one: subject %q; want the 10:00 copy kept", got)
	}
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, at10.Add(-time.Microsecond), "stale")}, nil, store.MirrorState{})
	if got := subject(); got != "new" {
		t.Errorf("after a copy older by 1µs: subject %q; want the 10:00 copy kept", got)
	}
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, at10, "same time")}, nil, store.MirrorState{})
	if got := subject(); got != "same time" {
		t.Errorf("after another 10:00 copy: subject %q; want it replaced (equal times replace)", got)
	}
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, at10.Add(time.Second), "newer")}, nil, store.MirrorState{})
	if got := subject(); got != "newer" {
		t.Errorf("after a 10:00:01 copy: subject %q; want it replaced", got)
	}
	// Within one apply, copies apply in order, under the same rule.
	apply(t, s, 1, []*sdclient.Ticket{
		mirrorTicket(5, at10.Add(time.Minute), "first"),
		mirrorTicket(5, at10.Add(30*time.Second), "lagging"),
	}, nil, store.MirrorState{})
	if got := subject(); got != "first" {
		t.Errorf("after two copies in one apply: subject %q; want the newer", got)
	}
	apply(t, s, 1, []*sdclient.Ticket{
		mirrorTicket(5, at10.Add(time.Minute), "a"),
		mirrorTicket(5, at10.Add(time.Minute), "b"),
	}, nil, store.MirrorState{})
	if got := subject(); got != "b" {
		t.Errorf("after two equal copies in one apply: subject %q; want the later", got)
	}
}

func testMirrorDelete(t *testing.T, open Open) {
	s := open(t)
	var put []*sdclient.Ticket
	for id := int64(1); id <= 6; id++ {
		put = append(put, mirrorTicket(id, t0, fmt.Sprint("t", id)))
	}
	apply(t, s, 4, put, nil, store.MirrorState{})
	apply(t, s, 5, []*sdclient.Ticket{mirrorTicket(10, t0, "elsewhere")}, nil, store.MirrorState{})

	// Deletes: 2 and 4 (4 twice), an unknown id, 10 which lives in
	// workspace 5 (left there), and 6 which is also put (deleted).
	apply(t, s, 4, []*sdclient.Ticket{mirrorTicket(6, t0.Add(time.Hour), "t6 again"), mirrorTicket(7, t0, "t7")},
		[]int64{4, 2, 99, 10, 4, 6}, store.MirrorState{})
	got, _ := load(t, s, 4)
	if want := []int64{1, 3, 5, 7}; !slices.Equal(ids(got), want) {
		t.Errorf("workspace 4 after deletes = %v; want %v", ids(got), want)
	}
	if got, _ := load(t, s, 5); !slices.Equal(ids(got), []int64{10}) {
		t.Errorf("workspace 5 = %v; want [10]: a delete in workspace 4 leaves other workspaces alone", ids(got))
	}
	// A deleted ticket can come back.
	apply(t, s, 4, []*sdclient.Ticket{mirrorTicket(2, t0, "back")}, nil, store.MirrorState{})
	if got, _ := load(t, s, 4); !slices.Equal(ids(got), []int64{1, 2, 3, 5, 7}) {
		t.Errorf("workspace 4 after re-adding 2 = %v", ids(got))
	}
	// Deleting everything.
	apply(t, s, 4, nil, []int64{1, 2, 3, 5, 7}, store.MirrorState{})
	if got, _ := load(t, s, 4); len(got) != 0 {
		t.Errorf("workspace 4 after deleting all = %v; want empty", ids(got))
	}
}

// Applies larger than one statement's batch, puts and deletes interleaved.
func testMirrorLargeApply(t *testing.T, open Open) {
	s := open(t)
	var put []*sdclient.Ticket
	for id := int64(1000); id >= 1; id-- {
		put = append(put, mirrorTicket(id, t0, "old"))
	}
	apply(t, s, 1, put, nil, store.MirrorState{})
	put, del := nil, []int64(nil)
	for k := range int64(1001) {
		put = append(put, mirrorTicket(500+(k*389)%1001, t0.Add(time.Minute), "new")) // 500..1500, shuffled
	}
	for id := int64(1498); id >= 7; id -= 7 { // the multiples of 7, descending
		del = append(del, id)
	}
	apply(t, s, 1, put, del, store.MirrorState{})
	got, _ := load(t, s, 1)
	var want []int64
	for id := int64(1); id <= 1500; id++ {
		if id%7 != 0 {
			want = append(want, id)
		}
	}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("mirror holds %d tickets %v...; want %d", len(got), ids(got)[:min(len(got), 20)], len(want))
	}
	for _, tk := range got {
		if wantSubject := map[bool]string{true: "new", false: "old"}[tk.ID >= 500]; tk.Subject != wantSubject {
			t.Errorf("ticket %d: subject %q; want %q", tk.ID, tk.Subject, wantSubject)
		}
	}
}

func testMirrorVersions(t *testing.T, open Open) {
	s := open(t)
	for i, ws := range []int64{1, 1, 2, 1, 0, 2} {
		want := map[int]int64{0: 1, 1: 2, 2: 1, 3: 3, 4: 1, 5: 2}[i]
		st := store.MirrorState{Cursor: t0.Add(time.Duration(i) * time.Minute), Complete: i%2 == 0, Version: 100}
		if v := apply(t, s, ws, nil, nil, st); v != want {
			t.Errorf("apply %d (workspace %d) = version %d; want %d", i, ws, v, want)
		}
		if _, got := load(t, s, ws); got.Version != want || !got.Cursor.Equal(st.Cursor) || got.Complete != st.Complete {
			t.Errorf("apply %d (workspace %d): state %+v; want version %d, cursor %v, complete %v", i, ws, got, want, st.Cursor, st.Complete)
		}
	}
}

func testMirrorStates(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	got, err := s.MirrorStates(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("MirrorStates of an empty store = %v, %v; want none", got, err)
	}
	want := map[int64]store.MirrorState{
		0: {Cursor: t0, Complete: true, FullSyncAt: t0.Add(time.Second), Version: 1},
		7: {TrashCursor: t0.Add(time.Hour), Version: 2},
		8: {Cursor: t0.Add(-time.Hour), TrashCursor: t0, Version: 1},
	}
	apply(t, s, 7, []*sdclient.Ticket{mirrorTicket(1, t0, "x")}, nil, store.MirrorState{Complete: true})
	for ws, st := range want {
		apply(t, s, ws, nil, nil, st)
	}
	got, err = s.MirrorStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MirrorStates =\n%v\nwant\n%v", got, want)
	}
}

// A ticket applied in another workspace moves there, unless it is older.
func testMirrorMove(t *testing.T, open Open) {
	s := open(t)
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, t0, "in 1"), mirrorTicket(6, t0, "stays")}, nil, store.MirrorState{})
	apply(t, s, 2, []*sdclient.Ticket{mirrorTicket(5, t0.Add(time.Minute), "in 2")}, nil, store.MirrorState{})
	if got, _ := load(t, s, 1); !slices.Equal(ids(got), []int64{6}) {
		t.Errorf("workspace 1 after the move = %v; want [6]", ids(got))
	}
	if got, _ := load(t, s, 2); !slices.Equal(ids(got), []int64{5}) || got[0].Subject != "in 2" {
		t.Errorf("workspace 2 after the move = %v; want [5] with the new copy", ids(got))
	}
	// A lagging copy from the old workspace does not move it back.
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, t0, "in 1")}, nil, store.MirrorState{})
	if got, _ := load(t, s, 2); !slices.Equal(ids(got), []int64{5}) {
		t.Errorf("workspace 2 after a stale copy in 1 = %v; want [5]", ids(got))
	}
	if got, _ := load(t, s, 1); !slices.Equal(ids(got), []int64{6}) {
		t.Errorf("workspace 1 after a stale copy = %v; want [6]", ids(got))
	}
}

func testMirrorUnknownWorkspace(t *testing.T, open Open) {
	s := open(t)
	apply(t, s, 1, []*sdclient.Ticket{mirrorTicket(5, t0, "x")}, nil, store.MirrorState{Complete: true})
	for _, ws := range []int64{0, 2, -1} {
		got, st := load(t, s, ws)
		if len(got) != 0 || st != (store.MirrorState{}) {
			t.Errorf("MirrorLoad(%d) = %v, %+v; want no tickets and the zero state", ws, ids(got), st)
		}
	}
}

// Replicas applying at once: every apply gets its own version, the last is
// the number of applies, nothing deadlocks, and the newest copy of each
// ticket wins whatever the order.
func testMirrorConcurrentApply(t *testing.T, open Open) {
	ss := replicas(t, open, 6)
	const (
		rounds  = 15
		tickets = 40
	)
	var (
		mu       sync.Mutex
		versions = map[int64][]int64{}
		errs     []error
	)
	race(len(ss), func(i int) {
		for r := range rounds {
			// Replicas 0-3 write workspace 1, 4-5 workspace 2; all
			// write the same tickets, in different orders, and delete
			// some, so that row locks are contended across workspaces.
			ws := int64(1 + i/4)
			var put []*sdclient.Ticket
			for k := range tickets {
				id := int64((k+7*i)%tickets + 1)
				if i%2 == 1 {
					id = tickets - id + 1
				}
				put = append(put, mirrorTicket(id, t0.Add(time.Duration(r)*time.Second), fmt.Sprintf("r%d by %d", r, i)))
			}
			del := []int64{int64(tickets - i), int64(tickets + 1 + (r+i)%5)}
			v, err := ss[i].MirrorApply(t.Context(), ws, put, del, store.MirrorState{Cursor: t0.Add(time.Duration(r) * time.Second)})
			mu.Lock()
			if err != nil {
				errs = append(errs, fmt.Errorf("replica %d round %d: %w", i, r, err))
			}
			versions[ws] = append(versions[ws], v)
			mu.Unlock()
		}
	})
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	states, err := ss[0].MirrorStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for ws, n := range map[int64]int{1: 4 * rounds, 2: 2 * rounds} {
		vs := versions[ws]
		slices.Sort(vs)
		want := make([]int64, n)
		for i := range want {
			want[i] = int64(i + 1)
		}
		if !slices.Equal(vs, want) {
			t.Errorf("workspace %d: versions %v; want 1..%d once each", ws, vs, n)
		}
		if states[ws].Version != int64(n) {
			t.Errorf("workspace %d: final version %d; want %d", ws, states[ws].Version, n)
		}
	}
	// Every ticket no replica deletes is in one of the workspaces, as a
	// copy of the last round.
	seen := map[int64]int{}
	for _, ws := range []int64{1, 2} {
		ts, _ := load(t, ss[0], ws)
		for _, tk := range ts {
			seen[tk.ID]++
			if tk.ID <= tickets-int64(len(ss)) && !tk.UpdatedAt.Equal(t0.Add((rounds-1)*time.Second)) {
				t.Errorf("workspace %d ticket %d: updated_at %v; want the last round's", ws, tk.ID, tk.UpdatedAt)
			}
		}
	}
	for id := int64(1); id <= tickets-int64(len(ss)); id++ {
		if seen[id] != 1 {
			t.Errorf("ticket %d is in %d workspaces; want 1", id, seen[id])
		}
	}
}

// BenchMirrorApply measures MirrorApply on s as a full sync of a large desk
// uses it: 100,000 tickets in applies of 100, reported as tickets/s; and
// MirrorLoad of those 100,000 tickets, reported as loaded-tickets/s.
func BenchMirrorApply(b *testing.B, s *store.Store) {
	const (
		total = 100_000
		batch = 100
	)
	ctx := b.Context()
	var n int64
	start := time.Now()
	for i := range b.N {
		ws := int64(1000 + i)
		base := int64(i) * total
		put := make([]*sdclient.Ticket, batch)
		for off := 0; off < total; off += batch {
			for k := range put {
				put[k] = mirrorTicket(base+int64(off+k)+1, t0, fmt.Sprintf("Printer on floor %d jammed", off+k))
			}
			if _, err := s.MirrorApply(ctx, ws, put, nil, store.MirrorState{Cursor: t0}); err != nil {
				b.Fatal(err)
			}
			n += batch
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "tickets/s")

	// And reading a workspace's mirror back, as a restarted leader does.
	b.StopTimer()
	start = time.Now()
	ts, st, err := s.MirrorLoad(ctx, int64(1000+b.N-1))
	if err != nil || len(ts) != total || st.Version != total/batch {
		b.Fatalf("MirrorLoad = %d tickets, version %d, %v; want %d, %d", len(ts), st.Version, err, total, total/batch)
	}
	b.ReportMetric(float64(len(ts))/time.Since(start).Seconds(), "loaded-tickets/s")
}

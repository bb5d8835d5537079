package oncall_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/oncall"
)

// t0 is during alice's shift (2026-03-02 09:00 to 2026-03-03 09:00 UTC).
var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fakePager records every delivery; fail, when set, decides which fail.
type fakePager struct {
	mu      sync.Mutex
	reqs    []oncall.PageRequest
	fail    func(oncall.PageRequest) error
	stopped []string // PageStopped calls: "key exhausted|resolved"
}

// PageStopped implements oncall.StopNotifier.
func (f *fakePager) PageStopped(_ context.Context, p oncall.Page) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	why := "exhausted"
	if p.Resolved() {
		why = "resolved"
	}
	if !p.Done {
		why += " (not done)"
	}
	f.stopped = append(f.stopped, p.Key+" "+why)
	return nil
}

func (f *fakePager) stops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.stopped...)
}

func (f *fakePager) Page(_ context.Context, r oncall.PageRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, r)
	if f.fail != nil {
		return f.fail(r)
	}
	return nil
}

func (f *fakePager) sent() []string {
	return mapLocked(&f.mu, func() []oncall.PageRequest { return f.reqs }, func(r oncall.PageRequest) string {
		return fmt.Sprintf("%s step %d L%d R%d %s", r.Page.Key, r.Step, r.Level+1, r.Round+1, r.Target.ID)
	})
}

// mapLocked returns f of every item items returns, with mu held: what a
// fake recorded, as the test compares it.
func mapLocked[T, R any](mu *sync.Mutex, items func() []T, f func(T) R) []R {
	mu.Lock()
	defer mu.Unlock()
	var out []R
	for _, it := range items() {
		out = append(out, f(it))
	}
	return out
}

// unreachable fails the pages of target id as the chat does for a person
// without a chat account.
func unreachable(id string) func(oncall.PageRequest) error {
	return func(q oncall.PageRequest) error {
		if q.Target.ID == id {
			return fmt.Errorf("%s has no chat account: %w", id, oncall.ErrUnreachable)
		}
		return nil
	}
}

// fakeDesk records notes and answers whether tickets are closed and the
// names of the people in names (anyone else: "", a person the desk does
// not know).
type fakeDesk struct {
	mu     sync.Mutex
	notes  map[int64][]string
	closed map[int64]bool
	names  map[string]string
	fail   error
}

func (d *fakeDesk) PersonName(_ context.Context, who string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.names[who]
}

func (d *fakeDesk) AddNote(_ context.Context, id int64, body string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	if d.notes == nil {
		d.notes = map[int64][]string{}
	}
	d.notes[id] = append(d.notes[id], body)
	return nil
}

func (d *fakeDesk) TicketClosed(_ context.Context, id int64) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed[id], nil
}

func (d *fakeDesk) notesOf(id int64) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.notes[id]...)
}

type rig struct {
	esc   *oncall.Escalator
	store oncall.PageStore
	pager *fakePager
	desk  *fakeDesk
	reg   *prometheus.Registry
}

func newRig(t *testing.T, st oncall.PageStore) *rig {
	t.Helper()
	if st == nil {
		st = &oncall.MemStore{}
	}
	r := &rig{store: st, pager: &fakePager{}, desk: &fakeDesk{}, reg: prometheus.NewRegistry()}
	esc, err := oncall.NewEscalator(mustParse(t, fixture(t, "escalator.yaml")), st, r.pager, r.desk,
		oncall.WithRegistry(r.reg), oncall.WithClock(func() time.Time { return t0 }))
	if err != nil {
		t.Fatal(err)
	}
	r.esc = esc
	return r
}

var spec42 = oncall.PageSpec{Rule: "page-urgent", TicketID: 42, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall", Text: "Urgent #42"}

func (r *rig) tick(t *testing.T, at time.Duration) oncall.TickStats {
	t.Helper()
	st, err := r.esc.Tick(t.Context(), t0.Add(at))
	if err != nil {
		t.Fatalf("tick at +%v: %v", at, err)
	}
	return st
}

func expectSent(t *testing.T, p *fakePager, want ...string) {
	t.Helper()
	if got := p.sent(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pages sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Unacknowledged, a page climbs every level, runs the repeat round, and
// stops after the last level's wait, each step after its level's delay.
func TestEscalationThroughEveryLevel(t *testing.T) {
	r := newRig(t, nil)
	p, created, err := r.esc.Start(t.Context(), spec42, t0)
	if err != nil || !created || p.Key != "page-urgent/42/1" {
		t.Fatalf("Start = %+v, %v, %v", p, created, err)
	}
	if _, again, err := r.esc.Start(t.Context(), spec42, t0.Add(time.Minute)); again || err != nil {
		t.Fatalf("second Start of the same episode created = %v, %v", again, err)
	}
	const k = "page-urgent/42/1"
	steps := []struct {
		at   time.Duration
		want string
	}{
		{0, k + " step 1 L1 R1 alice@example.com"},
		{10 * time.Minute, k + " step 2 L2 R1 boss@example.com"},
		{25 * time.Minute, k + " step 3 L3 R1 S0GROUP"},
		{40 * time.Minute, k + " step 4 L1 R2 alice@example.com"},
		{50 * time.Minute, k + " step 5 L2 R2 boss@example.com"},
		{65 * time.Minute, k + " step 6 L3 R2 S0GROUP"},
	}
	var want []string
	for i, s := range steps {
		if i > 0 {
			// One second early nothing happens.
			r.tick(t, s.at-time.Second)
			expectSent(t, r.pager, want...)
			r.tick(t, s.at)
		}
		want = append(want, s.want)
		expectSent(t, r.pager, want...)
	}
	if st := r.tick(t, 80*time.Minute); st.Exhausted != 1 || st.Paged != 0 {
		t.Errorf("tick after the last level = %+v; want the page exhausted", st)
	}
	r.tick(t, 10*time.Hour)
	expectSent(t, r.pager, want...)
	got, _, _ := r.esc.Page(t.Context(), k)
	if !got.Exhausted || !got.Done || got.Acked() || !got.ExhaustNoted {
		t.Errorf("page = %+v; want exhausted, noted and done", got)
	}
	// People are told: a private note on the ticket, and the card redrawn.
	wantNote := "On-call page NOT acknowledged: every level of policy it-urgent was paged 2 times (6 pages from 2026-03-02 12:00 UTC), " +
		"and nobody acknowledged. Paging has stopped: this ticket needs an owner; acknowledge with /oncall ack 42."
	if notes := r.desk.notesOf(42); len(notes) != 1 || notes[0] != wantNote {
		t.Errorf("notes = %q; want [%q]", notes, wantNote)
	}
	if got := r.pager.stops(); len(got) != 1 || got[0] != k+" exhausted" {
		t.Errorf("PageStopped calls = %q; want [%q]", got, k+" exhausted")
	}
	// Someone finally takes it: /oncall ack still works and is recorded.
	acked, err := r.esc.AckTicket(t.Context(), 42, "bob@example.com", t0.Add(11*time.Hour))
	if err != nil || len(acked) != 1 || acked[0].AckedBy != "bob@example.com" {
		t.Fatalf("AckTicket after exhaustion = %+v, %v", acked, err)
	}
	if notes := r.desk.notesOf(42); len(notes) != 2 || !strings.HasPrefix(notes[1], "On-call page acknowledged by bob@example.com") {
		t.Errorf("notes after the late ack = %q", notes)
	}
	req := r.pager.reqs[0]
	if req.Channel != "#it-oncall" || req.TicketID != 42 || req.Text != "Urgent #42" || req.Target.Schedule != "it-primary" || req.Target.Kind != oncall.TargetPerson {
		t.Errorf("first request = %+v", req)
	}
	if r.pager.reqs[2].Target.Kind != oncall.TargetGroup {
		t.Errorf("level 3 target = %+v; want a group", r.pager.reqs[2].Target)
	}
	for name, want := range map[string]float64{
		"deskbot_oncall_pages_total": 6, "deskbot_oncall_escalations_total": 5,
		"deskbot_oncall_exhausted_total": 1, "deskbot_oncall_pages_started_total": 1, "deskbot_oncall_acks_total": 1,
	} {
		if got := gather(t, r.reg, name); got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
}

// gather sums the values of a counter family.
func gather(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

// Acknowledging stops the escalation, writes the note once, and a second
// acknowledgement is refused with the first acknowledger. The desk knows
// Alice's name but not the boss's, so the note names the boss by e-mail
// (TestAckNoteNamesTheAgent has a desk that knows the name).
func TestAckStopsEscalation(t *testing.T) {
	r := newRig(t, nil)
	r.desk.names = map[string]string{"alice@example.com": "Alice Agent"}
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	r.tick(t, 10*time.Minute) // boss paged
	p, ok, err := r.esc.Ack(t.Context(), "page-urgent/42/1", "boss@example.com", t0.Add(12*time.Minute))
	if err != nil || !ok || p.AckedBy != "boss@example.com" || !p.Done || !p.AckNoted {
		t.Fatalf("Ack = %+v, %v, %v", p, ok, err)
	}
	wantNote := "On-call page acknowledged by boss@example.com at 2026-03-02 12:12:00 UTC, 12m0s after the first page (policy it-urgent, level 2)."
	if notes := r.desk.notesOf(42); len(notes) != 1 || notes[0] != wantNote {
		t.Errorf("notes = %q; want [%q]", notes, wantNote)
	}
	p, ok, err = r.esc.Ack(t.Context(), "page-urgent/42/1", "alice@example.com", t0.Add(13*time.Minute))
	if err != nil || ok || p.AckedBy != "boss@example.com" {
		t.Errorf("second Ack = %+v, %v, %v; want refused, acked by boss", p.AckedBy, ok, err)
	}
	for _, at := range []time.Duration{25 * time.Minute, time.Hour, 5 * time.Hour} {
		r.tick(t, at)
	}
	expectSent(t, r.pager, "page-urgent/42/1 step 1 L1 R1 alice@example.com", "page-urgent/42/1 step 2 L2 R1 boss@example.com")
	if n := len(r.desk.notesOf(42)); n != 1 {
		t.Errorf("%d notes; want 1", n)
	}
	if got := gather(t, r.reg, "deskbot_oncall_acks_total"); got != 1 {
		t.Errorf("acks = %v", got)
	}
	mfs, _ := r.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "deskbot_oncall_time_to_ack_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 1 || h.GetSampleSum() != 720 {
				t.Errorf("time to ack: %d samples, sum %v; want 1, 720", h.GetSampleCount(), h.GetSampleSum())
			}
		}
	}
}

// /oncall ack N acknowledges the escalating pages of ticket N; Take it
// says so in the note.
func TestAckTicketAndTake(t *testing.T) {
	r := newRig(t, nil)
	for _, s := range []oncall.PageSpec{spec42, {Rule: "other", TicketID: 42, Episode: 3, Policy: "it-urgent"}, {Rule: "x", TicketID: 7, Episode: 1, Policy: "it-urgent"}} {
		if _, _, err := r.esc.Start(t.Context(), s, t0); err != nil {
			t.Fatal(err)
		}
	}
	acked, err := r.esc.AckTicket(t.Context(), 42, "U0ALICE", t0.Add(time.Minute))
	if err != nil || len(acked) != 2 {
		t.Fatalf("AckTicket = %d pages, %v; want 2", len(acked), err)
	}
	if again, err := r.esc.AckTicket(t.Context(), 42, "U0ALICE", t0.Add(2*time.Minute)); err != nil || len(again) != 0 {
		t.Errorf("second AckTicket = %d, %v; want nothing left", len(again), err)
	}
	if _, ok, err := r.esc.Take(t.Context(), "x/7/1", "bob@example.com", t0.Add(3*time.Minute)); !ok || err != nil {
		t.Fatalf("Take = %v, %v", ok, err)
	}
	want := "On-call page taken (assigned to them) by bob@example.com at 2026-03-02 12:03:00 UTC, 3m0s after the first page (policy it-urgent, level 1)."
	if n := r.desk.notesOf(7); len(n) != 1 || n[0] != want {
		t.Errorf("notes of 7 = %q; want %q", n, want)
	}
	r.tick(t, time.Hour)
	if n := len(r.pager.sent()); n != 3 {
		t.Errorf("%d pages; want only the 3 first steps", n)
	}
}

// Resolving the ticket stops the escalation, whether the bot says so or the
// escalator finds the ticket closed before the next step.
func TestResolveStopsEscalation(t *testing.T) {
	r := newRig(t, nil)
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	spec7 := oncall.PageSpec{Rule: "x", TicketID: 7, Episode: 1, Policy: "it-urgent"}
	if _, _, err := r.esc.Start(t.Context(), spec7, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := r.esc.ResolveTicket(t.Context(), 42, t0.Add(5*time.Minute)); n != 1 || err != nil {
		t.Fatalf("ResolveTicket = %d, %v", n, err)
	}
	r.desk.mu.Lock()
	r.desk.closed = map[int64]bool{7: true}
	r.desk.mu.Unlock()
	for _, at := range []time.Duration{10 * time.Minute, time.Hour} {
		r.tick(t, at)
	}
	expectSent(t, r.pager, "page-urgent/42/1 step 1 L1 R1 alice@example.com", "x/7/1 step 1 L1 R1 alice@example.com")
	for _, k := range []string{"page-urgent/42/1", "x/7/1"} {
		p, _, _ := r.esc.Page(t.Context(), k)
		if !p.Resolved() || !p.Done || p.Acked() {
			t.Errorf("%s = %+v; want resolved and done", k, p)
		}
	}
	if won, err := r.esc.Resolve(t.Context(), "x/7/1", t0.Add(2*time.Hour)); won || err != nil {
		t.Errorf("Resolve of a resolved page = %v, %v", won, err)
	}
	if len(r.desk.notesOf(42))+len(r.desk.notesOf(7)) != 0 {
		t.Error("a resolution wrote an acknowledgement note")
	}
	// Both cards are told, once each.
	if got := strings.Join(r.pager.stops(), ", "); got != "page-urgent/42/1 resolved, x/7/1 resolved" {
		t.Errorf("PageStopped calls = %s", got)
	}
	// A click on Acknowledge after the resolution is refused, and says why.
	p, ok, err := r.esc.Ack(t.Context(), "page-urgent/42/1", "alice@example.com", t0.Add(3*time.Hour))
	if ok || err != nil || !p.Resolved() || p.Acked() {
		t.Errorf("Ack of a resolved page = %v, %v, %+v; want refused", ok, err, p)
	}
	if acked, err := r.esc.AckTicket(t.Context(), 7, "alice@example.com", t0.Add(3*time.Hour)); len(acked) != 0 || err != nil {
		t.Errorf("AckTicket of a resolved ticket = %d, %v; want nothing", len(acked), err)
	}
	if got := gather(t, r.reg, "deskbot_oncall_acks_total"); got != 0 {
		t.Errorf("acks = %v; want 0", got)
	}
}

// A note the desk refuses is retried with a doubling delay, then given up
// rather than tried every tick forever (a deleted ticket).
func TestNoteRetriesThenGivesUp(t *testing.T) {
	r := newRig(t, nil)
	r.desk.fail = errors.New("404 ticket not found")
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	const k = "page-urgent/42/1"
	if _, _, err := r.esc.Ack(t.Context(), k, "alice@example.com", t0.Add(time.Minute)); err == nil {
		t.Fatal("Ack hid the desk's error")
	}
	at := t0.Add(time.Minute)
	var waits []time.Duration
	for i := 0; i < 20; i++ {
		p, _, _ := r.esc.Page(t.Context(), k)
		if p.Done {
			break
		}
		waits = append(waits, p.NextAt.Sub(at))
		at = p.NextAt
		if _, err := r.esc.Tick(t.Context(), at.Add(-time.Second)); err != nil {
			t.Fatalf("tick before the retry: %v", err)
		}
		if _, err := r.esc.Tick(t.Context(), at); err == nil {
			t.Fatal("a failed note retry reported no error")
		}
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("retry delays = %v; want %v", waits, want)
	}
	p, _, _ := r.esc.Page(t.Context(), k)
	if !p.Done || !p.AckNoted || p.NoteAttempts != oncall.MaxNoteAttempts {
		t.Errorf("page = %+v; want done after %d attempts", p, oncall.MaxNoteAttempts)
	}
	if last := p.History[len(p.History)-1]; last.Kind != oncall.EventFailed || !strings.Contains(last.Detail, "gave up on the private note after 8 attempts: 404 ticket not found") {
		t.Errorf("last event = %+v", last)
	}
	if len(r.pager.sent()) != 1 {
		t.Errorf("the failed note paged: %q", r.pager.sent())
	}
}

// A step the chat refuses is retried, then skipped so that the next level
// still hears of the ticket.
func TestRefusedPageMovesOn(t *testing.T) {
	r := newRig(t, nil)
	r.pager.fail = func(q oncall.PageRequest) error {
		if q.Target.ID == "alice@example.com" {
			return errors.New("users_not_found")
		}
		return nil
	}
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err == nil {
		t.Fatal("Start hid the pager's error")
	}
	if _, err := r.esc.Tick(t.Context(), t0.Add(29*time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{30 * time.Second, 60 * time.Second} {
		if _, err := r.esc.Tick(t.Context(), t0.Add(at)); err == nil || !strings.Contains(err.Error(), "users_not_found") {
			t.Fatalf("tick at +%v: %v; want the pager's error", at, err)
		}
	}
	r.tick(t, 61*time.Second)
	const k = "page-urgent/42/1"
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 1 L1 R1 alice@example.com",
		k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
	if a := r.pager.reqs[2]; a.Attempt != 3 || !a.Retry {
		t.Errorf("third try = %+v", a)
	}
	if got := gather(t, r.reg, "deskbot_oncall_page_failures_total"); got != 3 {
		t.Errorf("failures = %v", got)
	}
}

// Escalate now pages the next level at once, and the following level
// waits its full delay from then.
func TestEscalateNow(t *testing.T) {
	r := newRig(t, nil)
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	const k = "page-urgent/42/1"
	if ok, err := r.esc.EscalateNow(t.Context(), k, "alice@example.com", t0.Add(2*time.Minute)); !ok || err != nil {
		t.Fatalf("EscalateNow = %v, %v", ok, err)
	}
	r.tick(t, 10*time.Minute) // the old deadline of level 1: nothing
	r.tick(t, 16*time.Minute)
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
	r.tick(t, 17*time.Minute)
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com", k+" step 3 L3 R1 S0GROUP")
	if _, _, err := r.esc.Ack(t.Context(), k, "boss@example.com", t0.Add(18*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.esc.EscalateNow(t.Context(), k, "x", t0.Add(19*time.Minute)); ok || err != nil {
		t.Errorf("EscalateNow after the ack = %v, %v; want refused", ok, err)
	}
}

// crashingStore fails the swap that would confirm a step, like a process
// killed between paging and recording it.
type crashingStore struct {
	oncall.PageStore
	mu      sync.Mutex
	crashed bool
}

func (c *crashingStore) SwapPage(ctx context.Context, p oncall.Page) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return false, errors.New("process gone")
	}
	won, err := c.PageStore.SwapPage(ctx, p)
	if won && p.Sending && p.Step == 2 {
		c.crashed = true // the claim of step 2 is the last thing this process writes
	}
	return won, err
}

// A new escalator over the same store (a restart, or another replica
// taking over) continues at the right level without paging again what was
// paged, and takes over a step whose claimant died once its lease runs out.
func TestRestartMidEscalation(t *testing.T) {
	shared := &oncall.MemStore{}
	crash := &crashingStore{PageStore: shared}
	a := newRig(t, crash)
	if _, _, err := a.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.esc.Tick(t.Context(), t0.Add(10*time.Minute)); err == nil {
		t.Fatal("the crashed tick reported no error")
	}
	const k = "page-urgent/42/1"
	expectSent(t, a.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")

	b := newRig(t, shared)
	// Within the lease (2m) the dead claim is respected.
	b.tick(t, 10*time.Minute)
	b.tick(t, 11*time.Minute+59*time.Second)
	expectSent(t, b.pager)
	// Then the step is taken over: boss again (we cannot know whether the
	// first try reached them), never alice.
	b.tick(t, 12*time.Minute)
	expectSent(t, b.pager, k+" step 2 L2 R1 boss@example.com")
	if q := b.pager.reqs[0]; !q.Retry || q.Attempt != 2 {
		t.Errorf("take-over = %+v; want a retry, attempt 2", q)
	}
	b.tick(t, 26*time.Minute)
	expectSent(t, b.pager, k+" step 2 L2 R1 boss@example.com")
	b.tick(t, 27*time.Minute)
	expectSent(t, b.pager, k+" step 2 L2 R1 boss@example.com", k+" step 3 L3 R1 S0GROUP")

	// A plain restart between steps pages nothing twice.
	c := newRig(t, shared)
	c.tick(t, 27*time.Minute)
	c.tick(t, 41*time.Minute)
	expectSent(t, c.pager)
	c.tick(t, 42*time.Minute)
	expectSent(t, c.pager, k+" step 4 L1 R2 alice@example.com")
}

// Two replicas ticking at the same instants over one store page every step
// of every page exactly once.
func TestTwoReplicas(t *testing.T) {
	shared := &oncall.MemStore{}
	twoReplicas(t, shared, shared)
}

// twoReplicas runs two escalators, over stores a and b (the same database
// seen through two handles, or one shared store), through a whole
// escalation of 12 pages.
func twoReplicas(t *testing.T, a, b oncall.PageStore) {
	ra, rb := newRig(t, a), newRig(t, b)
	var keys []string
	for i := range 12 {
		s := oncall.PageSpec{Rule: "r", TicketID: int64(100 + i), Episode: 1, Policy: "it-urgent"}
		esc := ra.esc
		if i%2 == 1 {
			esc = rb.esc
		}
		p, _, err := esc.Start(t.Context(), s, t0)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, p.Key)
	}
	for _, at := range []time.Duration{0, 10 * time.Minute, 25 * time.Minute, 40 * time.Minute, 50 * time.Minute, 65 * time.Minute, 80 * time.Minute} {
		var wg sync.WaitGroup
		for _, r := range []*rig{ra, rb, ra, rb} {
			wg.Go(func() {
				if _, err := r.esc.Tick(t.Context(), t0.Add(at)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	count := map[string]int{}
	for _, s := range append(ra.pager.sent(), rb.pager.sent()...) {
		count[s]++
	}
	if len(count) != 12*6 {
		t.Errorf("%d distinct steps paged; want %d", len(count), 12*6)
	}
	for s, n := range count {
		if n != 1 {
			t.Errorf("%s paged %d times", s, n)
		}
	}
	for _, k := range keys {
		p, ok, err := a.Page(t.Context(), k)
		if err != nil || !ok || !p.Exhausted || p.Step != 6 {
			t.Errorf("%s = step %d exhausted %v (%v); want 6 steps, exhausted", k, p.Step, p.Exhausted, err)
		}
	}
	// Each ticket gets one note saying nobody acknowledged, and each card
	// is redrawn once.
	for i := range 12 {
		id := int64(100 + i)
		if n := len(ra.desk.notesOf(id)) + len(rb.desk.notesOf(id)); n != 1 {
			t.Errorf("ticket %d: %d exhaustion notes; want 1", id, n)
		}
	}
	if n := len(ra.pager.stops()) + len(rb.pager.stops()); n != 12 {
		t.Errorf("%d PageStopped calls; want 12", n)
	}
	if len(ra.pager.sent()) == 0 || len(rb.pager.sent()) == 0 {
		t.Logf("one replica did all the work (%d / %d)", len(ra.pager.sent()), len(rb.pager.sent()))
	}
}

// The /metrics view shows who is on call now and next.
func TestWhoMetrics(t *testing.T) {
	r := newRig(t, nil)
	for name, want := range map[string]string{
		"deskbot_oncall_on_call": "member=alice@example.com override=false schedule=it-primary 1",
		"deskbot_oncall_next":    "member=bob@example.com schedule=it-primary 1",
	} {
		if got := series(t, r.reg, name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q; want [%q]", name, got, want)
		}
	}
	if got := gather(t, r.reg, "deskbot_oncall_shift_end_timestamp_seconds"); got != float64(time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("shift end = %v", got)
	}
	if _, err := oncall.NewEscalator(nil, &oncall.MemStore{}, r.pager, nil, oncall.WithRegistry(r.reg)); err == nil {
		t.Error("registering the metrics twice on one registry succeeded")
	}
}

// series renders each metric of a gauge family as "label=value ... value".
func series(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var parts []string
			for _, l := range m.GetLabel() {
				parts = append(parts, l.GetName()+"="+l.GetValue())
			}
			parts = append(parts, fmt.Sprint(m.GetGauge().GetValue()))
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

// A target no retry can reach (no chat account) costs no retries: the
// next level is paged in the same step, the history says why, and the
// level after it still waits its full delay.
func TestUnreachableTargetMovesOnAtOnce(t *testing.T) {
	r := newRig(t, nil)
	r.pager.fail = unreachable("alice@example.com")
	p, created, err := r.esc.Start(t.Context(), spec42, t0)
	if err != nil || !created {
		t.Fatalf("Start: %v %v", created, err)
	}
	const k = "page-urgent/42/1"
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
	if p.Level != 1 || p.Sending || !p.NextAt.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("page after Start: level %d sending %v next %v", p.Level, p.Sending, p.NextAt)
	}
	var why string
	for _, ev := range p.History {
		if ev.Kind == oncall.EventFailed {
			why = ev.Detail
		}
	}
	if !strings.Contains(why, "alice@example.com has no chat account") {
		t.Fatalf("history does not say why alice was not paged: %+v", p.History)
	}
	r.tick(t, 14*time.Minute)
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
	r.tick(t, 15*time.Minute)
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com", k+" step 3 L3 R1 S0GROUP")
}

// Ticks come every so many seconds from the tick that took the step
// before, so the next step falls due on the very millisecond of a tick: a
// tick a few milliseconds early still takes it, rather than leave the
// next level one whole tick (20s) late.
func TestTickTakesStepDueWithinGrace(t *testing.T) {
	r := newRig(t, nil)
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	r.tick(t, 9*time.Minute+58*time.Second)
	r.tick(t, 10*time.Minute-3*time.Millisecond)
	const k = "page-urgent/42/1"
	expectSent(t, r.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
}

// Every policy's counters are on /metrics at 0 before anything happens,
// so that "no acknowledgement in an hour" can be alerted on.
func TestMetricsExistAtZero(t *testing.T) {
	r := newRig(t, nil)
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "policy" && l.GetValue() == "it-urgent" {
					have[mf.GetName()] = true
				}
			}
		}
	}
	for _, name := range []string{"deskbot_oncall_pages_started_total", "deskbot_oncall_pages_total", "deskbot_oncall_escalations_total",
		"deskbot_oncall_page_failures_total", "deskbot_oncall_acks_total", "deskbot_oncall_exhausted_total", "deskbot_oncall_time_to_ack_seconds"} {
		if !have[name] {
			t.Errorf("%s{policy=\"it-urgent\"} missing before the first page", name)
		}
	}
}

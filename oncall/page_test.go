package oncall_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/oncall"
)

// The pure state machine: a policy without repeats ends after its last
// level; acks and resolutions stop it at any point, even mid-send.
func TestPageStateMachine(t *testing.T) {
	cfg := mustParse(t, fixture(t, "escalator.yaml")+`    - name: once
      levels:
        - {user: a@example.com, after: 5m}
        - {user: b@example.com, after: 5m}
`)
	pol := cfg.Policy("once")
	p := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: 1, Episode: 1, Policy: "once"}, t0)
	if !p.Due(t0) || p.Due(t0.Add(-time.Second)) {
		t.Fatal("a new page is due at once, not before")
	}
	s, ok := p.Advance(pol, t0)
	if !ok || s.Number != 1 || s.Target.ID != "a@example.com" || !p.Sending {
		t.Fatalf("step 1 = %+v, %v", s, ok)
	}
	if p.EscalateNow("x", t0) {
		t.Error("EscalateNow while a step is being sent")
	}
	if p.Sent(2, 5*time.Minute, t0) || !p.Sent(1, 5*time.Minute, t0) || !p.NextAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("Sent: %+v", p)
	}
	if s, ok = p.Advance(pol, t0.Add(5*time.Minute)); !ok || s.Target.ID != "b@example.com" || s.Level != 1 {
		t.Fatalf("step 2 = %+v", s)
	}
	// Resolved mid-send: the confirmation that follows changes nothing.
	q := p.Clone()
	if !q.Resolve(t0.Add(6*time.Minute)) || !q.Done || q.Sent(2, 5*time.Minute, t0.Add(6*time.Minute)) {
		t.Errorf("resolve mid-send: %+v", q)
	}
	if _, ok := q.Advance(pol, t0.Add(time.Hour)); ok {
		t.Error("a resolved page advanced")
	}
	p.Sent(2, 5*time.Minute, t0.Add(5*time.Minute))
	// Exhausted: not done until the ticket's note says nobody acknowledged.
	if _, ok := p.Advance(pol, t0.Add(10*time.Minute)); ok || !p.Exhausted || p.Done || !p.ExhaustNoteDue() || !p.Due(t0.Add(10*time.Minute)) {
		t.Fatalf("after the last level: %+v", p)
	}
	// A resolved ticket has nothing left to acknowledge.
	if r := q.Clone(); r.Ack("b@example.com", t0.Add(7*time.Minute)) || r.Acked() {
		t.Errorf("ack after resolve accepted: %+v", r)
	}
	// An acknowledgement after exhaustion still records who took it, and
	// replaces the exhaustion note.
	if !p.Ack("b@example.com", t0.Add(20*time.Minute)) || p.Done || !p.NoteDue() || p.ExhaustNoteDue() || !p.Due(t0.Add(20*time.Minute)) {
		t.Errorf("ack after exhaustion: %+v", p)
	}
	if !p.Noted(t0.Add(20*time.Minute)) || !p.Done || p.Noted(t0.Add(21*time.Minute)) {
		t.Errorf("noted: %+v", p)
	}
	if got := oncall.PageKey("page-urgent", 42, 3); got != "page-urgent/42/3" {
		t.Errorf("PageKey = %q", got)
	}
}

// A page whose policy left the rules file on reload (the rule paging it
// changed too: the loader refuses a page action naming no policy) has
// nobody left to page: it stops at the next tick and says so on the ticket
// and the card, instead of waiting for the policy with nobody paged.
func TestPolicyRemovedOnReload(t *testing.T) {
	r := newRig(t, nil)
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	full := r.esc.Config()
	r.esc.SetConfig(nil)
	if st := r.tick(t, 10*time.Minute); st.Exhausted != 1 || st.Noted != 1 {
		t.Fatalf("tick after the reload: %+v", st)
	}
	notes := r.desk.notesOf(42)
	if len(notes) != 1 || !strings.Contains(notes[0], "NOT acknowledged: escalation policy it-urgent was removed from the rules file while it escalated (1 page from 2026-03-02 12:00 UTC)") ||
		!strings.Contains(notes[0], "/oncall ack 42") {
		t.Fatalf("notes %q", notes)
	}
	if got := r.pager.stops(); len(got) != 1 || got[0] != "page-urgent/42/1 exhausted" {
		t.Fatalf("card not told: %q", got)
	}
	r.esc.SetConfig(full)
	r.tick(t, 11*time.Minute)
	r.tick(t, time.Hour)
	expectSent(t, r.pager, "page-urgent/42/1 step 1 L1 R1 alice@example.com")
	if got := r.desk.notesOf(42); len(got) != 1 {
		t.Fatalf("notes after the policy came back: %q", got)
	}
	if _, _, err := r.esc.Start(t.Context(), oncall.PageSpec{Rule: "x", TicketID: 1, Policy: "nope"}, t0); err == nil {
		t.Error("Start under an unknown policy succeeded")
	}
}

// The note of a page that ran out of levels names whom the chat could
// not reach, rather than claim that everyone was paged.
func TestExhaustedNoteNamesUnreachable(t *testing.T) {
	r := newRig(t, nil)
	r.pager.fail = unreachable("boss@example.com")
	if _, _, err := r.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	for at := time.Duration(0); at <= 2*time.Hour; at += 5 * time.Minute {
		r.tick(t, at)
	}
	notes := r.desk.notesOf(42)
	if len(notes) != 1 || !strings.Contains(notes[0], "and nobody acknowledged. Could not be reached: boss@example.com. Paging has stopped") {
		t.Fatalf("notes %q", notes)
	}
}

// BenchmarkOnCall measures who-is-on-call for a weekly rotation with
// overrides (the /oncall command and each schedule level of a page).
func BenchmarkOnCall(b *testing.B) {
	s := schedule(b, "Europe/Zurich", "1w", "09:00", "2026-01-05", `      overrides:
        - {member: carol@example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
`)
	at := utc("2026-07-01 12:00")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = s.OnCall(at.Add(time.Duration(i%1000) * time.Hour))
	}
}

// A page stored before Position was one struct (the same keys at the top
// level of the page and of each event, step and round left out of events
// when 0) reads back the same, and is written with the page's keys where
// they were.
func TestPageStateFormatKept(t *testing.T) {
	const stored = `{"key":"r/42/1","policy":"it","ticket_id":42,"started_at":"2026-03-02T12:00:00Z",` +
		`"step":2,"level":1,"round":0,"target":{"kind":"user","id":"bob@example.com"},"sending":true,"next_at":"2026-03-02T12:10:00Z",` +
		`"history":[{"at":"2026-03-02T12:00:00Z","kind":"exhausted","level":1},` +
		`{"at":"2026-03-02T12:00:00Z","kind":"paged","step":2,"level":1,"target":{"kind":"user","id":"bob@example.com"}}]}`
	var p oncall.Page
	if err := json.Unmarshal([]byte(stored), &p); err != nil {
		t.Fatal(err)
	}
	if p.Step != 2 || p.Level != 1 || p.Round != 0 || p.Target == nil || p.Target.ID != "bob@example.com" {
		t.Errorf("page position %+v", p.Position)
	}
	if len(p.History) != 2 || p.History[0].Step != 0 || p.History[0].Level != 1 || p.History[0].Target != nil ||
		p.History[1].Step != 2 || p.History[1].Target == nil || p.History[1].Target.ID != "bob@example.com" {
		t.Errorf("history %+v", p.History)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"started_at":"2026-03-02T12:00:00Z","step":2,"level":1,"round":0,"target":{`; !strings.Contains(string(out), want) {
		t.Errorf("written %s\nwant it to hold %s", out, want)
	}
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// Open opens a Store on the database of test t. The first call for a t
// creates a fresh, empty database; every later call with the same t opens
// another Store (its own connection pool, as another replica would have) on
// that same database, also after earlier Stores were closed. Stores are
// closed, and the database removed, when t ends.
type Open func(t *testing.T) *store.Store

// PerTest builds an Open from create, which makes a fresh database for t
// (registering its removal with t.Cleanup) and returns the DSN and options
// to open it with.
func PerTest(create func(t *testing.T) (dsn string, opts []store.Option)) Open {
	type db struct {
		dsn  string
		opts []store.Option
	}
	var (
		mu  sync.Mutex
		dbs = map[*testing.T]db{}
	)
	return func(t *testing.T) *store.Store {
		t.Helper()
		mu.Lock()
		d, ok := dbs[t]
		mu.Unlock()
		if !ok {
			dsn, opts := create(t)
			d = db{dsn, opts}
			mu.Lock()
			dbs[t] = d
			mu.Unlock()
			t.Cleanup(func() {
				mu.Lock()
				delete(dbs, t)
				mu.Unlock()
			})
		}
		s, err := store.Open(t.Context(), d.dsn, d.opts...)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}

// t0 is the suite's clock origin; every time is derived from it, so the
// suite never depends on the wall clock.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const lease = 2 * time.Minute

var (
	episode = rules.Once{Mode: rules.OnceEpisode}
	ticket  = rules.Once{Mode: rules.OnceTicket}
)

func every(d time.Duration) rules.Once { return rules.Once{Mode: rules.OnceEvery, Period: d} }

// Run runs the conformance suite against the engine behind open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Open)
	}{
		{"FirstClaimOpensEpisode", testFirstClaim},
		{"PendingLeaseValidNotWon", testPendingLeaseValid},
		{"PendingLeaseExpiredResumed", testPendingLeaseExpired},
		{"ReleaseResumesAtOnce", testRelease},
		{"DoneEpisodeNotWonAgain", testDoneEpisode},
		{"EndEpisodesRearms", testEndEpisodes},
		{"BegunFiringKeepsItsEpisode", testBegunFiring},
		{"EndEpisodesTenThousandMatching", testEndEpisodesLarge},
		{"OnceTicketNeverRefires", testOnceTicket},
		{"OnceTicketResumesCrashedFiring", testOnceTicketCrashed},
		{"OnceEveryPeriods", testOnceEvery},
		{"ActionDoneFinishReleaseEdges", testFiringEdges},
		{"PruneKeepsCurrentFirings", testPrune},
		{"ClaimRejectsBadInput", testClaimValidation},
		{"FiringStateUnknown", testFiringStateUnknown},
		{"FiringStatesMatchFiringState", testFiringStates},
		{"Cursors", testCursors},
		{"EnvelopeTTL", testEnvelopes},
		{"Acks", testAcks},
		{"PingAndSchema", testPing},
		{"ReopenDurability", testReopen},
		{"ConcurrentClaimersOneWinner", testConcurrentClaims},
		{"ConcurrentTakeoverOneWinner", testConcurrentTakeover},
		{"ConcurrentFinishAndTakeover", testConcurrentFinishTakeover},
		{"ConcurrentEnvelopesAndAcks", testConcurrentEnvelopes},
		{"ConcurrentMarksOneSecret", testConcurrentMarks}, // marks.go (issue 27)
		{"MirrorRoundTrip", testMirrorRoundTrip},
		{"MirrorOlderCopyNeverOverwrites", testMirrorNotOlder},
		{"MirrorDelete", testMirrorDelete},
		{"MirrorLargeApply", testMirrorLargeApply},
		{"MirrorVersionsPerWorkspace", testMirrorVersions},
		{"MirrorStates", testMirrorStates},
		{"MirrorTicketMovesWorkspace", testMirrorMove},
		{"MirrorLoadUnknownWorkspace", testMirrorUnknownWorkspace},
		{"MirrorConcurrentApply", testMirrorConcurrentApply},
		{"Threads", testThreads},   // threads.go: live threads (issue 13)
		{"RuleRuns", testRuleRuns}, // ruleruns.go: time rules carry on (issue 22)
		{"History", testHistory},   // history.go: what the feed saw (issue 25)
	}
	tests = append(tests, messageTests...)
	tests = append(tests, leaderTests...)
	tests = append(tests, statusTests...)
	tests = append(tests, backtestTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open)
		})
	}
}

func claim(t *testing.T, s *store.Store, key rules.FiringKey, once rules.Once, now time.Time) rules.Firing {
	t.Helper()
	f, err := s.Claim(t.Context(), key, once, now, lease)
	if err != nil {
		t.Fatalf("Claim(%v, at +%v): %v", key, now.Sub(t0), err)
	}
	return f
}

func mustWin(t *testing.T, f rules.Firing, episode, seq int64, resumed bool, done []int) {
	t.Helper()
	if !f.Won || f.Episode != episode || f.Seq != seq || f.Resumed != resumed || !slices.Equal(f.Done, done) || f.ID == 0 {
		t.Fatalf("claim = %+v; want Won episode %d seq %d Resumed %v Done %v with an id", f, episode, seq, resumed, done)
	}
}

func mustLose(t *testing.T, f rules.Firing) {
	t.Helper()
	if f.Won || f.Resumed {
		t.Fatalf("claim = %+v; want not Won", f)
	}
}

func state(t *testing.T, s *store.Store, key rules.FiringKey) rules.FiringRecord {
	t.Helper()
	fi, ok, err := s.FiringState(t.Context(), key)
	if err != nil || !ok {
		t.Fatalf("FiringState(%v) = %v, %v; want a record", key, ok, err)
	}
	return fi
}

// begun claims key at t0 and records its first action done, as a worker
// that then died (or is about to finish) leaves it.
func begun(t *testing.T, s *store.Store, key rules.FiringKey, once rules.Once) rules.Firing {
	t.Helper()
	f := claim(t, s, key, once, t0)
	do(t, s.ActionDone(t.Context(), f.ID, 0))
	return f
}

func do(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testFirstClaim(t *testing.T, open Open) {
	s := open(t)
	key := rules.FiringKey{Rule: "page-urgent", TicketID: 42}
	f := claim(t, s, key, episode, t0)
	mustWin(t, f, 1, 1, false, nil)
	if f.Key != key || !f.Started.Equal(t0) || f.Attempts != 1 {
		t.Errorf("Key = %v, Started = %v, Attempts = %d; want %v, %v, 1", f.Key, f.Started, f.Attempts, key, t0)
	}
	fi := state(t, s, key)
	want := rules.FiringRecord{Key: key, Episode: 1, Open: true, EpisodeStarted: t0, FiringID: f.ID, Seq: 1,
		State: rules.FiringPending, ClaimedAt: t0, LeaseUntil: t0.Add(lease), Attempts: 1}
	if fmt.Sprint(fi) != fmt.Sprint(want) {
		t.Errorf("FiringState =\n%+v\nwant\n%+v", fi, want)
	}
	// Another rule on the same ticket, and the same rule on another
	// ticket, are separate keys with their own firing ids.
	g := claim(t, s, rules.FiringKey{Rule: "other", TicketID: 42}, episode, t0)
	h := claim(t, s, rules.FiringKey{Rule: "page-urgent", TicketID: 43}, episode, t0)
	mustWin(t, g, 1, 1, false, nil)
	mustWin(t, h, 1, 1, false, nil)
	if g.ID == f.ID || h.ID == f.ID || g.ID == h.ID {
		t.Errorf("firing ids %d %d %d are not unique", f.ID, g.ID, h.ID)
	}
}

func testPendingLeaseValid(t *testing.T, open Open) {
	s, other := open(t), open(t)
	key := rules.FiringKey{Rule: "r", TicketID: 1}
	f := claim(t, s, key, episode, t0)
	for _, st := range []*store.Store{s, other} {
		for _, at := range []time.Time{t0, t0.Add(lease - time.Microsecond)} {
			g := claim(t, st, key, episode, at)
			mustLose(t, g)
			if g.ID != f.ID || g.Episode != 1 || g.Seq != 1 {
				t.Errorf("losing claim = %+v; want it to name firing %d episode 1 seq 1", g, f.ID)
			}
		}
	}
	// The mode does not matter while the firing is pending.
	mustLose(t, claim(t, other, key, every(time.Second), t0.Add(time.Minute)))
}

func testPendingLeaseExpired(t *testing.T, open Open) {
	s, other := open(t), open(t)
	key := rules.FiringKey{Rule: "r", TicketID: 7}
	f := claim(t, s, key, episode, t0)
	do(t, s.ActionDone(t.Context(), f.ID, 2))
	do(t, s.ActionDone(t.Context(), f.ID, 0))
	at := t0.Add(lease)
	g := claim(t, other, key, episode, at)
	mustWin(t, g, 1, 1, true, []int{0, 2})
	if g.ID != f.ID || !g.Started.Equal(t0) {
		t.Errorf("resumed firing id %d started %v; want the pending one %d, started at the first claim %v", g.ID, g.Started, f.ID, t0)
	}
	fi := state(t, s, key)
	if fi.Attempts != 2 || !fi.ClaimedAt.Equal(at) || !fi.LeaseUntil.Equal(at.Add(lease)) || fi.State != rules.FiringPending {
		t.Errorf("after take-over FiringState = %+v; want attempts 2, claimed at %v, lease until %v", fi, at, at.Add(lease))
	}
	// The take-over renewed the lease: the first holder cannot take it back.
	mustLose(t, claim(t, s, key, episode, at.Add(lease-time.Second)))
	// A second take-over (the second holder crashed too) still reports
	// the first claim.
	at = at.Add(lease)
	if h := claim(t, s, key, episode, at); !h.Won || !h.Resumed || !h.Started.Equal(t0) {
		t.Errorf("second take-over = %+v; want Won, Resumed, Started %v", h, t0)
	}
	do(t, other.ActionDone(t.Context(), g.ID, 1))
	do(t, other.Finish(t.Context(), g.ID, at.Add(time.Second)))
	fi = state(t, s, key)
	if fi.State != rules.FiringDone || !slices.Equal(fi.Done, []int{0, 1, 2}) || !fi.FiredAt.Equal(at.Add(time.Second)) || !fi.LastFiredAt.Equal(at.Add(time.Second)) {
		t.Errorf("after Finish FiringState = %+v; want done, Done [0 1 2], fired at +%v", fi, at.Add(time.Second).Sub(t0))
	}
	mustLose(t, claim(t, s, key, episode, at.Add(time.Hour)))
}

func testRelease(t *testing.T, open Open) {
	s := open(t)
	key := rules.FiringKey{Rule: "r", TicketID: 8}
	f := claim(t, s, key, episode, t0)
	do(t, s.ActionDone(t.Context(), f.ID, 1))
	do(t, s.Release(t.Context(), f.ID, time.Time{}, ""))
	if fi := state(t, s, key); !fi.LeaseUntil.IsZero() || fi.State != rules.FiringPending || fi.LastError != "" {
		t.Errorf("after Release FiringState = %+v; want pending with no lease and no error", fi)
	}
	g := claim(t, s, key, episode, t0.Add(time.Second))
	mustWin(t, g, 1, 1, true, []int{1})
	if g.ID != f.ID || g.Attempts != 2 {
		t.Errorf("resumed id %d attempts %d; want %d, 2", g.ID, g.Attempts, f.ID)
	}
	mustLose(t, claim(t, s, key, episode, t0.Add(2*time.Second)))

	// Released until a later time with a reason: nobody takes it before,
	// the reason shows, and the take-over from then on is attempt 3.
	retry := t0.Add(10 * time.Minute)
	do(t, s.Release(t.Context(), g.ID, retry, "update ticket 8: 400 validation failed"))
	if fi := state(t, s, key); !fi.LeaseUntil.Equal(retry) || fi.LastError != "update ticket 8: 400 validation failed" {
		t.Errorf("after Release until +10m FiringState = %+v; want lease until %v and the reason", fi, retry)
	}
	mustLose(t, claim(t, s, key, episode, retry.Add(-time.Second)))
	h := claim(t, s, key, episode, retry)
	mustWin(t, h, 1, 1, true, []int{1})
	if h.Attempts != 3 {
		t.Errorf("take-over at the retry time: attempts %d, want 3", h.Attempts)
	}
	do(t, s.Finish(t.Context(), h.ID, retry))
	if fi := state(t, s, key); fi.LastError != "" || fi.State != rules.FiringDone {
		t.Errorf("after Finish FiringState = %+v; want done with no error", fi)
	}
}

func testDoneEpisode(t *testing.T, open Open) {
	s := open(t)
	key := rules.FiringKey{Rule: "r", TicketID: 9}
	f := claim(t, s, key, episode, t0)
	do(t, s.Finish(t.Context(), f.ID, t0.Add(time.Second)))
	for _, at := range []time.Time{t0.Add(time.Second), t0.Add(lease), t0.Add(1000 * time.Hour)} {
		g := claim(t, s, key, episode, at)
		mustLose(t, g)
		if g.ID != f.ID || g.Episode != 1 {
			t.Errorf("losing claim %+v; want firing %d of episode 1", g, f.ID)
		}
	}
}

func testEndEpisodes(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	k := func(id int64) rules.FiringKey { return rules.FiringKey{Rule: "r", TicketID: id} }
	for id := int64(1); id <= 5; id++ {
		f := claim(t, s, k(id), episode, t0)
		switch id {
		case 4: // ticket 4's worker died: pending, it may have acted
		case 5: // ticket 5's first action was refused: released, not begun
			do(t, s.Release(ctx, f.ID, t0.Add(time.Hour), "404"))
		default:
			do(t, s.Finish(ctx, f.ID, t0))
		}
	}
	otherRule := claim(t, s, rules.FiringKey{Rule: "other", TicketID: 1}, episode, t0)
	do(t, s.Finish(ctx, otherRule.ID, t0))

	if ids, err := s.OpenEpisodes(ctx, "r"); err != nil || !slices.Equal(ids, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("OpenEpisodes(r) = %v, %v; want [1 2 3 4 5] (a pending firing's episode is open too)", ids, err)
	}
	n, err := s.EndEpisodes(ctx, "r", []int64{2, 99}, t0.Add(time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("EndEpisodes = %d, %v; want 3 closed (tickets 1, 3, 5; 4's firing has begun)", n, err)
	}
	fi := state(t, s, k(1))
	if fi.Open || !fi.EpisodeEnded.Equal(t0.Add(time.Minute)) || fi.Episode != 1 {
		t.Errorf("ticket 1 after EndEpisodes: %+v; want episode 1 closed at +1m", fi)
	}
	if fi := state(t, s, k(2)); !fi.Open {
		t.Errorf("ticket 2 still matches but its episode closed: %+v", fi)
	}
	if ids, err := s.OpenEpisodes(ctx, "r"); err != nil || !slices.Equal(ids, []int64{2, 4}) {
		t.Errorf("OpenEpisodes(r) after EndEpisodes = %v, %v; want [2 4]", ids, err)
	}
	if ids, err := s.OpenEpisodes(ctx, "nobody"); err != nil || len(ids) != 0 {
		t.Errorf("OpenEpisodes of a rule that never fired = %v, %v; want none", ids, err)
	}
	if n, err := s.EndEpisodes(ctx, "r", []int64{2}, t0.Add(2*time.Minute)); err != nil || n != 0 {
		t.Errorf("second EndEpisodes = %d, %v; want 0 (already closed, or begun)", n, err)
	}
	// The episode re-arms: the ticket matching again fires again.
	mustWin(t, claim(t, s, k(1), episode, t0.Add(3*time.Minute)), 2, 1, false, nil)
	mustLose(t, claim(t, s, k(2), episode, t0.Add(3*time.Minute)))
	// A released firing in a closed episode is superseded by the new
	// episode under OnceEpisode (it never began).
	mustWin(t, claim(t, s, k(5), episode, t0.Add(3*time.Minute)), 2, 1, false, nil)
	// The begun one is taken over in its own episode once its lease ends.
	resumed := claim(t, s, k(4), episode, t0.Add(lease))
	mustWin(t, resumed, 1, 1, true, nil)
	do(t, s.Finish(ctx, resumed.ID, t0.Add(lease)))
	// Other rules are untouched.
	mustLose(t, claim(t, s, rules.FiringKey{Rule: "other", TicketID: 1}, episode, t0.Add(3*time.Minute)))
	// An empty match closes every open episode of the rule whose firing
	// has not begun.
	if n, err := s.EndEpisodes(ctx, "r", nil, t0.Add(lease+time.Minute)); err != nil || n != 2 {
		t.Errorf("EndEpisodes(nil) = %d, %v; want 2 (tickets 2 and 4; the new firings of 1 and 5 are under way)", n, err)
	}
	if fi := state(t, s, rules.FiringKey{Rule: "other", TicketID: 1}); !fi.Open {
		t.Errorf("EndEpisodes of rule r closed rule other's episode: %+v", fi)
	}
}

func testEndEpisodesLarge(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	const openEpisodes = 1500
	// Open episodes on tickets 1..1500; the poll matched 10,000 tickets:
	// the even ones among them, and 9,250 others.
	for id := int64(1); id <= openEpisodes; id++ {
		f := claim(t, s, rules.FiringKey{Rule: "big", TicketID: id}, episode, t0)
		mustWin(t, f, 1, 1, false, nil)
		do(t, s.Finish(ctx, f.ID, t0))
	}
	matching := make([]int64, 0, 10000)
	for id := int64(2); id <= openEpisodes; id += 2 {
		matching = append(matching, id)
	}
	for id := int64(100000); len(matching) < 10000; id++ {
		matching = append(matching, id)
	}
	n, err := s.EndEpisodes(ctx, "big", matching, t0.Add(time.Minute))
	if err != nil || n != openEpisodes/2 {
		t.Fatalf("EndEpisodes(10,000 ids) = %d, %v; want %d", n, err, openEpisodes/2)
	}
	for _, id := range []int64{1, 2, 777, 778, 1499, 1500} {
		if fi := state(t, s, rules.FiringKey{Rule: "big", TicketID: id}); fi.Open != (id%2 == 0) {
			t.Errorf("ticket %d open = %v; want %v", id, fi.Open, id%2 == 0)
		}
	}
}

func testOnceTicket(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "welcome", TicketID: 5}
	f := claim(t, s, key, ticket, t0)
	mustWin(t, f, 1, 1, false, nil)
	do(t, s.Finish(ctx, f.ID, t0))
	mustLose(t, claim(t, s, key, ticket, t0.Add(time.Hour)))
	for i := range 3 {
		at := t0.Add(time.Duration(i+2) * time.Hour)
		if _, err := s.EndEpisodes(ctx, "welcome", nil, at); err != nil {
			t.Fatal(err)
		}
		mustLose(t, claim(t, s, key, ticket, at.Add(time.Minute)))
	}
	if fi := state(t, s, key); fi.Episode != 1 || fi.State != rules.FiringDone {
		t.Errorf("FiringState = %+v; want episode 1 done", fi)
	}
	// A ticket that never fired does fire once.
	mustWin(t, claim(t, s, rules.FiringKey{Rule: "welcome", TicketID: 6}, ticket, t0), 1, 1, false, nil)
}

func testOnceTicketCrashed(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "welcome", TicketID: 5}
	f := begun(t, s, key, ticket)
	// The worker died; then the ticket stopped matching for a while: the
	// begun firing keeps its episode open.
	if n, err := s.EndEpisodes(ctx, "welcome", nil, t0.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("EndEpisodes = %d, %v; want 0", n, err)
	}
	// Back before the lease ran out: still the crashed worker's.
	mustLose(t, claim(t, s, key, ticket, t0.Add(lease-time.Second)))
	// After it: the same firing is completed, never a fresh one.
	g := claim(t, s, key, ticket, t0.Add(lease))
	mustWin(t, g, 1, 1, true, []int{0})
	if g.ID != f.ID {
		t.Errorf("resumed id %d; want %d", g.ID, f.ID)
	}
	if fi := state(t, s, key); !fi.Open {
		t.Errorf("resumed firing's episode is closed: %+v", fi)
	}
	do(t, s.Finish(ctx, g.ID, t0.Add(lease)))
	mustLose(t, claim(t, s, key, ticket, t0.Add(10*lease)))
}

func testOnceEvery(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "remind", TicketID: 3}
	period := 10 * time.Minute
	f := claim(t, s, key, every(period), t0)
	mustWin(t, f, 1, 1, false, nil)
	fired := t0.Add(time.Minute)
	do(t, s.Finish(ctx, f.ID, fired))
	for _, at := range []time.Time{fired, fired.Add(5 * time.Minute), fired.Add(period - time.Microsecond)} {
		mustLose(t, claim(t, s, key, every(period), at))
	}
	g := claim(t, s, key, every(period), fired.Add(period))
	mustWin(t, g, 1, 2, false, nil)
	if g.ID == f.ID {
		t.Errorf("second firing reuses id %d", f.ID)
	}
	// Pending seq 2 with a valid lease blocks, whatever the period.
	mustLose(t, claim(t, s, key, every(time.Second), fired.Add(period+time.Minute)))
	fired2 := fired.Add(period + time.Minute)
	do(t, s.Finish(ctx, g.ID, fired2))
	// The period counts from the last firing, and a longer period
	// configured later applies at once.
	mustLose(t, claim(t, s, key, every(time.Hour), fired2.Add(30*time.Minute)))
	third := claim(t, s, key, every(time.Hour), fired2.Add(time.Hour))
	mustWin(t, third, 1, 3, false, nil)
	fi := state(t, s, key)
	if fi.Seq != 3 || !fi.LastFiredAt.Equal(fired2) {
		t.Errorf("FiringState = %+v; want seq 3, last fired at %v", fi, fired2)
	}
	if next, ok := every(time.Hour).NextEligible(fi); !ok || !next.Equal(fi.LeaseUntil) {
		t.Errorf("NextEligible of pending = %v, %v; want lease end %v", next, ok, fi.LeaseUntil)
	}
	// A new episode starts at seq 1 without waiting for the period.
	do(t, s.Finish(ctx, third.ID, fired2.Add(time.Hour)))
	if _, err := s.EndEpisodes(ctx, "remind", nil, fired2.Add(61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustWin(t, claim(t, s, key, every(time.Hour), fired2.Add(62*time.Minute)), 2, 1, false, nil)
}

func testFiringEdges(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "r", TicketID: 11}
	f := claim(t, s, key, episode, t0)
	for range 3 {
		do(t, s.ActionDone(ctx, f.ID, 3))
	}
	if err := s.ActionDone(ctx, f.ID, -1); err == nil {
		t.Error("ActionDone(-1) succeeded; want an error")
	}
	for name, err := range map[string]error{
		"ActionDone": s.ActionDone(ctx, f.ID+1000, 0),
		"Finish":     s.Finish(ctx, f.ID+1000, t0),
		"Release":    s.Release(ctx, f.ID+1000, time.Time{}, ""),
	} {
		if !errors.Is(err, store.ErrUnknownFiring) {
			t.Errorf("%s(unknown firing) = %v; want ErrUnknownFiring", name, err)
		}
	}
	do(t, s.Finish(ctx, f.ID, t0.Add(time.Second)))
	do(t, s.Finish(ctx, f.ID, t0.Add(time.Hour))) // idempotent: keeps the first time
	do(t, s.Release(ctx, f.ID, time.Time{}, "x")) // a done firing stays done
	fi := state(t, s, key)
	if fi.State != rules.FiringDone || !fi.FiredAt.Equal(t0.Add(time.Second)) || !slices.Equal(fi.Done, []int{3}) {
		t.Errorf("FiringState = %+v; want done at +1s with Done [3]", fi)
	}
	mustLose(t, claim(t, s, key, episode, t0.Add(time.Hour)))
}

func testPrune(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	rep := rules.FiringKey{Rule: "remind", TicketID: 1}
	var ids []int64
	for i := range 3 { // three repeats: seq 1 and 2 become history
		at := t0.Add(time.Duration(i) * time.Hour)
		f := claim(t, s, rep, every(time.Hour), at)
		mustWin(t, f, 1, int64(i+1), false, nil)
		do(t, s.ActionDone(ctx, f.ID, 0))
		do(t, s.Finish(ctx, f.ID, at))
		ids = append(ids, f.ID)
	}
	once := rules.FiringKey{Rule: "welcome", TicketID: 1}
	w := claim(t, s, once, ticket, t0)
	do(t, s.Finish(ctx, w.ID, t0))
	n, err := s.PruneFirings(ctx, t0.Add(90*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("PruneFirings = %d, %v; want 2 (seq 1 and 2)", n, err)
	}
	for _, id := range ids[:2] {
		if err := s.Release(ctx, id, time.Time{}, ""); !errors.Is(err, store.ErrUnknownFiring) {
			t.Errorf("pruned firing %d still known: %v", id, err)
		}
	}
	if fi := state(t, s, rep); fi.FiringID != ids[2] || fi.Seq != 3 || !slices.Equal(fi.Done, []int{0}) {
		t.Errorf("current firing after prune = %+v", fi)
	}
	mustLose(t, claim(t, s, once, ticket, t0.Add(1000*time.Hour)))
	mustWin(t, claim(t, s, rep, every(time.Hour), t0.Add(3*time.Hour)), 1, 4, false, nil)
}

func testClaimValidation(t *testing.T, open Open) {
	s := open(t)
	key := rules.FiringKey{Rule: "r", TicketID: 1}
	for _, tc := range []struct {
		name  string
		key   rules.FiringKey
		once  rules.Once
		lease time.Duration
	}{
		{"empty rule", rules.FiringKey{TicketID: 1}, episode, lease},
		{"zero lease", key, episode, 0},
		{"zero period", key, every(0), lease},
		{"unknown mode", key, rules.Once{Mode: 42}, lease},
	} {
		if f, err := s.Claim(t.Context(), tc.key, tc.once, t0, tc.lease); err == nil || f.Won {
			t.Errorf("%s: Claim = %+v, %v; want an error", tc.name, f, err)
		}
	}
	if _, ok, err := s.FiringState(t.Context(), key); ok || err != nil {
		t.Errorf("a rejected claim left a record (%v, %v)", ok, err)
	}
}

func testFiringStateUnknown(t *testing.T, open Open) {
	s := open(t)
	fi, ok, err := s.FiringState(t.Context(), rules.FiringKey{Rule: "nope", TicketID: 1})
	if ok || err != nil || fi.Episode != 0 {
		t.Errorf("FiringState(unknown) = %+v, %v, %v; want nothing", fi, ok, err)
	}
}

func testCursors(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if v, ok, err := s.Cursor(ctx, "tickets.updated_since"); ok || err != nil || v != "" {
		t.Errorf("unset cursor = %q, %v, %v", v, ok, err)
	}
	do(t, s.SetCursor(ctx, "tickets.updated_since", "2026-03-02T09:00:00Z", t0))
	do(t, s.SetCursor(ctx, "other", "x", t0))
	do(t, s.SetCursor(ctx, "tickets.updated_since", "2026-03-02T09:05:00Z", t0.Add(5*time.Minute)))
	if v, ok, err := s.Cursor(ctx, "tickets.updated_since"); !ok || err != nil || v != "2026-03-02T09:05:00Z" {
		t.Errorf("cursor = %q, %v, %v; want the latest value", v, ok, err)
	}
	if v, _, _ := s.Cursor(ctx, "other"); v != "x" {
		t.Errorf("cursor other = %q; want x", v)
	}
	if err := s.SetCursor(ctx, "", "x", t0); err == nil {
		t.Error("SetCursor with an empty name succeeded")
	}
}

func testEnvelopes(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	ttl := 10 * time.Minute
	seen := func(id string, at time.Time) bool {
		t.Helper()
		dup, err := s.SeenEnvelope(ctx, id, at, ttl)
		if err != nil {
			t.Fatalf("SeenEnvelope(%q): %v", id, err)
		}
		return dup
	}
	for _, step := range []struct {
		id   string
		at   time.Duration
		want bool
	}{
		{"env-1", 0, false},
		{"env-1", time.Second, true},
		{"env-2", time.Second, false},
		{"env-1", ttl - time.Microsecond, true},
		{"env-1", ttl, false}, // expired: a new delivery, recorded afresh
		{"env-1", ttl + time.Minute, true},
		{"env-1", 2*ttl - time.Microsecond, true},
		{"env-2", 2 * ttl, false},
		{"env-1", 2 * ttl, false},
	} {
		if got := seen(step.id, t0.Add(step.at)); got != step.want {
			t.Errorf("SeenEnvelope(%s at +%v) = %v; want %v", step.id, step.at, got, step.want)
		}
	}
	if _, err := s.SeenEnvelope(ctx, "", t0, ttl); err == nil {
		t.Error("SeenEnvelope with an empty id succeeded")
	}
	if _, err := s.SeenEnvelope(ctx, "x", t0, 0); err == nil {
		t.Error("SeenEnvelope with zero ttl succeeded")
	}
}

func testAcks(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if by, at, ok, err := s.Ack(ctx, "page-1"); ok || err != nil || by != "" || !at.IsZero() {
		t.Errorf("unacked page: %q %v %v %v", by, at, ok, err)
	}
	first, err := s.SetAck(ctx, "page-1", "U123", t0)
	if err != nil || !first {
		t.Fatalf("SetAck = %v, %v; want first", first, err)
	}
	first, err = s.SetAck(ctx, "page-1", "U999", t0.Add(time.Minute))
	if err != nil || first {
		t.Errorf("second SetAck = %v, %v; want not first", first, err)
	}
	by, at, ok, err := s.Ack(ctx, "page-1")
	if !ok || err != nil || by != "U123" || !at.Equal(t0) || at.Location() != time.UTC {
		t.Errorf("Ack = %q %v %v %v; want U123 at %v UTC", by, at, ok, err, t0)
	}
	if _, err := s.SetAck(ctx, "", "U1", t0); err == nil {
		t.Error("SetAck with an empty key succeeded")
	}
}

func testPing(t *testing.T, open Open) {
	s := open(t)
	do(t, s.Ping(t.Context()))
	v, err := s.SchemaVersion(t.Context())
	if err != nil || v < 1 {
		t.Errorf("SchemaVersion = %d, %v; want >= 1", v, err)
	}
	do(t, s.Close())
	do(t, s.Close()) // twice is fine
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close succeeded")
	}
	// Opening an up-to-date database migrates nothing and works.
	s2 := open(t)
	if v2, err := s2.SchemaVersion(t.Context()); err != nil || v2 != v {
		t.Errorf("SchemaVersion after reopen = %d, %v; want %d", v2, err, v)
	}
}

func testReopen(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "r", TicketID: 21}
	begun(t, s, key, episode)
	done := claim(t, s, rules.FiringKey{Rule: "r", TicketID: 22}, episode, t0)
	do(t, s.Finish(ctx, done.ID, t0))
	do(t, s.SetCursor(ctx, "c", "v1", t0))
	if _, err := s.SetAck(ctx, "p", "U1", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SeenEnvelope(ctx, "e", t0, time.Hour); err != nil {
		t.Fatal(err)
	}
	do(t, s.Close()) // without finishing firing f

	s = open(t)
	mustLose(t, claim(t, s, key, episode, t0.Add(lease-time.Second)))
	mustWin(t, claim(t, s, key, episode, t0.Add(lease)), 1, 1, true, []int{0})
	mustLose(t, claim(t, s, rules.FiringKey{Rule: "r", TicketID: 22}, episode, t0.Add(time.Hour)))
	if v, ok, _ := s.Cursor(ctx, "c"); !ok || v != "v1" {
		t.Errorf("cursor after reopen = %q, %v", v, ok)
	}
	if by, _, ok, _ := s.Ack(ctx, "p"); !ok || by != "U1" {
		t.Errorf("ack after reopen = %q, %v", by, ok)
	}
	if dup, err := s.SeenEnvelope(ctx, "e", t0.Add(time.Minute), time.Hour); err != nil || !dup {
		t.Errorf("envelope after reopen: duplicate = %v, %v; want true", dup, err)
	}
}

// replicas opens n Stores on t's database, each with its own pool.
func replicas(t *testing.T, open Open, n int) []*store.Store {
	ss := make([]*store.Store, n)
	for i := range ss {
		ss[i] = open(t)
	}
	return ss
}

// race runs fn(i) for every replica at once and waits for all.
func race(n int, fn func(i int)) {
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range n {
		wg.Go(func() {
			start.Wait()
			fn(i)
		})
	}
	start.Done()
	wg.Wait()
}

func testConcurrentClaims(t *testing.T, open Open) {
	ss := replicas(t, open, 8)
	const keys = 50
	for k := range keys {
		key := rules.FiringKey{Rule: "race", TicketID: int64(k + 1)}
		res := make([]rules.Firing, len(ss))
		errs := make([]error, len(ss))
		race(len(ss), func(i int) {
			res[i], errs[i] = ss[i].Claim(t.Context(), key, episode, t0, lease)
		})
		won := 0
		for i, f := range res {
			if errs[i] != nil {
				t.Fatalf("key %d replica %d: %v", k, i, errs[i])
			}
			if f.Won {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("key %v: %d replicas won; want exactly 1: %+v", key, won, res)
		}
		for _, f := range res {
			if f.ID != res[0].ID || f.Episode != 1 || f.Seq != 1 {
				t.Fatalf("key %v: replicas disagree on the firing: %+v", key, res)
			}
		}
	}
}

func testConcurrentTakeover(t *testing.T, open Open) {
	ss := replicas(t, open, 8)
	for k := range 10 {
		key := rules.FiringKey{Rule: "race", TicketID: int64(k + 1)}
		f := claim(t, ss[0], key, every(time.Minute), t0)
		do(t, ss[0].ActionDone(t.Context(), f.ID, 0))
		res := make([]rules.Firing, len(ss))
		errs := make([]error, len(ss))
		race(len(ss), func(i int) {
			res[i], errs[i] = ss[i].Claim(t.Context(), key, every(time.Minute), t0.Add(lease), lease)
		})
		won := 0
		for i, g := range res {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if g.Won {
				won++
				mustWin(t, g, 1, 1, true, []int{0})
			}
		}
		if won != 1 {
			t.Fatalf("key %v: %d replicas took over; want 1", key, won)
		}
	}
}

// A slow holder finishing just as its lease runs out races a replica taking
// the firing over: both must succeed (no deadlock, no error), and the
// replica wins only if it came first, as a resumption.
func testConcurrentFinishTakeover(t *testing.T, open Open) {
	a, b := open(t), open(t)
	for k := range 20 {
		key := rules.FiringKey{Rule: "race", TicketID: int64(k + 1)}
		f := begun(t, a, key, episode)
		var (
			finishErr, claimErr error
			g                   rules.Firing
		)
		race(2, func(i int) {
			if i == 0 {
				finishErr = a.Finish(t.Context(), f.ID, t0.Add(lease))
			} else {
				g, claimErr = b.Claim(t.Context(), key, episode, t0.Add(lease), lease)
			}
		})
		if finishErr != nil || claimErr != nil {
			t.Fatalf("key %v: Finish: %v; Claim: %v", key, finishErr, claimErr)
		}
		if g.Won && (!g.Resumed || g.ID != f.ID || !slices.Equal(g.Done, []int{0})) {
			t.Fatalf("key %v: racing claim = %+v; want a resumption of firing %d or nothing", key, g, f.ID)
		}
		if fi := state(t, a, key); fi.State != rules.FiringDone {
			t.Fatalf("key %v: firing %+v; want done", key, fi)
		}
	}
}

func testConcurrentEnvelopes(t *testing.T, open Open) {
	ss := replicas(t, open, 8)
	for k := range 10 {
		id := fmt.Sprintf("env-%d", k)
		dups := make([]bool, len(ss))
		firsts := make([]bool, len(ss))
		errs := make([]error, 2*len(ss))
		race(len(ss), func(i int) {
			dups[i], errs[i] = ss[i].SeenEnvelope(t.Context(), id, t0, time.Minute)
			firsts[i], errs[len(ss)+i] = ss[i].SetAck(t.Context(), id, fmt.Sprint("U", i), t0)
		})
		fresh, first := 0, 0
		for i := range ss {
			if errs[i] != nil || errs[len(ss)+i] != nil {
				t.Fatal(errs[i], errs[len(ss)+i])
			}
			if !dups[i] {
				fresh++
			}
			if firsts[i] {
				first++
			}
		}
		if fresh != 1 || first != 1 {
			t.Fatalf("%s: %d replicas saw the envelope first and %d acked first; want 1 and 1", id, fresh, first)
		}
	}
}

// BenchClaim measures Claim on s and reports claims/s for the two cases a
// poll cycle meets: a ticket that starts matching (a new episode and firing
// are written: "fresh") and a ticket still matching whose episode already
// fired (read and decide only: "repeat"); "fresh-leader" is "fresh" by a
// process that leads (the claims fenced on its epoch).
func BenchClaim(b *testing.B, s *store.Store) {
	ctx := b.Context()
	fresh := func(b *testing.B) {
		// -count reruns this on the same store with b.N from 1 again: a
		// rule of its own for each run, so that every claim is fresh.
		rule := fmt.Sprintf("bench-fresh-%d-%d", b.N, time.Now().UnixNano())
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			f, err := s.Claim(ctx, rules.FiringKey{Rule: rule, TicketID: int64(i)}, episode, t0, lease)
			if err != nil || !f.Won {
				b.Fatalf("claim = %+v, %v", f, err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "claims/s")
	}
	b.Run("fresh", fresh)
	b.Run("repeat", func(b *testing.B) {
		const tickets = 100
		rule := fmt.Sprintf("bench-repeat-%d", b.N)
		for i := range tickets {
			f, err := s.Claim(ctx, rules.FiringKey{Rule: rule, TicketID: int64(i)}, episode, t0, lease)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Finish(ctx, f.ID, t0); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			f, err := s.Claim(ctx, rules.FiringKey{Rule: rule, TicketID: int64(i % tickets)}, episode, t0.Add(time.Hour), lease)
			if err != nil || f.Won {
				b.Fatalf("claim = %+v, %v", f, err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "claims/s")
	})
	// As the scheduler claims: on a store whose process leads, each winning
	// claim fenced on the leadership epoch. Last: once its leadership is
	// given up, the store claims nothing more.
	b.Run("fresh-leader", func(b *testing.B) {
		l, err := s.Leadership(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close(context.Background())
		if err := l.IsLeader(ctx); err != nil {
			b.Fatal(err)
		}
		fresh(b)
	})
}

// FiringStates reads, for many tickets of one rule at once, what
// FiringState reads one by one (but Done), across more tickets than one
// statement takes.
func testFiringStates(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	var ids []int64
	for id := int64(1); id <= 1200; id++ {
		ids = append(ids, id)
		if id%3 == 0 {
			continue // never fired
		}
		f := claim(t, s, rules.FiringKey{Rule: "r", TicketID: id}, episode, t0)
		if id%3 == 1 {
			do(t, s.Finish(ctx, f.ID, t0.Add(time.Second)))
		}
	}
	claim(t, s, rules.FiringKey{Rule: "other", TicketID: 3}, episode, t0)
	got, err := s.FiringStates(ctx, "r", ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 800 {
		t.Errorf("%d states, want 800 (the tickets the rule fired on)", len(got))
	}
	for _, id := range []int64{1, 2, 3, 599, 1199, 1200} {
		want, found, err := s.FiringState(ctx, rules.FiringKey{Rule: "r", TicketID: id})
		if err != nil {
			t.Fatal(err)
		}
		want.Done = nil
		fi, ok := got[id]
		if ok != found || (ok && fmt.Sprint(fi) != fmt.Sprint(want)) {
			t.Errorf("ticket %d: FiringStates %+v (%v), FiringState %+v (%v)", id, fi, ok, want, found)
		}
	}
}

// testBegunFiring: a firing with an action done keeps its episode open
// through EndEpisodes until it finishes (its first action may have moved
// the ticket out of the rule's query), and BegunFirings lists it for the
// scheduler to finish; one with no action done does not.
func testBegunFiring(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	k := func(id int64) rules.FiringKey { return rules.FiringKey{Rule: "r", TicketID: id} }
	begun := claim(t, s, k(1), episode, t0)
	do(t, s.ActionDone(ctx, begun.ID, 0))
	do(t, s.Release(ctx, begun.ID, t0, "429")) // released after an action: still begun
	refused := claim(t, s, k(2), episode, t0)
	do(t, s.Release(ctx, refused.ID, t0.Add(time.Hour), "404")) // nothing done, released
	other := claim(t, s, rules.FiringKey{Rule: "other", TicketID: 3}, episode, t0)
	do(t, s.ActionDone(ctx, other.ID, 1))
	got, err := s.BegunFirings(ctx)
	if err != nil || fmt.Sprint(got) != "map[other:[3] r:[1]]" {
		t.Fatalf("BegunFirings = %v, %v; want r: [1], other: [3]", got, err)
	}
	if n, err := s.EndEpisodes(ctx, "r", nil, t0.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("EndEpisodes = %d, %v; want 1 (ticket 2 only)", n, err)
	}
	if fi := state(t, s, k(1)); !fi.Open || fi.State != rules.FiringPending {
		t.Errorf("begun firing after EndEpisodes: %+v; want its episode open, still pending", fi)
	}
	// Taken over when the lease ends, with its done action, and finished.
	g := claim(t, s, k(1), episode, t0.Add(lease))
	mustWin(t, g, 1, 1, true, []int{0})
	do(t, s.Finish(ctx, g.ID, t0.Add(lease)))
	if got, err := s.BegunFirings(ctx); err != nil || fmt.Sprint(got) != "map[other:[3]]" {
		t.Errorf("BegunFirings after Finish = %v, %v", got, err)
	}
	if n, err := s.EndEpisodes(ctx, "r", nil, t0.Add(lease+time.Minute)); err != nil || n != 1 {
		t.Errorf("EndEpisodes after Finish = %d, %v; want 1", n, err)
	}
}

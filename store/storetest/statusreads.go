package storetest

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// statusTests: what the status pages read of the ledger and the
// leadership (migration 0010, issue 24).
var statusTests = []struct {
	name string
	fn   func(t *testing.T, open Open)
}{
	{"ClaimSinceRecordsMatchStart", testClaimSince},
	{"LeaderNamesItsHolder", testLeaderHolder},
}

// A firing records when its ticket began to match: a new firing keeps the
// since it was claimed with (a future or zero one is the claim's time), a
// take-over keeps the first claim's, and RecentFirings returns it.
func testClaimSince(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	matched := func(id int64) time.Time {
		t.Helper()
		fs, err := s.RecentFirings(ctx, store.FiringFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.ID == id {
				return f.MatchedAt
			}
		}
		t.Fatalf("firing %d not among the recent firings %+v", id, fs)
		return time.Time{}
	}
	claimSince := func(ticket int64, now, since time.Time) rules.Firing {
		t.Helper()
		f, err := s.ClaimSince(ctx, rules.FiringKey{Rule: "r", TicketID: ticket}, episode, now, lease, since)
		if err != nil || !f.Won {
			t.Fatalf("ClaimSince #%d: %+v, %v", ticket, f, err)
		}
		return f
	}
	f := claimSince(1, t0.Add(10*time.Minute), t0)
	if got := matched(f.ID); !got.Equal(t0) {
		t.Errorf("matched at %v, want %v (the since claimed with)", got, t0)
	}
	// The lease runs out: the take-over keeps the first claim's since.
	again := claimSince(1, t0.Add(10*time.Minute+2*lease), t0.Add(9*time.Minute))
	if !again.Resumed || again.ID != f.ID {
		t.Fatalf("take-over: %+v, want firing %d resumed", again, f.ID)
	}
	if got := matched(f.ID); !got.Equal(t0) {
		t.Errorf("after a take-over matched at %v, want %v", got, t0)
	}
	for i, since := range []time.Time{{}, t0.Add(time.Hour)} {
		now := t0.Add(20 * time.Minute)
		g := claimSince(int64(2+i), now, since)
		if got := matched(g.ID); !got.Equal(now) {
			t.Errorf("since %v: matched at %v, want the claim's time %v", since, got, now)
		}
	}
	// Claim is ClaimSince at the claim's time.
	h := claim(t, s, rules.FiringKey{Rule: "r", TicketID: 9}, episode, t0.Add(30*time.Minute))
	if got := matched(h.ID); !got.Equal(t0.Add(30 * time.Minute)) {
		t.Errorf("Claim: matched at %v, want the claim's time", got)
	}
}

// The leadership names the replica that leads, with its epoch; a store
// that never led reads epoch 0 and no holder.
func testLeaderHolder(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	li, err := s.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if li.Epoch != 0 || li.Holder != "" {
		t.Errorf("before any leader: %+v, want epoch 0 and no holder", li)
	}
	l := lead(t, s)
	other := open(t) // another replica reads the same state
	li, err = other.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if li.Epoch != l.Epoch() || li.Holder != store.ReplicaName() || li.Since.IsZero() {
		t.Errorf("Leader = %+v, want epoch %d held by %q since a time", li, l.Epoch(), store.ReplicaName())
	}
}

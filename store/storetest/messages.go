package storetest

import (
	"fmt"
	"testing"
	"time"
)

// messageTests are the cases of the message -> ticket claims (migration
// 0006): a message makes one ticket, whatever the replicas do.
var messageTests = []struct {
	name string
	fn   func(t *testing.T, open Open)
}{
	{"MessageTicketClaimOnce", testMessageClaimOnce},
	{"MessageTicketLeaseTakeover", testMessageTakeover},
	{"MessageTicketRelease", testMessageRelease},
	{"MessageTicketBadInput", testMessageBadInput},
	{"MessageTicketConcurrentOneWinner", testMessageConcurrent},
}

func testMessageClaimOnce(t *testing.T, open Open) {
	s, other := open(t), open(t)
	ctx := t.Context()
	if id, ok, err := s.MessageTicket(ctx, "C1", "1.000100"); id != 0 || ok || err != nil {
		t.Fatalf("MessageTicket before any claim = %d, %v, %v; want 0, false, nil", id, ok, err)
	}
	id, won, err := s.ClaimMessage(ctx, "C1", "1.000100", t0, lease)
	if err != nil || !won || id != 0 {
		t.Fatalf("first ClaimMessage = %d, %v, %v; want won", id, won, err)
	}
	// While the ticket is being made, nobody else wins, nor sees a ticket.
	id, won, err = other.ClaimMessage(ctx, "C1", "1.000100", t0.Add(time.Second), lease)
	if err != nil || won || id != 0 {
		t.Fatalf("ClaimMessage during the claim = %d, %v, %v; want neither won nor a ticket", id, won, err)
	}
	do(t, s.SetMessageTicket(ctx, "C1", "1.000100", 77))
	do(t, s.SetMessageTicket(ctx, "C1", "1.000100", 77)) // the same again is fine
	if err := s.SetMessageTicket(ctx, "C1", "1.000100", 78); err == nil {
		t.Error("SetMessageTicket with another ticket succeeded; want an error")
	}
	// Long after, on another replica: the ticket, never a second claim.
	for _, at := range []time.Time{t0.Add(2 * time.Second), t0.Add(24 * time.Hour)} {
		id, won, err = other.ClaimMessage(ctx, "C1", "1.000100", at, lease)
		if err != nil || won || id != 77 {
			t.Errorf("ClaimMessage at +%v = %d, %v, %v; want ticket 77, not won", at.Sub(t0), id, won, err)
		}
	}
	if id, ok, err := other.MessageTicket(ctx, "C1", "1.000100"); id != 77 || !ok || err != nil {
		t.Errorf("MessageTicket = %d, %v, %v; want 77, true", id, ok, err)
	}
	// Another message, or the same ts in another channel, is its own.
	for _, m := range [][2]string{{"C1", "1.000200"}, {"C2", "1.000100"}} {
		if _, won, err := s.ClaimMessage(ctx, m[0], m[1], t0, lease); !won || err != nil {
			t.Errorf("ClaimMessage(%s, %s) = %v, %v; want won", m[0], m[1], won, err)
		}
	}
	if err := s.ReleaseMessage(ctx, "C1", "1.000100"); err != nil {
		t.Fatal(err)
	}
	if id, ok, _ := s.MessageTicket(ctx, "C1", "1.000100"); id != 77 || !ok {
		t.Errorf("ReleaseMessage dropped a recorded ticket: %d, %v", id, ok)
	}
}

func testMessageTakeover(t *testing.T, open Open) {
	s, other := open(t), open(t)
	ctx := t.Context()
	if _, won, err := s.ClaimMessage(ctx, "C1", "2.0", t0, lease); !won || err != nil {
		t.Fatalf("claim = %v, %v", won, err)
	}
	// The holder crashed: just before the lease ends nobody wins, at its
	// end one replica takes over, and then the claim is its.
	if _, won, _ := other.ClaimMessage(ctx, "C1", "2.0", t0.Add(lease-time.Microsecond), lease); won {
		t.Error("claim won before the lease ended")
	}
	if _, won, err := other.ClaimMessage(ctx, "C1", "2.0", t0.Add(lease), lease); !won || err != nil {
		t.Fatalf("take-over at the lease's end = %v, %v; want won", won, err)
	}
	if _, won, _ := s.ClaimMessage(ctx, "C1", "2.0", t0.Add(lease+time.Second), lease); won {
		t.Error("a second take-over within the new lease won")
	}
	do(t, other.SetMessageTicket(ctx, "C1", "2.0", 5))
	if id, won, _ := s.ClaimMessage(ctx, "C1", "2.0", t0.Add(10*lease), lease); won || id != 5 {
		t.Errorf("after the take-over made ticket 5: %d, %v", id, won)
	}
}

func testMessageRelease(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if _, won, _ := s.ClaimMessage(ctx, "C1", "3.0", t0, lease); !won {
		t.Fatal("claim not won")
	}
	do(t, s.ReleaseMessage(ctx, "C1", "3.0"))
	if id, ok, err := s.MessageTicket(ctx, "C1", "3.0"); ok || id != 0 || err != nil {
		t.Errorf("MessageTicket after release = %d, %v, %v", id, ok, err)
	}
	// Released: the next reaction tries again at once.
	if _, won, err := s.ClaimMessage(ctx, "C1", "3.0", t0.Add(time.Second), lease); !won || err != nil {
		t.Errorf("claim after release = %v, %v; want won", won, err)
	}
	if err := s.SetMessageTicket(ctx, "C9", "9.9", 3); err == nil {
		t.Error("SetMessageTicket without a claim succeeded")
	}
	do(t, s.ReleaseMessage(ctx, "C9", "9.9")) // nothing to release is fine
}

func testMessageBadInput(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	for _, c := range []struct {
		ch, ts string
		lease  time.Duration
	}{{"", "1.0", lease}, {"C1", "", lease}, {"C1", "1.0", 0}} {
		if _, _, err := s.ClaimMessage(ctx, c.ch, c.ts, t0, c.lease); err == nil {
			t.Errorf("ClaimMessage(%q, %q, %v) succeeded; want an error", c.ch, c.ts, c.lease)
		}
	}
	if _, won, _ := s.ClaimMessage(ctx, "C1", "1.0", t0, lease); !won {
		t.Fatal("claim not won")
	}
	if err := s.SetMessageTicket(ctx, "C1", "1.0", 0); err == nil {
		t.Error("SetMessageTicket(0) succeeded; want an error")
	}
}

func testMessageConcurrent(t *testing.T, open Open) {
	ss := replicas(t, open, 8)
	for round := range 5 {
		ts := fmt.Sprintf("%d.000100", round)
		won := make([]bool, len(ss))
		errs := make([]error, len(ss))
		race(len(ss), func(i int) {
			_, won[i], errs[i] = ss[i].ClaimMessage(t.Context(), "C1", ts, t0, lease)
		})
		wins := 0
		for i := range ss {
			if errs[i] != nil {
				t.Errorf("round %d replica %d: %v", round, i, errs[i])
			}
			if won[i] {
				wins++
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %d replicas won the message; want exactly 1", round, wins)
		}
	}
}

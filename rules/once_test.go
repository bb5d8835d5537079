package rules

import (
	"testing"
	"time"
)

func TestOnceNextEligible(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lease := t0.Add(time.Minute)
	pending := FiringRecord{Episode: 1, Open: true, FiringID: 7, Seq: 1, State: FiringPending, LeaseUntil: lease}
	done := FiringRecord{Episode: 1, Open: true, FiringID: 7, Seq: 1, State: FiringDone, FiredAt: t0}
	closed := done
	closed.Open = false
	closedPending := pending
	closedPending.Open = false
	episode, ticket, hourly := Once{Mode: OnceEpisode}, Once{Mode: OnceTicket}, Once{Mode: OnceEvery, Period: time.Hour}
	for _, tc := range []struct {
		name   string
		once   Once
		rec    FiringRecord
		wantAt time.Time
		wantOK bool
	}{
		{"never claimed", episode, FiringRecord{}, time.Time{}, true},
		{"never claimed, once ticket", ticket, FiringRecord{}, time.Time{}, true},
		{"pending: at its lease end", episode, pending, lease, true},
		{"pending, once ticket", ticket, pending, lease, true},
		{"done, open episode", episode, done, time.Time{}, false},
		{"done, once ticket", ticket, done, time.Time{}, false},
		{"done, once every", hourly, done, t0.Add(time.Hour), true},
		{"closed episode", episode, closed, time.Time{}, true},
		{"closed episode, once ticket", ticket, closed, time.Time{}, false},
		{"closed episode left pending", episode, closedPending, time.Time{}, true},
		{"closed episode left pending, once ticket", ticket, closedPending, lease, true},
	} {
		at, ok := tc.once.NextEligible(tc.rec)
		if !at.Equal(tc.wantAt) || ok != tc.wantOK {
			t.Errorf("%s: NextEligible = %v, %v; want %v, %v", tc.name, at, ok, tc.wantAt, tc.wantOK)
		}
		if tc.wantOK && (tc.once.MayFire(tc.rec, tc.wantAt.Add(-time.Nanosecond)) && !tc.wantAt.IsZero() || !tc.once.MayFire(tc.rec, tc.wantAt)) {
			t.Errorf("%s: MayFire disagrees with NextEligible around %v", tc.name, tc.wantAt)
		}
	}
}

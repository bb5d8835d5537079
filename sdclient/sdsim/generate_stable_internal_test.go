package sdsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

// generatedDeskHash hashes everything Generate puts in a desk, in a fixed
// order, so that a change to the generator's code can show it generates the
// same desk for the same seed.
func generatedDeskHash(t *testing.T, seed int64, tickets int) string {
	t.Helper()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	d := New(WithClock(func() time.Time { return now }), WithGenerated(seed, tickets))
	d.mu.Lock()
	defer d.mu.Unlock()
	st := &d.st
	var ts []*Ticket
	var convs []*Conversation
	var entries []*TimeEntry
	for _, id := range st.ticketIDs {
		ts = append(ts, st.tickets[id])
		for _, cid := range st.convsByTicket[id] {
			convs = append(convs, st.convs[cid])
		}
		entries = append(entries, st.timeEntries[id]...)
	}
	dump := map[string]any{
		"workspaces": st.workspaces, "statuses": st.statuses, "fields": st.customFields, "keys": st.keys,
		"tickets": ts, "convs": convs, "entries": entries,
		"agents": st.agents.copies(), "requesters": st.requesters.copies(), "groups": st.groups.copies(),
		"departments": st.departments.copies(), "assets": st.assets.copies(), "changes": st.changes.copies(),
		"problems": st.problems.copies(), "releases": st.releases.copies(), "next": st.next,
	}
	b, err := json.Marshal(dump)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The generator is deterministic and stays so: the same seed makes the
// same desk, byte for byte, as when these hashes were taken. Tests across
// deskbot (scheduler, bot, cmd) rely on the seeded desk's tickets. A change
// to a wire type's JSON fields changes the hashes too; then check that only
// the new field differs before pinning the new ones.
func TestGeneratedDeskIsStable(t *testing.T) {
	for _, c := range []struct {
		seed    int64
		tickets int
		want    string
	}{
		{1, 300, "964164e12de1a5f7576ded60e3b12c15b5d61568744a73da6402d33675d1defa"},
		{42, 2000, "838f23d0a981d96996b0c72b2054353c52c32c89eabb9218995c302e7bfe6b2c"},
		{7, 0, "24456c753ef9dc1bcad82399f4d974c27d20606ce1ec398168638b628baa0835"},
	} {
		if got := generatedDeskHash(t, c.seed, c.tickets); got != c.want {
			t.Errorf("seed %d, %d tickets: generated desk hashes to %s, want %s", c.seed, c.tickets, got, c.want)
		}
	}
}

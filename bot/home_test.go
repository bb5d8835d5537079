package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
)

func TestWithHomeIntervalRefusesNegative(t *testing.T) {
	_, err := NewRouter(fakedesk.New(), slog.New(slog.DiscardHandler), WithHomeInterval(-time.Second))
	if err == nil || !strings.Contains(err.Error(), "WithHomeInterval: -1s is negative") {
		t.Fatalf("err %v", err)
	}
}

// TestHomeRebuildBound: a person's home is rebuilt at most once per
// interval; within it the same home comes back (not Fresh) without a desk
// call, another person's is built on its own, and after it it is rebuilt.
func TestHomeRebuildBound(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d := fakedesk.New()
	r := newTestRouter(t, d, WithClock(clock))
	ctx := context.Background()
	alice := Caller{UserID: "UALICE", Users: testUsers}
	h := r.Home(ctx, alice)
	if !h.Fresh || !h.Agent || h.NoAccount != "" || !h.BuiltAt.Equal(now) {
		t.Fatalf("first home %+v", h)
	}
	filters := d.Count("filter")
	if filters == 0 {
		t.Fatal("the first home read no list at the desk")
	}
	again := r.Home(ctx, alice)
	if again.Fresh || !again.BuiltAt.Equal(h.BuiltAt) || d.Count("filter") != filters {
		t.Errorf("within the interval: fresh %v, built %v, filters %d→%d", again.Fresh, again.BuiltAt, filters, d.Count("filter"))
	}
	if bob := r.Home(ctx, Caller{UserID: "UBOB", Users: testUsers}); !bob.Fresh {
		t.Error("Bob got Alice's cached home")
	}
	mu.Lock()
	now = now.Add(DefaultHomeInterval)
	mu.Unlock()
	if h := r.Home(ctx, alice); !h.Fresh || !h.BuiltAt.Equal(clock()) {
		t.Errorf("after the interval: %+v", h)
	}
	if nomail := r.Home(ctx, Caller{UserID: "UNOMAIL", Users: testUsers}); !strings.Contains(nomail.NoAccount, "no e-mail address") {
		t.Errorf("no e-mail: %q", nomail.NoAccount)
	}
}

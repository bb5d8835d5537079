package statuspage

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/testkit"
)

// TestOncallNamesPeople: /oncall names the people on call by the names
// the namer gave in the background (Run), never asking while a page
// renders; a member it cannot name shows as the rules file names them.
func TestOncallNamesPeople(t *testing.T) {
	w := newWorld(t, testkit.OncallRules("U0CAROL01"))
	var asked atomic.Int32
	names := map[string]string{"U0CAROL01": "Carol Danvers"}
	h, err := New(w.sched, w.st, WithLoopback(true), WithPersonNames(func(_ context.Context, member string) string {
		asked.Add(1)
		return names[member]
	}))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)

	_, body := get(t, mux, "/oncall")
	if asked.Load() != 0 {
		t.Fatalf("rendering /oncall asked the namer %d times, want none", asked.Load())
	}
	if strings.Contains(body, "Carol Danvers") || !strings.Contains(body, "U0CAROL01") {
		t.Fatalf("/oncall before any names: want the ids:\n%s", body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for range 200 {
		if _, body = get(t, mux, "/oncall"); strings.Contains(body, "Carol Danvers") {
			break
		}
		waitABit()
	}
	if !strings.Contains(body, "<td>Carol Danvers (U0CAROL01)") {
		t.Errorf("/oncall does not name Carol:\n%s", body)
	}
	if !strings.Contains(body, "<td>bob@example.com</td>") {
		t.Errorf("/oncall does not show bob, whom the namer cannot name, as the file names him:\n%s", body)
	}
}

func waitABit() { time.Sleep(10 * time.Millisecond) }

package bot

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/deskbot/deskbot/sdclient"
)

// panickyAgents is a desk whose agent lookup waits for release and then
// panics.
type panickyAgents struct {
	*fakedesk.Desk
	release chan struct{}
}

func (d *panickyAgents) AgentByEmail(context.Context, string) (*sdclient.Agent, error) {
	<-d.release
	panic("agent lookup exploded")
}

// TestRouterSharedLookupPanics: two commands of the same agent share one
// agent lookup, which panics. Both are told that something went wrong;
// the one that waited for the other's lookup used to be told that it is
// not an agent of the desk.
func TestRouterSharedLookupPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &panickyAgents{Desk: fakedesk.New(), release: make(chan struct{})}
		r, err := NewRouter(d, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]Reply, 2)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = handle(r, "UALICE", "/ticket", "show 42") })
			synctest.Wait() // the first leads the lookup, the second waits for it
		}
		close(d.release)
		wg.Wait()
		wants := []string{
			"something went wrong running /ticket show; it has been logged", // the leader: its panic
			"could not see ticket 42: something went wrong (logged)",        // the waiter: the shared panic
		}
		for i, resp := range got {
			if !resp.Failed || resp.Text != wants[i] {
				t.Errorf("command %d answered %q (failed %v), want %q", i, resp.Text, resp.Failed, wants[i])
			}
		}
	})
}

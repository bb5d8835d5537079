package slackfake_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// waitTimeout is generous: the machine is small and shared.
const waitTimeout = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newFake starts a fake and closes it when the test ends.
func newFake(t *testing.T, opts ...slackfake.Option) *slackfake.Server {
	t.Helper()
	srv := slackfake.New(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// webClient is a real slack-go client pointed at the fake.
func webClient(srv *slackfake.Server, token string) *slack.Client {
	return slack.New(token, slack.OptionAppLevelToken(srv.AppToken()), slack.OptionAPIURL(srv.APIURL()))
}

// client is a running socket-mode client whose events are collected.
type client struct {
	sm   *socketmode.Client
	done chan error

	mu     sync.Mutex
	events []socketmode.Event
	more   chan struct{}
}

// aliceClient is a fake that knows alice, a socket-mode client connected
// to it, and the test's context: the set-up most tests start from.
func aliceClient(t *testing.T) (*slackfake.Server, *client, context.Context) {
	t.Helper()
	srv := newFake(t, slackfake.WithUsers(alice))
	c := startClient(t, srv, srv.AppToken())
	return srv, c, testCtx(t)
}

// startClient runs a real socketmode client against the fake until the
// test ends.
func startClient(t *testing.T, srv *slackfake.Server, appToken string, opts ...socketmode.Option) *client {
	t.Helper()
	api := slack.New(srv.BotToken(), slack.OptionAppLevelToken(appToken), slack.OptionAPIURL(srv.APIURL()))
	c := &client{sm: socketmode.New(api, opts...), done: make(chan error, 1), more: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.done <- c.sm.RunContext(ctx) }()
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-c.sm.Events:
				c.mu.Lock()
				c.events = append(c.events, evt)
				close(c.more)
				c.more = make(chan struct{})
				c.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(waitTimeout):
			t.Error("socketmode client did not stop")
		}
		wg.Wait()
	})
	return c
}

// waitEvent returns the first collected event (from index from on) that
// matches pred, and its index.
func (c *client) waitEvent(t *testing.T, from int, pred func(socketmode.Event) bool) (socketmode.Event, int) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if pred(c.events[i]) {
				evt := c.events[i]
				c.mu.Unlock()
				return evt, i
			}
		}
		more := c.more
		c.mu.Unlock()
		select {
		case <-more:
		case err := <-c.done:
			t.Fatalf("socketmode client stopped while waiting for an event: %v", err)
		case <-deadline:
			t.Fatalf("no matching socketmode event within %v", waitTimeout)
		}
	}
}

// changed is closed when the client collects its next event.
func (c *client) changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.more
}

// count returns how many collected events match pred.
func (c *client) count(pred func(socketmode.Event) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.events {
		if pred(e) {
			n++
		}
	}
	return n
}

func isType(typ socketmode.EventType) func(socketmode.Event) bool {
	return func(e socketmode.Event) bool { return e.Type == typ }
}

func isEnvelope(id string) func(socketmode.Event) bool {
	return func(e socketmode.Event) bool { return e.Request != nil && e.Request.EnvelopeID == id }
}

// slackErr extracts the Slack error code of err.
func slackErr(err error) string {
	if e, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return e.Err
	}
	return ""
}

// assertNoFakeGoroutines fails if a goroutine of the fake is still alive
// (polling, since exiting goroutines take a moment to disappear).
func assertNoFakeGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "bot/slackfake.") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the fake survive Close:\n%s", stacks)
		}
		time.Sleep(10 * time.Millisecond) // goroutines end without telling anyone: poll the stacks
	}
}

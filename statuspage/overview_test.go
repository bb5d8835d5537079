package statuspage

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// TestOverviewPeopleShare: requests of the real client's interactive twin
// (people's commands) are counted as people's by the request metric, and
// the overview's chart and totals mark their share.
func TestOverviewPeopleShare(t *testing.T) {
	w := newWorld(t, testRules)
	reg := prometheus.NewRegistry()
	client, err := sdclient.New(w.sim.URL, sdsim.DefaultAPIKey, sdclient.WithMetrics(reg), sdclient.WithRatePerMinute(100000))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(w.sched, w.st, WithLoopback(true), WithGatherer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	ctx := t.Context()
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	h.sample(t0)
	for range 3 {
		if _, _, err := client.Agents.Me(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, _, err := client.Interactive().Agents.Me(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h.sample(t0.Add(time.Minute))
	_, body := get(t, mux, "/")
	for _, want := range []string{
		"5 desk requests in the last 1 minutes, 2 of them people&#39;s",
		`<rect class="people"`, "<title>2 people&#39;s</title>",
		"(5 in all, 2 of them people's, in light blue)",
		"<dt>people's (commands, buttons)</dt><dd>2</dd>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
}

// TestOverviewAgentChatLeader: the overview names the API key's agent
// (as the start-up check read it), counts the chat commands answered in
// the last hour with their p99, and names the replica that leads.
func TestOverviewAgentChatLeader(t *testing.T) {
	w := newWorld(t, testRules)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	cmds := NewCommands()
	cmds.Observe(now.Add(-2*time.Hour), time.Minute) // too old to count
	for i := range 200 {
		took := 100 * time.Millisecond
		if i%70 == 0 { // 3 slow ones: the 99th percentile of 200 is the 198th
			took = 3 * time.Second
		}
		cmds.Observe(now.Add(-time.Duration(i)*time.Second), took)
	}
	known := false
	h := w.handler(t, WithClock(func() time.Time { return now }), WithCommands(cmds),
		WithAgent(func() (string, string, bool) { return "Ada Admin", "ada@example.com", known }))

	_, body := get(t, h, "/")
	for _, want := range []string{
		"not known yet: the desk has not answered the start-up check",
		"<dt>leader</dt><dd>none yet: no replica has run the rules on this state</dd>",
		"<dt>commands answered in the last hour</dt><dd>200</dd>", "<dt>their p99</dt><dd>3s</dd>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}

	known = true
	lead, err := w.st.Leadership(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lead.Close(context.Background()) })
	_, body = get(t, h, "/")
	for _, want := range []string{
		"Ada Admin &lt;ada@example.com&gt;",
		fmt.Sprintf("<dt>leader</dt><dd>%s (epoch %d, since ", store.ReplicaName(), lead.Epoch()),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}

	// Without a chat here, the overview says so.
	_, body = get(t, w.handler(t), "/")
	if !strings.Contains(body, "No chat in this process.") {
		t.Error("overview without commands does not say there is no chat")
	}
}

// The p99 is the nearest rank: of 100 commands with one slow, the 99th
// is not the slow one; with two, it is.
func TestCommandsP99(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		slow int
		want time.Duration
	}{{0, 10 * time.Millisecond}, {1, 10 * time.Millisecond}, {2, time.Second}} {
		c := NewCommands()
		for i := range 100 {
			took := 10 * time.Millisecond
			if i < tc.slow {
				took = time.Second
			}
			c.Observe(now, took)
		}
		if n, p99 := c.lastHour(now); n != 100 || p99 != tc.want {
			t.Errorf("%d slow: %d commands, p99 %v; want 100, %v", tc.slow, n, p99, tc.want)
		}
	}
	var none *Commands
	none.Observe(now, time.Second)
	if n, p99 := none.lastHour(now); n != 0 || p99 != 0 {
		t.Errorf("nil window: %d, %v", n, p99)
	}
}

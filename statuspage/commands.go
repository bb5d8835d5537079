package statuspage

import (
	"slices"
	"sync"
	"time"
)

// commandWindow is how far back the overview counts chat commands.
const commandWindow = time.Hour

// maxCommands bounds the commands kept: far more than a desk's people
// send in an hour; beyond it the oldest go first.
const maxCommands = 100_000

// Commands keeps the chat commands answered in the last hour, with how
// long each took, for the overview's count and p99. The chat transport's
// router reports each answer (Observe); a nil *Commands keeps nothing. It
// is safe for concurrent use.
type Commands struct {
	mu   sync.Mutex
	done []answered // oldest first
}

type answered struct {
	at   time.Time
	took time.Duration
}

// NewCommands returns an empty window.
func NewCommands() *Commands { return &Commands{} }

// Observe records a command answered at at after took.
func (c *Commands) Observe(at time.Time, took time.Duration) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, answered{at: at, took: took})
	c.pruneLocked(at)
}

func (c *Commands) pruneLocked(now time.Time) {
	i := 0
	for i < len(c.done) && (now.Sub(c.done[i].at) > commandWindow || len(c.done)-i > maxCommands) {
		i++
	}
	if i > 0 {
		c.done = slices.Delete(c.done, 0, i)
	}
}

// lastHour is how many commands were answered in the hour up to now and
// the 99th percentile of how long they took (0 without commands).
func (c *Commands) lastHour(now time.Time) (n int, p99 time.Duration) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	var took []time.Duration
	for _, a := range c.done {
		if d := now.Sub(a.at); d >= 0 && d <= commandWindow {
			took = append(took, a.took)
		}
	}
	c.mu.Unlock()
	if len(took) == 0 {
		return 0, 0
	}
	slices.Sort(took)
	// The nearest-rank percentile: the smallest value that at least 99%
	// of the commands did not exceed.
	rank := (len(took)*99 + 99) / 100
	return len(took), took[rank-1]
}

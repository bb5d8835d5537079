package scheduler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestOneInfoLinePerFiring: every firing leaves one info line "firing"
// with its rule, ticket, episode and outcome (JSON here), fired or pending,
// so that an operator can follow a ticket through the log.
func TestOneInfoLinePerFiring(t *testing.T) {
	e := newEnv(t, urgentRules)
	ok := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "fine", Priority: 4}).ID
	bad := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "5xx", Priority: 4}).ID
	e.noteFault(bad, sdsim.FaultServerError, 2)
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, err := New(logger, firing.ClientDesk(e.client), mustRules(t, urgentRules), e.st, e.notif, WithClock(e.clk), WithSingleton(false),
		WithRegistry(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[float64]map[string]any{}
	for _, l := range buf.lines() {
		if l["msg"] == "firing" {
			if _, dup := got[l["ticket"].(float64)]; dup {
				t.Errorf("two firing lines for ticket %v", l["ticket"])
			}
			got[l["ticket"].(float64)] = l
		}
	}
	for id, want := range map[int64]string{ok: "fired", bad: "pending"} {
		l := got[float64(id)]
		if l == nil || l["level"] != "INFO" || l["rule"] != "page-urgent" || l["episode"] != float64(1) || l["outcome"] != want {
			t.Errorf("ticket %d: firing line %v, want INFO rule page-urgent episode 1 outcome %s", id, l, want)
		}
	}
}

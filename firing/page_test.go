package firing

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/deskbot/deskbot/oncall"
)

// fakeEscalator answers ticks with stats and err; a tick waits on block
// when it is set.
type fakeEscalator struct {
	mu    sync.Mutex
	ticks []time.Time
	stats oncall.TickStats
	err   error
	block chan struct{}
	in    chan struct{}
}

func (e *fakeEscalator) Start(context.Context, oncall.PageSpec, time.Time) (oncall.Page, bool, error) {
	return oncall.Page{}, true, nil
}

func (e *fakeEscalator) Tick(ctx context.Context, now time.Time) (oncall.TickStats, error) {
	if e.block != nil {
		e.in <- struct{}{}
		<-e.block
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ticks = append(e.ticks, now)
	return e.stats, e.err
}

func (e *fakeEscalator) SetConfig(*oncall.Config) {}

// A tick takes the steps due at the clock's now, is counted, logged when
// it did something (a warning when it failed), and never runs twice at
// once: a tick asked for while one runs does nothing.
func TestPagingTick(t *testing.T) {
	for _, c := range []struct {
		name  string
		stats oncall.TickStats
		err   error
		want  string // in the log; "" for no line
	}{
		{"nothing due", oncall.TickStats{}, nil, ""},
		{"paged", oncall.TickStats{Due: 2, Paged: 2}, nil, "level=INFO msg=\"on-call tick\" due=2 paged=2"},
		{"failed", oncall.TickStats{Due: 1, Failed: 1}, errors.New("chat down"), "level=WARN msg=\"on-call tick had errors; due steps are retried\" error=\"chat down\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			esc := &fakeEscalator{stats: c.stats, err: c.err}
			ticks := prometheus.NewCounter(prometheus.CounterOpts{Name: "ticks"})
			p := &Paging{Escalator: esc, Now: func() time.Time { return t0 }, Timeout: time.Second, Ticks: ticks,
				Log: slog.New(slog.NewTextHandler(&logs, nil))}
			st, err := p.TickNow(t.Context())
			if st != c.stats || !errors.Is(err, c.err) {
				t.Errorf("TickNow = %+v, %v; want %+v, %v", st, err, c.stats, c.err)
			}
			if len(esc.ticks) != 1 || !esc.ticks[0].Equal(t0) || counted(t, ticks) != 1 {
				t.Errorf("ticks at %v, counted %v; want one at %v", esc.ticks, counted(t, ticks), t0)
			}
			if got := logs.String(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("log %q, want %q", got, c.want)
			}
		})
	}
	esc := &fakeEscalator{block: make(chan struct{}), in: make(chan struct{})}
	p := &Paging{Escalator: esc, Now: func() time.Time { return t0 }, Timeout: time.Second,
		Ticks: prometheus.NewCounter(prometheus.CounterOpts{Name: "ticks"}), Log: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Tick(context.Background()) }()
	<-esc.in
	if _, err := p.TickNow(t.Context()); err != nil {
		t.Errorf("a second tick while one runs: %v", err)
	}
	close(esc.block)
	<-done
	if len(esc.ticks) != 1 {
		t.Errorf("%d ticks, want 1: the second must not run while the first does", len(esc.ticks))
	}
}

// counted is a counter's value.
func counted(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

package history

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

func TestMemoryScanOrdersAndBounds(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var m Memory
	ctx := context.Background()
	if start, err := m.Start(ctx); err != nil || !start.IsZero() {
		t.Fatalf("empty Start = %v, %v; want zero", start, err)
	}
	for _, r := range []struct {
		min int
		id  int64
	}{{2, 7}, {0, 3}, {1, 9}, {1, 2}, {3, 1}} {
		m.Add(Record{At: t0.Add(time.Duration(r.min) * time.Minute), Ticket: &sdclient.Ticket{ID: r.id}})
	}
	if start, _ := m.Start(ctx); !start.Equal(t0) {
		t.Errorf("Start = %v, want %v", start, t0)
	}
	tests := []struct {
		name     string
		from, to time.Duration
		want     []int64
	}{
		{"all", 0, time.Hour, []int64{3, 2, 9, 7, 1}},
		{"from inclusive, to exclusive", time.Minute, 3 * time.Minute, []int64{2, 9, 7}},
		{"empty range", 2 * time.Minute, 2 * time.Minute, nil},
		{"reversed range", 3 * time.Minute, time.Minute, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			err := m.Scan(ctx, t0.Add(tt.from), t0.Add(tt.to), func(r Record) error {
				got = append(got, r.Ticket.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	stop := errors.New("stop")
	n := 0
	err := m.Scan(ctx, t0, t0.Add(time.Hour), func(Record) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Scan with fn error: err %v after %d calls, want stop after 1", err, n)
	}
}

package benchstat

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ds, 0, 1},
		{ds, 0.5, 5},
		{ds, 0.99, 9},
		{ds, 1, 10},
		{[]time.Duration{7}, 0.99, 7},
	} {
		if got := Percentile(tc.ds, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.ds, tc.p, got, tc.want)
		}
	}
	if ds[0] != 5 {
		t.Errorf("Percentile sorted its input: %v", ds)
	}
}

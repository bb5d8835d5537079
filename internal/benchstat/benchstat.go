package benchstat

import (
	"slices"
	"time"
)

// Percentile is the p-th percentile (0 to 1) of ds, nearest rank below:
// 0 is the least, 1 the greatest; 0 when ds is empty. ds is not changed.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

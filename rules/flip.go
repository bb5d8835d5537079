package rules

// When a comparison with now() flips: the arithmetic of thresholds, saturating
// where a missing due date makes distances huge (see verdict.go).

import (
	"math"
	"time"
)

// firstTrue returns the least duration at which q, false and then true
// as durations grow, is true; found is false when q never is.
func firstTrue(q func(time.Duration) bool) (time.Duration, bool) {
	lo, hi := time.Duration(math.MinInt64), time.Duration(math.MaxInt64)
	if !q(hi) {
		return 0, false
	}
	if q(lo) {
		return lo, true
	}
	for uint64(hi)-uint64(lo) > 1 { // q(lo) false, q(hi) true
		mid := time.Duration(uint64(lo) + (uint64(hi)-uint64(lo))/2)
		if q(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// compareFloat is expr's comparison of a float64 with a number.
func compareFloat(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	}
	return a != b
}

// flipAfter says when `D op 0` changes for D(t) = d + slope·(t − now),
// slope ±1: flips false when never, else the distance from now (≥ 1ns) to
// the first instant with the other answer. A d that saturated is nearer
// zero than the truth, so the distance only comes out earlier; a side
// whose own arithmetic saturated moves no faster than slope (clamping is
// monotone), so the real flip comes no earlier than this one.
func flipAfter(d time.Duration, slope int, op string) (dist time.Duration, flips bool) {
	switch op {
	case ">": // D > 0 is -D < 0
		return flipAfter(negSat(d), -slope, "<")
	case ">=":
		return flipAfter(negSat(d), -slope, "<=")
	case "<": // holds while D < 0
		if slope > 0 && d < 0 {
			return negSat(d), true // D reaches 0
		}
		if slope < 0 && d >= 0 {
			return incSat(d), true // D goes below 0
		}
	case "<=":
		if slope > 0 && d <= 0 {
			return incSat(negSat(d)), true // D goes above 0
		}
		if slope < 0 && d > 0 {
			return d, true // D reaches 0
		}
	case "==", "!=":
		if d == 0 {
			return 1, true // equal for one instant only
		}
		if (d < 0) == (slope > 0) {
			return absSat(d), true // D reaches 0
		}
	}
	return 0, false
}

func subSat(a, b time.Duration) time.Duration {
	c := a - b
	if (b > 0 && c > a) || (b < 0 && c < a) {
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return c
}

// incSat is d + 1ns, saturated.
func incSat(d time.Duration) time.Duration {
	if d == math.MaxInt64 {
		return d
	}
	return d + 1
}

func negSat(d time.Duration) time.Duration { return subSat(0, d) }

func absSat(d time.Duration) time.Duration {
	if d < 0 {
		return negSat(d)
	}
	return d
}

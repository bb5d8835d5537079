//go:build !race

package scheduler

// raceEnabled: see race_on_test.go.
const raceEnabled = false

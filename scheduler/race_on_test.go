//go:build race

package scheduler

// raceEnabled: the race detector slows the embedded SQLite ~13 times, so
// the longest randomised tests run smaller under it.
const raceEnabled = true

package scheduler

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a background full
// sync, a kicked cycle, a gocron worker, a store connection) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

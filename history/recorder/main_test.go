package recorder_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a background full
// sync, a store connection) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

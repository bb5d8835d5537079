package follow

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a scheduler's, a
// store connection) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

package plan

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them (the
// package starts none; the check keeps it so).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

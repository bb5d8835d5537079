package prom

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

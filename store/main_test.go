package store_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a pool connection's
// reader, a lease renewer) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (an ops server, an
// embedded desk, a chat transport, a scheduler) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

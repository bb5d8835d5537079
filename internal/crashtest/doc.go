// Package crashtest runs a test of the running test binary again in a
// child process that kills itself (SIGKILL) at a point the test chose, so
// that the parent can check what the crash left behind.
//
//	crashtest.KilledChild(t, "TestCrashChild", "X_AT=after-note") // fails t unless the child died of SIGKILL
//
// It is imported by tests only (store, scheduler) and imports nothing of
// deskbot's own.
package crashtest

package crashtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// KilledChild runs the test named test of this test binary in a child
// process, with env ("NAME=value") added to its environment, and fails t
// unless the child died of SIGKILL.
func KilledChild(t testing.TB, test string, env ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v\n%s", err, out)
	}
}

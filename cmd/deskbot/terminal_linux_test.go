package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// Ctrl-D at a terminal stops deskbot (rules or not), while the end of a
// stdin that is not a terminal (/dev/null in a container, a pipe) leaves
// the rules running: isTerminal tells them apart.
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tty := openPTY(t)
	for _, c := range []struct {
		name string
		in   any
		want bool
	}{
		{"/dev/null", null, false},
		{"a pipe", r, false},
		{"a string", strings.NewReader("/ticket help\n"), false},
		{"a terminal", tty, true},
	} {
		in, _ := c.in.(interface{ Read([]byte) (int, error) })
		if got := isTerminal(in); got != c.want {
			t.Errorf("isTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// openPTY opens the terminal end of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock, n int32
	if err := ioctl(ptmx, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	if err := ioctl(ptmx, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

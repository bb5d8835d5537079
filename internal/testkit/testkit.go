package testkit

import (
	"log/slog"
	"net"
	"os"
	"testing"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// Logger is the logger of a component under test: debug and above to
// stderr when the tests run with -v, so a failing cycle can be read, and
// nothing otherwise.
func Logger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// Rules loads a rules file from yaml, named test.yaml in its errors, or
// fails t.
func Rules(t testing.TB, yaml string) *rules.Set {
	t.Helper()
	set, err := rules.Load("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("load rules: %v", err)
	}
	return set
}

// Store opens the state store at dsn, or fails t; it is closed when the
// test ends.
func Store(t testing.TB, dsn string, opts ...store.Option) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// NonLoopbackIPv4 is an IPv4 address of this machine that is not
// loopback, or "" when it has none (or its interfaces cannot be read):
// the tests that ask from off loopback stop short then.
func NonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

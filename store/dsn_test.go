package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEngineOf(t *testing.T) {
	for _, tc := range []struct {
		dsn    string
		engine Engine
		rest   string
		err    string
	}{
		{"deskbot.db", SQLite, "deskbot.db", ""},
		{"/var/lib/deskbot/state.db", SQLite, "/var/lib/deskbot/state.db", ""},
		{"sqlite:state.db", SQLite, "state.db", ""},
		{"sqlite:///var/lib/state.db", SQLite, "/var/lib/state.db", ""},
		{"SQLITE:x.db", SQLite, "x.db", ""},
		{"file:x.db?mode=rwc", SQLite, "file:x.db?mode=rwc", ""},
		{"postgres://u@h/db", Postgres, "postgres://u@h/db", ""},
		{"postgresql://u@h/db", Postgres, "postgresql://u@h/db", ""},
		{"  ", "", "", "empty DSN"},
		{"mysql://u@h/db", "", "", `unsupported scheme "mysql"`},
		{"sqlite:", "", "", "no file"},
	} {
		e, rest, err := engineOf(tc.dsn)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("engineOf(%q) error = %v; want %q", tc.dsn, err, tc.err)
			}
			continue
		}
		if err != nil || e != tc.engine || rest != tc.rest {
			t.Errorf("engineOf(%q) = %q, %q, %v; want %q, %q", tc.dsn, e, rest, err, tc.engine, tc.rest)
		}
	}
}

// StateFile names the SQLite file of every DSN form that has one, and
// Redacted shows each DSN without its password.
func TestStateFileAndRedacted(t *testing.T) {
	for _, c := range [][3]string{ // DSN, StateFile, Redacted ("": the DSN)
		{"sqlite:///var/lib/x.db", "/var/lib/x.db", ""},
		{"SQLITE:x.db", "x.db", ""},
		{"file:x.db?mode=rwc", "x.db", ""},
		{"/d/x #1.db", "/d/x #1.db", ""},
		{"x.db?_pragma=busy_timeout(100)", "x.db", ""},
		{":memory:", "", ""}, {"file::memory:?cache=shared", "", ""}, {"mysql://u@h/db", "", ""},
		{"postgres://u:hunter2@h/db", "", "postgres://u:xxxxx@h/db"},
		{"postgresql://h/db?password=hunter2", "", "postgresql://h/db?password=xxxxx"},
	} {
		if got := StateFile(c[0]); got != c[1] {
			t.Errorf("StateFile(%q) = %q, want %q", c[0], got, c[1])
		}
		want := c[2]
		if want == "" {
			want = c[0]
		}
		if got := Redacted(c[0]); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", c[0], got, want)
		}
	}
}

func TestSQLiteDSN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/d/state.db", "file:/d/state.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_time_format=sqlite&_txlock=immediate"},
		{"/d/a b#c%.db", "file:/d/a b%23c%25.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_time_format=sqlite&_txlock=immediate"},
		{"file:/d/s.db?_pragma=synchronous(NORMAL)&_pragma=busy_timeout%3d1000&_txlock=IMMEDIATE", "file:/d/s.db?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_time_format=sqlite&_txlock=immediate&_pragma=synchronous%28NORMAL%29&_pragma=busy_timeout%3D1000"},
		{":memory:", "file::memory:?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_time_format=sqlite&_txlock=immediate"},
	} {
		got, err := sqliteDSN(tc.in, 10*time.Second)
		if err != nil || got != tc.want {
			t.Errorf("sqliteDSN(%q) =\n%q, %v\nwant\n%q", tc.in, got, err, tc.want)
		}
	}
}

// Errors of every kind of PostgreSQL failure name the engine and never show
// the password.
func TestPostgresErrorsHidePassword(t *testing.T) {
	const pw = "S3cr3t-pw!x"
	esc := url.QueryEscape(pw)
	type tc struct{ dsn, secret string }
	cases := []tc{
		{"postgres://deskbot:" + esc + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", pw}, // refused
		{"postgres://deskbot:" + esc + "@127.0.0.1:notaport/db", pw},                            // unparsable
		{"postgresql://127.0.0.1:1/db?sslmode=disable&connect_timeout=5&password=" + esc, pw},   // password in the query
		{"postgres://deskbot:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", pw},  // unescaped
		{"postgres://deskbot:" + esc + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=x", pw}, // bad option
		// A password that is also an ordinary word is masked in what the
		// driver says, and the engine's name still leads the message.
		{"postgres://postgres:postgres@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", ":postgres@"},
	}
	if live := os.Getenv("DESKBOT_TEST_POSTGRES"); live != "" {
		u, err := url.Parse(live)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), pw) // wrong password
		cases = append(cases, tc{u.String(), pw})
	}
	for _, c := range cases {
		s, err := Open(context.Background(), c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open with %s succeeded", strings.ReplaceAll(c.dsn, c.secret, "PW"))
			continue
		}
		t.Logf("%v", err)
		secrets := []string{c.secret, url.QueryEscape(c.secret), url.PathEscape(c.secret)}
		for _, shown := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			for _, sec := range secrets {
				if strings.Contains(shown, sec) {
					t.Errorf("error shows the password: %s", shown)
				}
			}
		}
		if !strings.HasPrefix(err.Error(), "postgres: open postgres") {
			t.Errorf("error does not name the engine and operation: %v", err)
		}
		for e := error(err); e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), c.secret) {
				t.Errorf("an unwrapped error shows the password: %v", e)
			}
		}
	}
}

func TestWrapScrubsAndKeepsIs(t *testing.T) {
	s := &Store{engine: Postgres}
	s.display, s.secrets = redactURL("postgres://u:hunter2@h/db")
	if s.display != "postgres://u:xxxxx@h/db" {
		t.Errorf("display = %q", s.display)
	}
	err := s.wrap("op", fmt.Errorf("dial h with hunter2: %w", context.DeadlineExceeded))
	if err.Error() != "postgres: op: dial h with xxxxx: context deadline exceeded" {
		t.Errorf("wrap = %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("scrubbed error lost errors.Is")
	}
	if errors.Unwrap(err) != nil {
		t.Error("scrubbed error unwraps to the unredacted one")
	}
}

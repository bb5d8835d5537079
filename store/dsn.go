package store

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// This file is the one place that reads a DSN (DESKBOT_STATE): which engine,
// which SQLite file, which secrets must never be shown.

// engineOf picks the engine from a DSN and returns, for SQLite, the part
// after any "sqlite:" prefix.
func engineOf(dsn string) (Engine, string, error) {
	d := strings.TrimSpace(dsn)
	lower := strings.ToLower(d)
	switch {
	case d == "":
		return "", "", errors.New("open state store: empty DSN; want a file path, sqlite:PATH, file:PATH or postgres://URL")
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return Postgres, d, nil
	case strings.HasPrefix(lower, "sqlite:"):
		rest := strings.TrimPrefix(d[len("sqlite:"):], "//")
		if rest == "" {
			return "", "", errors.New("open sqlite state store: no file after \"sqlite:\"; want e.g. sqlite:/var/lib/deskbot/state.db")
		}
		return SQLite, rest, nil
	case strings.HasPrefix(lower, "file:"):
		return SQLite, d, nil
	}
	if i := strings.Index(d, "://"); i > 0 && !strings.ContainsAny(d[:i], `/\`) {
		return "", "", fmt.Errorf("open state store: unsupported scheme %q; want a file path, sqlite:PATH, file:PATH or postgres://URL", d[:i])
	}
	return SQLite, d, nil
}

// sqliteDefaults are applied unless the DSN sets the same pragma itself.
var sqliteDefaults = []struct{ name, value string }{
	{"journal_mode", "WAL"},
	{"synchronous", "FULL"}, // a claim acknowledged is on disk, even after a power cut
	{"foreign_keys", "1"},
}

// sqliteDSN turns a path or file: URI into the DSN modernc.org/sqlite wants,
// with the settings the ledger's guarantees depend on.
func sqliteDSN(rest string, busy time.Duration) (string, error) {
	var base, query string
	if strings.HasPrefix(strings.ToLower(rest), "file:") {
		base, query, _ = strings.Cut(rest, "?")
		base = "file:" + base[len("file:"):]
	} else {
		path, q, _ := strings.Cut(rest, "?")
		query = q
		if path == ":memory:" {
			base = "file::memory:"
		} else {
			// In a URI these characters would end or escape the path.
			base = "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		}
	}
	if base == "file:" {
		return "", errors.New("no database file in DSN")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("parse DSN parameters %q: %w", query, err)
	}
	for key, want := range map[string]string{"_txlock": "immediate", "_time_format": "sqlite"} {
		if v := q.Get(key); v != "" && !strings.EqualFold(v, want) {
			return "", fmt.Errorf("DSN sets %s=%s; deskbot needs %s=%s", key, v, key, want)
		}
		q.Del(key)
	}
	set := map[string]bool{}
	for _, p := range q["_pragma"] {
		name := strings.ToLower(strings.TrimSpace(p))
		if i := strings.IndexAny(name, "(= "); i >= 0 {
			name = name[:i]
		}
		set[name] = true
	}
	var parts []string
	if !set["busy_timeout"] && q.Get("_busy_timeout") == "" && q.Get("_timeout") == "" {
		parts = append(parts, fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds()))
	}
	for _, d := range sqliteDefaults {
		if !set[d.name] {
			parts = append(parts, "_pragma="+d.name+"("+d.value+")")
		}
	}
	parts = append(parts, "_time_format=sqlite", "_txlock=immediate")
	if extra := q.Encode(); extra != "" {
		parts = append(parts, extra)
	}
	return base + "?" + strings.Join(parts, "&"), nil
}

// StateFile returns the SQLite database file that dsn names, or "" when
// dsn names PostgreSQL, an in-memory database, or nothing Open accepts.
func StateFile(dsn string) string {
	engine, rest, err := engineOf(dsn)
	if err != nil || engine != SQLite {
		return ""
	}
	return sqliteFile(rest)
}

// sqliteFile is the file of a SQLite DSN after engineOf ("" in memory).
func sqliteFile(rest string) string {
	p := rest
	if strings.HasPrefix(strings.ToLower(p), "file:") {
		p = p[len("file:"):]
	}
	p, _, _ = strings.Cut(p, "?")
	if p == "" || p == ":memory:" {
		return ""
	}
	return p
}

// CheckStateFile says plainly what is wrong with the SQLite file dsn names
// before SQLite's own "unable to open database file" would: a directory, a
// missing or unwritable directory (SQLite writes a journal and the
// Leadership a lock file next to the database). It also refuses a DSN
// that Open would refuse for its form (an unsupported scheme, bad SQLite
// parameters), so that start-up can say so before it logs anything. It is
// nil for PostgreSQL and an in-memory database.
func CheckStateFile(dsn string) error {
	engine, rest, err := engineOf(dsn)
	if err != nil {
		return err
	}
	if engine != SQLite {
		return nil
	}
	if _, err := sqliteDSN(rest, 0); err != nil {
		return fmt.Errorf("open sqlite state store: %w", err)
	}
	path := sqliteFile(rest)
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; want a database file such as %s", path, filepath.Join(path, "deskbot.db"))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s of %s does not exist", dir, path)
	case err != nil:
		return fmt.Errorf("check the directory of %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory, so %s cannot be created", dir, path)
	case syscall.Access(dir, 2 /* W_OK */) != nil:
		return fmt.Errorf("the directory %s is not writable by this user; SQLite keeps its journal next to %s", dir, path)
	}
	return nil
}

// Redacted is dsn as logs and output may show it: a PostgreSQL DSN with
// its password masked (in the user info or the query), any other DSN as it
// is.
func Redacted(dsn string) string {
	if engine, _, err := engineOf(dsn); err != nil || engine != Postgres {
		return dsn
	}
	shown, _ := redactURL(strings.TrimSpace(dsn))
	return shown
}

// redactURL returns dsn with its password masked, and the forms in which the
// password could show up in an error message.
func redactURL(dsn string) (string, []string) {
	var secrets []string
	add := func(v string) {
		if v == "" {
			return
		}
		secrets = append(secrets, v, url.QueryEscape(v), url.PathEscape(v))
	}
	// The raw userinfo password, even if the URL does not parse.
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			rest = rest[:j]
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				add(pw)
				if dec, err := url.PathUnescape(pw); err == nil {
					add(dec)
				}
			}
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		shown := dsn
		for _, sec := range secrets {
			shown = strings.ReplaceAll(shown, sec, "xxxxx")
		}
		return shown, secrets
	}
	if pw, ok := u.User.Password(); ok {
		add(pw)
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if pw := q.Get("password"); pw != "" {
		add(pw)
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String(), secrets
}

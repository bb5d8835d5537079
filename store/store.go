// Package store keeps deskbot's durable state: the episode ledger that makes
// every automation rule act exactly once per episode across restarts, crashes
// and replicas, the per-workspace ticket mirror and its change-feed cursors,
// the poll cursors, on-call acknowledgements and the Slack envelopes already
// handled.
//
// One Store type runs on two engines chosen by the DSN: SQLite (a file, the
// embedded default for a single replica) and PostgreSQL (shared by several
// replicas). Both go through database/sql with the same SQL text ($N
// placeholders); only the schema files and a few clauses differ.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Engine names the database engine behind a Store.
type Engine string

// The engines a Store runs on.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Store is deskbot's durable state. It is safe for concurrent use, and
// several Stores (in one process or many) may share one database: every
// method is atomic across them.
type Store struct {
	db      *sql.DB
	engine  Engine
	display string   // the DSN with any password replaced, for errors
	secrets []string // strings that must never appear in an error

	now        func() time.Time
	purgeEvery time.Duration
	purgeMu    sync.Mutex
	lastPurge  time.Time

	closeOnce sync.Once
	closeErr  error
}

// Option tunes Open.
type Option func(*config)

type config struct {
	schema      string
	busyTimeout time.Duration
	maxConns    int
	purgeEvery  time.Duration
	now         func() time.Time
}

// WithSchema makes a PostgreSQL store keep its tables in schema name (it sets
// search_path on every connection), so that deskbot can share a database with
// other applications and tests can isolate themselves. The schema must
// exist. SQLite stores reject it.
func WithSchema(name string) Option { return func(c *config) { c.schema = name } }

// WithBusyTimeout sets how long a SQLite store waits for another process's
// write to finish before failing with "database is locked" (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(c *config) { c.busyTimeout = d } }

// WithMaxConns caps the PostgreSQL connection pool (default 10). SQLite
// stores always use a single connection: SQLite has one writer at a time and
// a single connection avoids SQLITE_BUSY inside the process.
func WithMaxConns(n int) Option { return func(c *config) { c.maxConns = n } }

// WithEnvelopePurgeInterval sets how often SeenEnvelope also deletes expired
// envelope ids (default 1m, measured on the times passed to SeenEnvelope).
func WithEnvelopePurgeInterval(d time.Duration) Option {
	return func(c *config) { c.purgeEvery = d }
}

// WithClock sets the clock for the times the store stamps itself (when an
// action was recorded done, when a migration ran); every time that decides
// anything is passed in by the caller. Default time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Open opens the state store named by dsn and brings its schema up to date.
// dsn is what DESKBOT_STATE holds:
//
//   - "postgres://..." or "postgresql://...": PostgreSQL (pgx);
//   - "sqlite:PATH", "sqlite://PATH", "file:PATH" or a plain file path,
//     each optionally followed by ?modernc.org/sqlite parameters: SQLite, with WAL, a busy timeout, synchronous=FULL and
//     immediate transactions; ":memory:" gives a private, non-durable
//     database (tests and dry runs).
//
// Errors name the engine and never show a password from dsn.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg := config{busyTimeout: 10 * time.Second, maxConns: 10, purgeEvery: time.Minute, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	engine, rest, err := engineOf(dsn)
	if err != nil {
		return nil, err
	}
	s := &Store{engine: engine, purgeEvery: cfg.purgeEvery, now: cfg.now}
	switch engine {
	case SQLite:
		err = s.openSQLite(rest, cfg)
	case Postgres:
		err = s.openPostgres(dsn, cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, cfg.busyTimeout); err != nil {
		_ = s.db.Close()
		return nil, s.wrap("open "+s.display, fmt.Errorf("migrate schema: %w", err))
	}
	return s, nil
}

// Engine says which engine the store runs on.
func (s *Store) Engine() Engine { return s.engine }

// Close closes the store's connections. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if err := s.db.Close(); err != nil {
			s.closeErr = s.wrap("close", err)
		}
	})
	return s.closeErr
}

// Ping checks that the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return s.wrap("ping", err)
	}
	return nil
}

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

func (s *Store) openSQLite(rest string, cfg config) error {
	s.display = rest
	if cfg.schema != "" {
		return s.wrap("open "+rest, errors.New("WithSchema applies to PostgreSQL only"))
	}
	dsn, err := sqliteDSN(rest, cfg.busyTimeout)
	if err != nil {
		return s.wrap("open "+rest, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return s.wrap("open "+rest, err)
	}
	// One connection: SQLite has a single writer, and with one connection
	// the process queues on the pool instead of failing with SQLITE_BUSY.
	// It also keeps a ":memory:" database alive for the store's lifetime.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s.db = db
	return nil
}

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// openPostgres uses pgx through database/sql (pgx/v5/stdlib) rather than
// pgxpool: the SQL, the transactions and the scanning code are then shared
// with the SQLite engine line for line, which is what lets one conformance
// suite vouch for both. The store needs no pgx-only feature (no COPY, no
// LISTEN, no session-held advisory locks: migrations use
// pg_advisory_xact_lock, which ends with its transaction).
func (s *Store) openPostgres(dsn string, cfg config) error {
	s.display, s.secrets = redactURL(dsn)
	fail := func(format string, args ...any) error {
		return s.wrap("open "+s.display, fmt.Errorf(format, args...))
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fail("%w", err)
	}
	if cfg.schema != "" {
		if !schemaName.MatchString(cfg.schema) {
			return fail("schema %q: want letters, digits and _, not starting with a digit", cfg.schema)
		}
		pc.RuntimeParams["search_path"] = cfg.schema
	}
	if cfg.maxConns < 1 {
		return fail("max conns %d: want at least 1", cfg.maxConns)
	}
	db := stdlib.OpenDB(*pc)
	db.SetMaxOpenConns(cfg.maxConns)
	db.SetMaxIdleConns(cfg.maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s.db = db
	return nil
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

// wrap names the engine and the operation, and removes any secret of the DSN
// from the text of err (op is ours and never holds one).
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	prefix := string(s.engine) + ": "
	if op != "" {
		prefix += op + ": "
	}
	msg := err.Error()
	scrubbed := msg
	for _, sec := range s.secrets {
		scrubbed = strings.ReplaceAll(scrubbed, sec, "xxxxx")
	}
	if scrubbed == msg {
		return fmt.Errorf("%s%w", prefix, err)
	}
	return &scrubbedError{msg: prefix + scrubbed, cause: err}
}

// scrubbedError carries a message with secrets removed. It answers errors.Is
// for its cause (context.Canceled, sql.ErrNoRows, ...) but does not unwrap,
// so the unredacted text cannot be reached.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string        { return e.msg }
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.cause, target) }

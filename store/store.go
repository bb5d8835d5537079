package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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
	db *sql.DB
	// people is the connection of the writes people's commands wait on
	// (SeenEnvelope, for every Slack envelope): on a SQLite file a second
	// connection, so that a command waits at most for the write under way,
	// never in the pool's queue behind the scheduler's writes; else db.
	people  *sql.DB
	engine  Engine
	display string   // the DSN with any password replaced, for errors
	secrets []string // strings that must never appear in an error

	file     string          // SQLite: the database file ("" in memory)
	pgConfig *pgx.ConnConfig // PostgreSQL: the connection settings (Leadership connects with them)
	lockKey  int64           // PostgreSQL: the scheduler's advisory lock key

	// lead is the scheduler leadership taken on this store, whose epoch
	// fences its claims; nil: none taken (tests, tools), claims unfenced.
	lead atomic.Pointer[Leadership]

	now        func() time.Time
	replica    string // names this process as the leader (WithReplica)
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
	replica     string
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
// stores use a single connection for the scheduler's state (SQLite has one
// writer at a time, and the process queues on the pool instead of failing
// with SQLITE_BUSY), and on a file a second one for the writes people's
// commands wait on (SeenEnvelope).
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
	s := &Store{engine: engine, purgeEvery: cfg.purgeEvery, now: cfg.now, replica: cfg.replica}
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
		_ = s.Close()
		return nil, s.wrap("open "+s.display, fmt.Errorf("migrate schema: %w", err))
	}
	return s, nil
}

// Engine says which engine the store runs on.
func (s *Store) Engine() Engine { return s.engine }

// Close closes the store's connections. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		errs := []error{s.db.Close()}
		if s.people != s.db {
			errs = append(errs, s.people.Close())
		}
		if err := errors.Join(errs...); err != nil {
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

func (s *Store) openSQLite(rest string, cfg config) error {
	s.display, s.file = rest, sqliteFile(rest)
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
	s.db, s.people = db, db
	if s.file == "" {
		return nil // in memory: a second connection would open another database
	}
	side, err := sql.Open("sqlite", dsn)
	if err != nil {
		_ = db.Close()
		return s.wrap("open "+rest, err)
	}
	side.SetMaxOpenConns(1)
	side.SetMaxIdleConns(1)
	side.SetConnMaxLifetime(0)
	side.SetConnMaxIdleTime(0)
	s.people = side
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
	s.pgConfig, s.lockKey = pc, lockKey(pc)
	db := stdlib.OpenDB(*pc)
	db.SetMaxOpenConns(cfg.maxConns)
	db.SetMaxIdleConns(cfg.maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s.db, s.people = db, db
	return nil
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
	if msg, ok := s.mask(err.Error()); ok {
		return &scrubbedError{msg: prefix + msg, cause: err}
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// scrub returns err, or when its text shows a secret of the DSN an error
// with the secrets masked that answers errors.Is for err but does not
// unwrap to it.
func (s *Store) scrub(err error) error {
	if msg, ok := s.mask(err.Error()); ok {
		return &scrubbedError{msg: msg, cause: err}
	}
	return err
}

// mask replaces every secret of the DSN in msg, and says whether there was
// one.
func (s *Store) mask(msg string) (string, bool) {
	masked := msg
	for _, sec := range s.secrets {
		masked = strings.ReplaceAll(masked, sec, "xxxxx")
	}
	return masked, masked != msg
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

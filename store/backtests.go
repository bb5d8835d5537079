package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Backtest is the report of the last `deskbot rules backtest`, kept for
// the status pages (/backtest). The store does not read the report: it
// is the command's JSON.
type Backtest struct {
	File     string    // the rules file replayed
	RanAt    time.Time // when the command ran
	From, To time.Time // the replay's window
	Firings  int
	// Trimmed: the report is kept without its per-firing list, which was
	// too large.
	Trimmed bool
	Report  []byte // the report as JSON (package backtest's Report)
}

// KeepBacktest records b as the last backtest. The latest one wins: a
// report that ran before the one kept changes nothing.
func (s *Store) KeepBacktest(ctx context.Context, b Backtest) error {
	const op = "keep the backtest's report"
	switch {
	case b.File == "" || b.RanAt.IsZero():
		return s.wrap(op, errors.New("no file or no time it ran"))
	case len(b.Report) == 0:
		return s.wrap(op, errors.New("empty report"))
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO last_backtest (id, file, ran_at, from_at, to_at, firings, trimmed, report)
		VALUES (1, $1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET file = excluded.file, ran_at = excluded.ran_at, from_at = excluded.from_at,
			to_at = excluded.to_at, firings = excluded.firings, trimmed = excluded.trimmed, report = excluded.report
		WHERE last_backtest.ran_at <= excluded.ran_at`,
		b.File, dbTime(b.RanAt), dbTime(b.From), dbTime(b.To), b.Firings, b.Trimmed, string(b.Report))
	return s.wrap(op, err)
}

// LastBacktest returns the last backtest kept, and false when there is
// none.
func (s *Store) LastBacktest(ctx context.Context) (Backtest, bool, error) {
	var (
		b      Backtest
		report string
	)
	err := s.db.QueryRowContext(ctx, `SELECT file, ran_at, from_at, to_at, firings, trimmed, report FROM last_backtest WHERE id = 1`).
		Scan(&b.File, &b.RanAt, &b.From, &b.To, &b.Firings, &b.Trimmed, &report)
	if errors.Is(err, sql.ErrNoRows) {
		return Backtest{}, false, nil
	}
	if err != nil {
		return Backtest{}, false, s.wrap("read the last backtest", err)
	}
	b.RanAt, b.From, b.To, b.Report = b.RanAt.UTC(), b.From.UTC(), b.To.UTC(), []byte(report)
	return b, true, nil
}

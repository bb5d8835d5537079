package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RuleRun is when a time rule last ran: the scheduler reads it at start,
// on a reload and when it gains the leadership, so that its schedule
// carries on across restarts and replicas.
type RuleRun struct {
	Rule string
	// Schedule is the rule's schedule when the record was written ("every
	// 5m", "cron 0 9 * * 1-5"): a record of another schedule starts afresh.
	Schedule string
	// Since is when a deskbot first scheduled the rule under Schedule.
	Since time.Time
	// LastRun is when the rule's last run completed; zero: never.
	LastRun time.Time
}

// RuleRuns returns the record of every rule that has one, by rule name.
func (s *Store) RuleRuns(ctx context.Context) (map[string]RuleRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT rule, schedule, since, last_run FROM rule_runs`)
	if err != nil {
		return nil, s.wrap("read rule runs", err)
	}
	defer rows.Close()
	out := map[string]RuleRun{}
	for rows.Next() {
		var (
			r    RuleRun
			last sql.NullTime
		)
		if err := rows.Scan(&r.Rule, &r.Schedule, &r.Since, &last); err != nil {
			return nil, s.wrap("read rule runs", err)
		}
		r.Since = r.Since.UTC()
		if last.Valid {
			r.LastRun = last.Time.UTC()
		}
		out[r.Rule] = r
	}
	return out, s.wrap("read rule runs", rows.Err())
}

// SetRuleRuns records runs, in one transaction. Under the schedule
// already recorded, Since stays the first one and LastRun only moves
// forward (a late write of an older run, from a replica that lost the
// leadership, changes nothing); under another schedule a run replaces the
// record.
func (s *Store) SetRuleRuns(ctx context.Context, runs ...RuleRun) error {
	for _, r := range runs {
		switch {
		case r.Rule == "" || r.Schedule == "":
			return s.wrap(fmt.Sprintf("record the run of rule %q", r.Rule), errors.New("empty rule name or schedule"))
		case r.Since.IsZero():
			return s.wrap(fmt.Sprintf("record the run of rule %q", r.Rule), errors.New("zero since"))
		}
	}
	if len(runs) == 0 {
		return nil
	}
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		for _, r := range runs {
			// Every expression of SET reads the row as it was.
			if _, err := tx.ExecContext(ctx, `INSERT INTO rule_runs (rule, schedule, since, last_run) VALUES ($1, $2, $3, $4)
				ON CONFLICT (rule) DO UPDATE SET
					since = CASE WHEN rule_runs.schedule = excluded.schedule THEN rule_runs.since ELSE excluded.since END,
					last_run = CASE WHEN rule_runs.schedule = excluded.schedule AND rule_runs.last_run IS NOT NULL
							AND (excluded.last_run IS NULL OR rule_runs.last_run > excluded.last_run)
						THEN rule_runs.last_run ELSE excluded.last_run END,
					schedule = excluded.schedule`,
				r.Rule, r.Schedule, dbTime(r.Since), nullTime(r.LastRun)); err != nil {
				return fmt.Errorf("rule %q: %w", r.Rule, err)
			}
		}
		return nil
	})
	return s.wrap("record rule runs", err)
}

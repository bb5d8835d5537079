-- started_at: when a firing was first claimed. claimed_at is renewed by
-- every take-over of a stale claim; started_at is not, so that a resumed
-- firing knows from when its actions may have reached the desk (the
-- crash-recovery check looks for its note only among those written since).
ALTER TABLE ledger_firings ADD COLUMN started_at TIMESTAMP;
UPDATE ledger_firings SET started_at = claimed_at;

-- last_error: why the firing's last attempt failed (the desk's refusal),
-- shown by `rules why` and /ticket why until the firing finishes.
ALTER TABLE ledger_firings ADD COLUMN last_error TEXT;

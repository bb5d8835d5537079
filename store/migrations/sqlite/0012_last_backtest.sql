-- The last report of `deskbot rules backtest`, for the status page's
-- /backtest (issue 25). One row (id 1): the latest report wins. report is
-- the report's JSON (package backtest's Report), without its per-firing
-- list when that is large (trimmed); file, ran_at, from_at, to_at and
-- firings are what the overview's link says without reading it.
CREATE TABLE last_backtest (
    id      INTEGER   PRIMARY KEY CHECK (id = 1),
    file    TEXT      NOT NULL,
    ran_at  TIMESTAMP NOT NULL,
    from_at TIMESTAMP NOT NULL,
    to_at   TIMESTAMP NOT NULL,
    firings INTEGER   NOT NULL,
    trimmed BOOLEAN   NOT NULL,
    report  TEXT      NOT NULL
);

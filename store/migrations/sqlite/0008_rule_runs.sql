-- Rule runs (sqlite): when each time rule last ran, so that a restart or a new
-- leader carries its schedule on (a cron rule never fires because a process
-- is new; an every rule keeps its phase). schedule is the rule's schedule
-- ("every 5m", "cron 0 9 * * 1-5"): a record of another schedule starts
-- afresh. since is when a deskbot first scheduled the rule under it (a
-- cron run missed after that may be caught up); last_run is when its last
-- run completed (NULL: never), and only moves forward.
CREATE TABLE rule_runs (
    rule     TEXT      PRIMARY KEY,
    schedule TEXT      NOT NULL,
    since    TIMESTAMP NOT NULL,
    last_run TIMESTAMP
);

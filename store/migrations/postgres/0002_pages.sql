-- On-call pages (postgres): one row per page (rule, ticket, episode). The page
-- itself (steps, target, acknowledgement, history) is the JSON of
-- oncall.Page in state; the columns beside it are what queries select on.
-- version is bumped by every change: a change applies only to the version
-- it was computed from, which is how each escalation step is claimed once.
CREATE TABLE oncall_pages (
    page_key   TEXT      PRIMARY KEY,
    ticket_id  BIGINT    NOT NULL,
    policy     TEXT      NOT NULL,
    started_at TIMESTAMP NOT NULL,
    next_at    TIMESTAMP NOT NULL,
    done       BOOLEAN   NOT NULL,
    version    BIGINT    NOT NULL,
    state      TEXT      NOT NULL
);
CREATE INDEX oncall_pages_due ON oncall_pages (next_at) WHERE NOT done;
CREATE INDEX oncall_pages_ticket ON oncall_pages (ticket_id);

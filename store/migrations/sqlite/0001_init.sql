-- deskbot state, version 1 (SQLite). Times are UTC TIMESTAMPs written by the
-- driver with _time_format=sqlite, so text order is time order.

-- One row per (rule, ticket): the current episode and its current firing.
-- episode 0 with is_open FALSE means "never fired".
CREATE TABLE ledger_episodes (
    rule          TEXT      NOT NULL,
    ticket_id     INTEGER   NOT NULL,
    episode       INTEGER   NOT NULL,
    is_open       BOOLEAN   NOT NULL,
    firing_id     INTEGER,
    started_at    TIMESTAMP,
    ended_at      TIMESTAMP,
    last_fired_at TIMESTAMP,
    PRIMARY KEY (rule, ticket_id)
);
CREATE INDEX ledger_episodes_open ON ledger_episodes (rule, ticket_id) WHERE is_open;

-- Every firing ever claimed; the episode row points at the current one.
CREATE TABLE ledger_firings (
    id          INTEGER   PRIMARY KEY AUTOINCREMENT,
    rule        TEXT      NOT NULL,
    ticket_id   INTEGER   NOT NULL,
    episode     INTEGER   NOT NULL,
    seq         INTEGER   NOT NULL,
    state       TEXT      NOT NULL CHECK (state IN ('pending', 'done')),
    claimed_at  TIMESTAMP NOT NULL,
    lease_until TIMESTAMP,
    fired_at    TIMESTAMP,
    attempts    INTEGER   NOT NULL DEFAULT 1,
    UNIQUE (rule, ticket_id, episode, seq)
);

-- The actions of a firing that reached their target.
CREATE TABLE ledger_actions (
    firing_id INTEGER   NOT NULL REFERENCES ledger_firings (id) ON DELETE CASCADE,
    action    INTEGER   NOT NULL,
    done_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (firing_id, action)
);

CREATE TABLE poll_cursors (
    name       TEXT      PRIMARY KEY,
    value      TEXT      NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE slack_envelopes (
    id         TEXT      PRIMARY KEY,
    seen_at    TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX slack_envelopes_expiry ON slack_envelopes (expires_at);

CREATE TABLE oncall_acks (
    page_key TEXT      PRIMARY KEY,
    acked_by TEXT      NOT NULL,
    acked_at TIMESTAMP NOT NULL
);

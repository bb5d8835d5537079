-- The ticket mirror (sqlite): per workspace, a copy of the desk's tickets
-- that the change-feed follower keeps up to date, so that rules evaluate on
-- it and a restarted or new leader carries on where the last one stopped.
-- A ticket is the JSON of sdclient.Ticket in data; the columns beside it are
-- what queries select on. Ticket ids are global across workspaces: a ticket
-- lives in one workspace's mirror at a time. INTEGER PRIMARY KEY is SQLite's
-- 64-bit rowid, the BIGINT of the PostgreSQL schema.
CREATE TABLE mirror_tickets (
    id           INTEGER   PRIMARY KEY,
    workspace_id INTEGER   NOT NULL,
    updated_at   TIMESTAMP NOT NULL,
    data         TEXT      NOT NULL
);
CREATE INDEX mirror_tickets_workspace ON mirror_tickets (workspace_id, id);

-- One row per workspace that was ever applied: the change feed's cursors
-- (the desk's clock; NULL: never synced), whether a full sync completed and
-- when (deskbot's clock), and the number of applies so far.
CREATE TABLE mirror_state (
    workspace_id INTEGER   PRIMARY KEY,
    cursor       TIMESTAMP,
    trash_cursor TIMESTAMP,
    complete     BOOLEAN   NOT NULL,
    full_sync_at TIMESTAMP,
    version      INTEGER   NOT NULL
);

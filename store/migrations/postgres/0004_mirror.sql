-- The ticket mirror (postgres): per workspace, a copy of the desk's tickets
-- that the change-feed follower keeps up to date, so that rules evaluate on
-- it and a restarted or new leader carries on where the last one stopped.
-- A ticket is the JSON of sdclient.Ticket in data (TEXT: kept byte for byte
-- as encoded); the columns beside it are what queries select on. Ticket ids
-- are global across workspaces: a ticket lives in one workspace's mirror at
-- a time.
CREATE TABLE mirror_tickets (
    id           BIGINT    PRIMARY KEY,
    workspace_id BIGINT    NOT NULL,
    updated_at   TIMESTAMP NOT NULL,
    data         TEXT      NOT NULL
);
CREATE INDEX mirror_tickets_workspace ON mirror_tickets (workspace_id, id);

-- One row per workspace that was ever applied: the change feed's cursors
-- (the desk's clock; NULL: never synced), whether a full sync completed and
-- when (deskbot's clock), and the number of applies so far.
CREATE TABLE mirror_state (
    workspace_id BIGINT    PRIMARY KEY,
    cursor       TIMESTAMP,
    trash_cursor TIMESTAMP,
    complete     BOOLEAN   NOT NULL,
    full_sync_at TIMESTAMP,
    version      BIGINT    NOT NULL
);

-- Leadership epochs (fencing tokens). epoch grows by one each time a
-- process gains the scheduler leadership of this state (the SQLite file
-- lock, the PostgreSQL advisory lock). Each firing records the epoch of
-- the claim that holds it: a new leader takes over the pending claims of
-- older epochs at once instead of waiting out their leases, and a claim
-- is written only while the store's epoch is still the claimer's.
CREATE TABLE leader_epoch (
    id    INTEGER   PRIMARY KEY CHECK (id = 1),
    epoch INTEGER   NOT NULL,
    since TIMESTAMP
);
INSERT INTO leader_epoch (id, epoch) VALUES (1, 0);
ALTER TABLE ledger_firings ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;

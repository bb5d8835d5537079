-- What the status pages show (issue 24).
--
-- matched_at: when the ticket began to match the rule in the firing's
-- episode, as the scheduler saw it (its first cycle that matched the
-- ticket; the claim itself when it cannot say). /firings measures "took"
-- from it to the firing's last action. Firings recorded before have none:
-- they measure from their claim.
ALTER TABLE ledger_firings ADD COLUMN matched_at TIMESTAMP;

-- holder: the replica that leads in the epoch (its name, by default
-- "host (pid N)"), so that every replica's overview names the leader.
ALTER TABLE leader_epoch ADD COLUMN holder TEXT;

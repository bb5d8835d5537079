-- Tickets made from chat messages (sqlite): one row per message (its channel
-- and ts), so that a second reaction or shortcut on the same message never
-- makes a second ticket, on any replica. A row is a claim until ticket_id
-- is set: the replica whose INSERT made it creates the ticket and records
-- its id; a claim whose lease ran out (its replica crashed before it
-- created the ticket or recorded it) may be taken over with a conditional
-- UPDATE, by exactly one replica. A failed create deletes the claim.
CREATE TABLE message_tickets (
    channel     TEXT      NOT NULL,
    message_ts  TEXT      NOT NULL,
    ticket_id   INTEGER,
    claimed_at  TIMESTAMP NOT NULL,
    lease_until TIMESTAMP NOT NULL,
    PRIMARY KEY (channel, message_ts)
);
CREATE INDEX message_tickets_ticket ON message_tickets (ticket_id);

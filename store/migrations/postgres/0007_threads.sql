-- Live threads (postgres): the Slack thread a ticket is linked to (an alert's
-- message, a ticket made from chat), one per ticket, the first link wins.
-- last_conv_id and last_status are what was already posted to the thread
-- (0: nothing yet; status 0: unknown, taken as the baseline at the first
-- look); a poster advances them with a compare-and-swap before posting, so
-- that of several replicas exactly one posts each change. edits_noted says
-- the thread was told once that edits and deletions are not copied.
CREATE TABLE chat_threads (
    ticket_id    BIGINT    PRIMARY KEY,
    channel      TEXT      NOT NULL,
    thread_ts    TEXT      NOT NULL,
    linked_at    TIMESTAMP NOT NULL,
    last_conv_id BIGINT    NOT NULL DEFAULT 0,
    last_status  INTEGER   NOT NULL DEFAULT 0,
    edits_noted  BOOLEAN   NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX chat_threads_thread ON chat_threads (channel, thread_ts);

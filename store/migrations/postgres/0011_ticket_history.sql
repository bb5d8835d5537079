-- Ticket history (postgres): how each ticket looked from at on, as the
-- change feed saw it, for rules backtest (package history). at is Unix
-- microseconds (deskbot's record of the desk's updated_at, or the full
-- sync's time for the starting state); data is history.Marshal's compact
-- JSON of the rule-relevant fields. gone: the ticket left the desk (deleted,
-- spam); open: its status was an open one (pruning drops old closed ones).
-- The second index finds a ticket's records (pruning, the latest per ticket).
CREATE TABLE ticket_history (
    at        BIGINT  NOT NULL,
    ticket_id BIGINT  NOT NULL,
    gone      BOOLEAN NOT NULL,
    open      BOOLEAN NOT NULL,
    data      BYTEA   NOT NULL,
    PRIMARY KEY (at, ticket_id)
);
CREATE INDEX ticket_history_ticket ON ticket_history (ticket_id, at);

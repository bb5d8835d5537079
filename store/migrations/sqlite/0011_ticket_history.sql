-- Ticket history (sqlite): how each ticket looked from at on, as the change
-- feed saw it, for rules backtest (package history). at is Unix
-- microseconds (deskbot's record of the desk's updated_at, or the full
-- sync's time for the starting state); data is history.Marshal's compact
-- JSON of the rule-relevant fields. gone: the ticket left the desk (deleted,
-- spam); open: its status was an open one (pruning drops old closed ones).
-- WITHOUT ROWID keeps each row once, in the primary key's b-tree; the
-- second index finds a ticket's records (pruning, the latest per ticket).
CREATE TABLE ticket_history (
    at        INTEGER NOT NULL,
    ticket_id INTEGER NOT NULL,
    gone      BOOLEAN NOT NULL,
    open      BOOLEAN NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (at, ticket_id)
) WITHOUT ROWID;
CREATE INDEX ticket_history_ticket ON ticket_history (ticket_id, at);

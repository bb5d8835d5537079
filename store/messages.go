package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ClaimMessage claims the chat message (channel, ts) for making a ticket
// from it, at now for lease. It answers one of three ways:
//
//   - won: this caller makes the ticket, then records it with
//     SetMessageTicket (or gives the claim up with ReleaseMessage);
//   - ticketID > 0: a ticket was made from the message already;
//   - neither: another caller holds a live claim (its ticket is being
//     made).
//
// Of several replicas claiming the same message at once exactly one wins:
// the claim is the INSERT of the message's primary key, and the take-over
// of an expired claim (its holder crashed) a conditional UPDATE.
func (s *Store) ClaimMessage(ctx context.Context, channel, ts string, now time.Time, lease time.Duration) (ticketID int64, won bool, err error) {
	op := fmt.Sprintf("claim message %s/%s", channel, ts)
	switch {
	case channel == "" || ts == "":
		return 0, false, s.wrap(op, errors.New("empty channel or message ts"))
	case lease <= 0:
		return 0, false, s.wrap(op, fmt.Errorf("lease %s is not positive", lease))
	}
	n, err := affected(ctx, s.db, `INSERT INTO message_tickets (channel, message_ts, ticket_id, claimed_at, lease_until)
		VALUES ($1, $2, NULL, $3, $4) ON CONFLICT (channel, message_ts) DO NOTHING`,
		channel, ts, dbTime(now), dbTime(now.Add(lease)))
	if err != nil {
		return 0, false, s.wrap(op, err)
	}
	if n == 1 {
		return 0, true, nil
	}
	n, err = affected(ctx, s.db, `UPDATE message_tickets SET claimed_at = $3, lease_until = $4
		WHERE channel = $1 AND message_ts = $2 AND ticket_id IS NULL AND lease_until <= $3`,
		channel, ts, dbTime(now), dbTime(now.Add(lease)))
	if err != nil {
		return 0, false, s.wrap(op, err)
	}
	if n == 1 {
		return 0, true, nil
	}
	id, _, err := s.MessageTicket(ctx, channel, ts)
	return id, false, err
}

// SetMessageTicket records the ticket made from the message (channel, ts)
// under the caller's claim. It refuses to change a ticket already recorded
// (another ticket for the message would be a duplicate).
func (s *Store) SetMessageTicket(ctx context.Context, channel, ts string, ticketID int64) error {
	op := fmt.Sprintf("record ticket %d of message %s/%s", ticketID, channel, ts)
	if ticketID <= 0 {
		return s.wrap(op, fmt.Errorf("ticket id %d is not positive", ticketID))
	}
	n, err := affected(ctx, s.db, `UPDATE message_tickets SET ticket_id = $3
		WHERE channel = $1 AND message_ts = $2 AND (ticket_id IS NULL OR ticket_id = $3)`, channel, ts, ticketID)
	if err != nil {
		return s.wrap(op, err)
	}
	if n == 0 {
		return s.wrap(op, errors.New("the message is not claimed, or has another ticket"))
	}
	return nil
}

// ReleaseMessage gives up a claim that made no ticket (the desk refused
// it), so that the next reaction or shortcut tries again. A message with a
// ticket recorded keeps it.
func (s *Store) ReleaseMessage(ctx context.Context, channel, ts string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM message_tickets
		WHERE channel = $1 AND message_ts = $2 AND ticket_id IS NULL`, channel, ts)
	return s.wrap(fmt.Sprintf("release message %s/%s", channel, ts), err)
}

// MessageTicket is the ticket made from the message (channel, ts); ok is
// false when none was recorded (a claim in progress included).
func (s *Store) MessageTicket(ctx context.Context, channel, ts string) (ticketID int64, ok bool, err error) {
	var id sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT ticket_id FROM message_tickets
		WHERE channel = $1 AND message_ts = $2`, channel, ts).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, s.wrap(fmt.Sprintf("read ticket of message %s/%s", channel, ts), err)
	}
	return id.Int64, id.Valid, nil
}

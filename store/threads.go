package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ThreadLink is the Slack thread a ticket is linked to ("live threads"):
// the desk's public replies and status changes are posted to it, and
// replies in it become part of the ticket. A ticket has at most one
// linked thread: the first link wins.
type ThreadLink struct {
	TicketID int64
	Channel  string // the channel's id (C…, G…), as Slack's events name it
	ThreadTS string // the ts of the thread's parent message
	LinkedAt time.Time
	// Posted is what was already posted to the thread.
	Posted ThreadMark
	// EditsNoted is true once the thread was told that edits and
	// deletions of its replies are not copied to the desk.
	EditsNoted bool
}

// ThreadMark is how far a thread follows its ticket: the newest desk
// conversation posted to it (0: none yet) and the ticket status it last
// showed (0: unknown; the first look takes the ticket's status as it is).
type ThreadMark struct {
	ConvID int64
	Status int
}

// LinkThread links ticketID to the Slack thread whose parent message is
// threadTS in channel (a channel id). It returns false, changing nothing,
// when the ticket is already linked to a thread (the first link wins) or
// the thread already belongs to another ticket. Callers: the alert
// notifier (an alert's message), a ticket made from chat (/ticket new, a
// ticket from a message).
func (s *Store) LinkThread(ctx context.Context, ticketID int64, channel, threadTS string) (bool, error) {
	op := fmt.Sprintf("link ticket %d to thread %s/%s", ticketID, channel, threadTS)
	switch {
	case ticketID <= 0:
		return false, s.wrap(op, errors.New("ticket id must be positive"))
	case strings.TrimSpace(channel) == "" || strings.TrimSpace(threadTS) == "":
		return false, s.wrap(op, errors.New("channel and thread ts are required"))
	}
	n, err := affected(ctx, s.db, `INSERT INTO chat_threads (ticket_id, channel, thread_ts, linked_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, ticketID, channel, threadTS, dbTime(s.now()))
	if err != nil {
		return false, s.wrap(op, err)
	}
	return n == 1, nil
}

const threadColumns = `ticket_id, channel, thread_ts, linked_at, last_conv_id, last_status, edits_noted`

// ThreadOf returns the thread ticketID is linked to; ok is false if none.
func (s *Store) ThreadOf(ctx context.Context, ticketID int64) (ThreadLink, bool, error) {
	links, err := s.threads(ctx, `SELECT `+threadColumns+` FROM chat_threads WHERE ticket_id = $1`, ticketID)
	if err != nil || len(links) == 0 {
		return ThreadLink{}, false, s.wrap(fmt.Sprintf("read thread of ticket %d", ticketID), err)
	}
	return links[0], true, nil
}

// ThreadTicket returns the link of the thread threadTS in channel; ok is
// false when the thread is linked to no ticket.
func (s *Store) ThreadTicket(ctx context.Context, channel, threadTS string) (ThreadLink, bool, error) {
	links, err := s.threads(ctx, `SELECT `+threadColumns+` FROM chat_threads WHERE channel = $1 AND thread_ts = $2`, channel, threadTS)
	if err != nil || len(links) == 0 {
		return ThreadLink{}, false, s.wrap(fmt.Sprintf("read ticket of thread %s/%s", channel, threadTS), err)
	}
	return links[0], true, nil
}

// threadChunk bounds the ids of one ThreadsOf query.
const threadChunk = 500

// ThreadsOf returns the links of those of ids that are linked to a
// thread, by ticket id: one query per 500 ids, so that following the
// change feed costs the store as little as the desk.
func (s *Store) ThreadsOf(ctx context.Context, ids []int64) (map[int64]ThreadLink, error) {
	out := make(map[int64]ThreadLink)
	for start := 0; start < len(ids); start += threadChunk {
		chunk := ids[start:min(start+threadChunk, len(ids))]
		marks := make([]string, len(chunk))
		args := make([]any, len(chunk))
		for i, id := range chunk {
			marks[i] = fmt.Sprintf("$%d", i+1)
			args[i] = id
		}
		links, err := s.threads(ctx, `SELECT `+threadColumns+` FROM chat_threads WHERE ticket_id IN (`+strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return nil, s.wrap(fmt.Sprintf("read threads of %d tickets", len(ids)), err)
		}
		for _, l := range links {
			out[l.TicketID] = l
		}
	}
	return out, nil
}

// AdvanceThread moves ticketID's thread mark from from to to if it is
// still from: a compare-and-swap, so that of several replicas (or a
// restarted one) that saw the same change exactly one wins and posts it.
// Claim first, post after: a crash in between loses the post rather than
// doubling it.
func (s *Store) AdvanceThread(ctx context.Context, ticketID int64, from, to ThreadMark) (bool, error) {
	n, err := affected(ctx, s.db, `UPDATE chat_threads SET last_conv_id = $4, last_status = $5
		WHERE ticket_id = $1 AND last_conv_id = $2 AND last_status = $3`,
		ticketID, from.ConvID, from.Status, to.ConvID, to.Status)
	if err != nil {
		return false, s.wrap(fmt.Sprintf("advance thread of ticket %d", ticketID), err)
	}
	return n == 1, nil
}

// NoteThreadEdits records that ticketID's thread was told that edits and
// deletions are not copied to the desk; it returns true only the first
// time, so the thread is told once.
func (s *Store) NoteThreadEdits(ctx context.Context, ticketID int64) (bool, error) {
	n, err := affected(ctx, s.db, `UPDATE chat_threads SET edits_noted = TRUE WHERE ticket_id = $1 AND NOT edits_noted`, ticketID)
	if err != nil {
		return false, s.wrap(fmt.Sprintf("note edits in thread of ticket %d", ticketID), err)
	}
	return n == 1, nil
}

func (s *Store) threads(ctx context.Context, query string, args ...any) ([]ThreadLink, error) {
	return queryRows(ctx, s.db, func(rows *sql.Rows) (ThreadLink, error) {
		var l ThreadLink
		var at sql.NullTime
		err := rows.Scan(&l.TicketID, &l.Channel, &l.ThreadTS, &at, &l.Posted.ConvID, &l.Posted.Status, &l.EditsNoted)
		l.LinkedAt = at.Time.UTC()
		return l, err
	}, query, args...)
}

// LinkedTicket returns the id of the ticket linked to the thread threadTS
// in channel; ok is false when there is none.
func (s *Store) LinkedTicket(ctx context.Context, channel, threadTS string) (int64, bool, error) {
	l, ok, err := s.ThreadTicket(ctx, channel, threadTS)
	return l.TicketID, ok, err
}

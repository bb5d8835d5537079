package oncall

import (
	"fmt"
	"time"
)

// PageKey names the escalation of one ticket for one episode of a rule:
// a rule firing again in the same episode finds the page it already started.
func PageKey(rule string, ticketID, episode int64) string {
	return fmt.Sprintf("%s/%d/%d", rule, ticketID, episode)
}

// Target is whom one escalation step pages: a person (e-mail or Slack user
// id) or a Slack user group. Schedule names the schedule a person was taken
// from, if any.
type Target struct {
	Kind     TargetKind `json:"kind"` // TargetPerson or TargetGroup
	ID       string     `json:"id"`
	Schedule string     `json:"schedule,omitempty"`
}

// String renders the target for notes and logs.
func (t Target) String() string {
	if t.Schedule != "" {
		return fmt.Sprintf("%s (on call in %s)", t.ID, t.Schedule)
	}
	return t.ID
}

// EventKind names an entry of a page's history.
type EventKind string

// The events of a page.
const (
	EventPaged     EventKind = "paged"     // a step was claimed and its target is being paged
	EventSent      EventKind = "sent"      // the chat confirmed the page
	EventFailed    EventKind = "failed"    // the chat refused the page; retried, then skipped
	EventEscalate  EventKind = "escalate"  // someone asked to escalate now
	EventAcked     EventKind = "acked"     // acknowledged: the escalation stops
	EventResolved  EventKind = "resolved"  // the ticket was resolved: the escalation stops
	EventExhausted EventKind = "exhausted" // every level and round paged, nobody acknowledged
	EventNoted     EventKind = "noted"     // the acknowledgement note reached the ticket
)

// Position is where an escalation stands: Step is the number of the step
// (from 1), Level the 0-based index of its level and Round the 0-based
// pass through the policy (0 to Policy.Repeat); Target is whom it pages.
// A page holds its current one, and each event of its history the one it
// happened at.
type Position struct {
	Step   int     `json:"step"`
	Level  int     `json:"level"`
	Round  int     `json:"round"`
	Target *Target `json:"target,omitempty"`
}

// untargeted is q without its Target: the position of an event about the
// page itself (acknowledged, resolved, escalated) rather than a message to
// someone.
func (q Position) untargeted() Position {
	q.Target = nil
	return q
}

// Event is one entry of a page's history.
type Event struct {
	At   time.Time `json:"at"`
	Kind EventKind `json:"kind"`
	Position
	By     string `json:"by,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// How a page was acknowledged (Page.AckVia).
const (
	AckViaAck  = "ack"  // the Acknowledge button or /oncall ack
	AckViaTake = "take" // the Take it button: the acknowledger was assigned the ticket
)

// MaxNoteAttempts is how many times a note (acknowledgement or exhaustion)
// is tried, with a doubling delay, before the escalator gives up on it, so
// that a deleted ticket does not cost the desk a request every tick forever.
const MaxNoteAttempts = 8

// MaxAttempts is how many times one step is tried when the chat refuses the
// page before the escalation moves on to the next level, so that one
// unreachable person never stalls it.
const MaxAttempts = 3

// Page is the escalation of one ticket under one policy. It is plain data
// (stored as JSON by the store) and a state machine driven only by the
// times passed to its methods.
//
// Position is the current step's. While Sending, it has been claimed and
// NextAt is the claim's deadline; otherwise NextAt is when the next step is
// due (its level's After after the page went out).
type Page struct {
	Key       string    `json:"key"`
	Policy    string    `json:"policy"`
	Rule      string    `json:"rule,omitempty"`
	TicketID  int64     `json:"ticket_id"`
	Channel   string    `json:"channel,omitempty"` // the on-call channel the alert card goes to
	Text      string    `json:"text,omitempty"`    // what the page says (the alert's text)
	StartedAt time.Time `json:"started_at"`
	// GroupOver is the rule's group_over (0: the escalator's): when a tick
	// pages one person for more pages than this, the person gets one
	// direct message naming them all.
	GroupOver int `json:"group_over,omitempty"`

	Position
	Sending  bool      `json:"sending,omitempty"`
	Attempts int       `json:"attempts,omitempty"` // tries of the current step
	NextAt   time.Time `json:"next_at"`

	AckedBy    string    `json:"acked_by,omitempty"`
	AckedAt    time.Time `json:"acked_at,omitzero"`
	AckVia     string    `json:"ack_via,omitempty"` // AckViaAck or AckViaTake
	AckNoted   bool      `json:"ack_noted,omitempty"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	Exhausted  bool      `json:"exhausted,omitempty"`
	// ExhaustNoted is set once the ticket's private note says that nobody
	// acknowledged (or the escalator gave up writing it).
	ExhaustNoted bool `json:"exhaust_noted,omitempty"`
	// NoteAttempts counts the failed tries of the note now due.
	NoteAttempts int  `json:"note_attempts,omitempty"`
	Done         bool `json:"done,omitempty"`

	// Version counts the page's stored changes; the store swaps a page only
	// when the version it holds is the one the caller read.
	Version int64   `json:"-"`
	History []Event `json:"history,omitempty"`
}

// PageSpec is what starts a page: the rules executor's page action.
type PageSpec struct {
	Rule     string
	TicketID int64
	Episode  int64
	Policy   string
	Channel  string
	Text     string
	// GroupOver is the rule's group_over (see Page.GroupOver).
	GroupOver int
	// Defer leaves the first step to the next Tick instead of taking it in
	// Start: a cycle starting many pages at once (more than group_over)
	// ticks once after them, so that the person paged gets one direct
	// message naming them all.
	Defer bool
}

// NewPage returns the page for spec, started at now, with its first step
// due at once.
func NewPage(spec PageSpec, now time.Time) Page {
	return Page{
		Key:       PageKey(spec.Rule, spec.TicketID, spec.Episode),
		Policy:    spec.Policy,
		Rule:      spec.Rule,
		TicketID:  spec.TicketID,
		Channel:   spec.Channel,
		Text:      spec.Text,
		GroupOver: spec.GroupOver,
		StartedAt: now,
		Position:  Position{Level: -1},
		NextAt:    now,
	}
}

// Acked reports whether someone acknowledged the page.
func (p *Page) Acked() bool { return !p.AckedAt.IsZero() }

// Resolved reports whether the ticket was resolved while paging.
func (p *Page) Resolved() bool { return !p.ResolvedAt.IsZero() }

// Stopped reports whether the escalation is over: acknowledged, resolved or
// exhausted. A stopped page may still have work (the acknowledgement note).
func (p *Page) Stopped() bool { return p.Acked() || p.Resolved() || p.Exhausted }

// Due reports whether the page has work at now: a step to take or retry,
// or a note (acknowledgement, exhaustion) to write.
func (p *Page) Due(now time.Time) bool { return !p.Done && !now.Before(p.NextAt) }

// Step is one escalation step: whom to page, at which level and round.
type Step struct {
	Number  int
	Level   int
	Round   int
	Target  Target
	After   time.Duration // how long the next level waits for an acknowledgement
	Attempt int           // 1 for the first try
	Retry   bool          // the same step again: the last try failed or its claim ran out
}

// Advance takes the page's next step at now under pol and reports it; false
// means the escalation is over (stopped, or exhausted now). A step that was
// claimed but never confirmed (Sending) is tried again with the same target.
// Advance leaves Sending set: the caller confirms with Sent or Failed.
func (p *Page) Advance(pol *Policy, now time.Time) (Step, bool) {
	if p.Stopped() || p.Done || pol == nil || len(pol.Levels) == 0 {
		return Step{}, false
	}
	if p.Sending && p.Target != nil && p.Level >= 0 && p.Level < len(pol.Levels) {
		p.Attempts++
		p.History = append(p.History, Event{At: now, Kind: EventPaged, Position: p.Position, Detail: fmt.Sprintf("attempt %d", p.Attempts)})
		return Step{Number: p.Step, Level: p.Level, Round: p.Round, Target: *p.Target, After: pol.Levels[p.Level].After, Attempt: p.Attempts, Retry: true}, true
	}
	level, round := p.Level+1, p.Round
	if level >= len(pol.Levels) {
		level, round = 0, round+1
	}
	if round > pol.Repeat {
		p.Exhaust(fmt.Sprintf("every level of %s paged %d time(s), nobody acknowledged", pol.Name, pol.Repeat+1), now)
		return Step{}, false
	}
	lv := pol.Levels[level]
	t := lv.resolve(now)
	p.Step++
	p.Level, p.Round, p.Target, p.Sending, p.Attempts = level, round, &t, true, 1
	p.History = append(p.History, Event{At: now, Kind: EventPaged, Position: p.Position})
	return Step{Number: p.Step, Level: level, Round: round, Target: t, After: lv.After, Attempt: 1}, true
}

// Exhaust ends the escalation at now without an acknowledgement, for the
// reason given (kept in the history): paging stops and the note saying
// that nobody acknowledged becomes due. It does nothing on a stopped page.
func (p *Page) Exhaust(reason string, now time.Time) bool {
	if p.Stopped() || p.Done {
		return false
	}
	p.Exhausted, p.Sending, p.Target, p.NextAt, p.NoteAttempts = true, false, nil, now, 0
	p.History = append(p.History, Event{At: now, Kind: EventExhausted, Position: Position{Level: p.Level, Round: p.Round}, Detail: reason})
	return true
}

// resolve turns a level into the target to page at now.
func (lv Level) resolve(now time.Time) Target {
	switch lv.Kind {
	case TargetSchedule:
		return Target{Kind: TargetPerson, ID: lv.Schedule.OnCall(now).Member, Schedule: lv.Schedule.Name}
	case TargetGroup:
		return Target{Kind: TargetGroup, ID: lv.Name}
	}
	return Target{Kind: TargetPerson, ID: lv.Name}
}

// Claim makes the current step's claim expire at until: past it, another
// worker may take the step over (the claimant is presumed dead).
func (p *Page) Claim(until time.Time) { p.NextAt = until }

// Sent confirms step number step at now: the next level is due after wait.
// It does nothing if the page moved on meanwhile.
func (p *Page) Sent(step int, wait time.Duration, now time.Time) bool {
	if !p.Sending || p.Step != step {
		return false
	}
	p.Sending = false
	if !p.Stopped() {
		p.NextAt = now.Add(wait)
	}
	p.History = append(p.History, Event{At: now, Kind: EventSent, Position: p.Position})
	return true
}

// Failed records that the chat refused step number step at now. The step
// is retried after retry; after MaxAttempts tries the next level is due at
// once.
func (p *Page) Failed(step int, reason string, retry time.Duration, now time.Time) bool {
	if !p.Sending || p.Step != step {
		return false
	}
	p.History = append(p.History, Event{At: now, Kind: EventFailed, Position: p.Position, Detail: reason})
	if p.Attempts >= MaxAttempts {
		p.Sending = false
		p.NextAt = now
		return true
	}
	p.NextAt = now.Add(retry)
	return true
}

// Unreachable records that step number step cannot reach its target at
// all (the Pager answered ErrUnreachable) at now: no retry, the next level
// is due at once.
func (p *Page) Unreachable(step int, reason string, now time.Time) bool {
	if !p.Sending || p.Step != step {
		return false
	}
	p.Attempts = MaxAttempts
	return p.Failed(step, reason, 0, now)
}

// Ack records that by acknowledged the page at now and stops the
// escalation; the acknowledgement note becomes due. Only the first
// acknowledgement counts, and a page whose ticket was resolved has nothing
// left to acknowledge. An exhausted page can still be acknowledged: the
// note then records who finally took it.
func (p *Page) Ack(by string, now time.Time) bool {
	if p.Acked() || p.Resolved() {
		return false
	}
	p.AckedBy, p.AckedAt = by, now
	p.Sending, p.NoteAttempts = false, 0
	p.Done = false
	p.NextAt = now
	p.History = append(p.History, Event{At: now, Kind: EventAcked, Position: p.untargeted(), By: by})
	return true
}

// Noted records that the acknowledgement note reached the ticket; the page
// is then done.
func (p *Page) Noted(now time.Time) bool {
	if !p.Acked() || p.AckNoted {
		return false
	}
	p.AckNoted, p.Done = true, true
	p.History = append(p.History, Event{At: now, Kind: EventNoted, By: p.AckedBy})
	return true
}

// NoteDue reports whether the acknowledgement note is still to be written.
func (p *Page) NoteDue() bool { return p.Acked() && !p.AckNoted }

// ExhaustNoteDue reports whether the note saying that nobody acknowledged
// is still to be written.
func (p *Page) ExhaustNoteDue() bool {
	return p.Exhausted && !p.Acked() && !p.Resolved() && !p.ExhaustNoted
}

// NotedExhausted records that the exhaustion note reached the ticket; the
// page is then done.
func (p *Page) NotedExhausted(now time.Time) bool {
	if !p.ExhaustNoteDue() {
		return false
	}
	p.ExhaustNoted, p.Done = true, true
	p.History = append(p.History, Event{At: now, Kind: EventNoted, Detail: "nobody acknowledged"})
	return true
}

// NoteFailed records that the due note could not be written at now. It is
// tried again after retry, doubled at each failure up to an hour; after
// MaxNoteAttempts tries the escalator gives up on it and the page is done.
func (p *Page) NoteFailed(reason string, retry time.Duration, now time.Time) bool {
	if !p.NoteDue() && !p.ExhaustNoteDue() {
		return false
	}
	p.NoteAttempts++
	if p.NoteAttempts >= MaxNoteAttempts {
		p.History = append(p.History, Event{At: now, Kind: EventFailed, Detail: fmt.Sprintf("gave up on the private note after %d attempts: %s", p.NoteAttempts, reason)})
		if p.NoteDue() {
			p.AckNoted = true
		} else {
			p.ExhaustNoted = true
		}
		p.Done = true
		return true
	}
	wait := retry
	for i := 1; i < p.NoteAttempts && wait < time.Hour; i++ {
		wait *= 2
	}
	p.NextAt = now.Add(min(wait, time.Hour))
	return true
}

// Resolve records that the ticket was resolved at now and stops the
// escalation.
func (p *Page) Resolve(now time.Time) bool {
	if p.Resolved() {
		return false
	}
	p.ResolvedAt = now
	p.Sending = false
	if !p.NoteDue() {
		p.Done = true
	}
	p.History = append(p.History, Event{At: now, Kind: EventResolved, Position: p.untargeted()})
	return true
}

// EscalateNow makes the next step due at now (the card's Escalate now
// button). It does nothing on a stopped page or while a step is being sent.
func (p *Page) EscalateNow(by string, now time.Time) bool {
	if p.Stopped() || p.Done || p.Sending {
		return false
	}
	p.NextAt = now
	p.History = append(p.History, Event{At: now, Kind: EventEscalate, Position: p.untargeted(), By: by})
	return true
}

// Clone returns a deep copy, so that a failed swap leaves the original
// untouched.
func (p Page) Clone() Page {
	if p.Target != nil {
		t := *p.Target
		p.Target = &t
	}
	p.History = append([]Event(nil), p.History...)
	return p
}

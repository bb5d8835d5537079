package rules

import (
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// TicketEnv is the ticket as rule expressions see it: `ticket.<name>` with the
// API's own field names. Fields the desk may send as null get a zero value,
// so an expression never dereferences nil:
//
//   - responder_id, group_id, department_id and workspace_id are 0 when unset
//     (0 responder_id means unassigned);
//   - category and sub_category are "" when unset;
//   - due_by and fr_due_by are the zero time when the ticket has no due date;
//     a comparison that reads a missing one is false (`ticket.due_by <
//     now()` does not hold, the loader guards it), and `has_due(ticket)` or
//     `ticket.due_by.IsZero()` ask whether there is one.
type TicketEnv struct {
	ID           int64          `expr:"id"`
	Subject      string         `expr:"subject"`
	Status       int            `expr:"status"`
	Priority     int            `expr:"priority"`
	Source       int            `expr:"source"`
	RequesterID  int64          `expr:"requester_id"`
	ResponderID  int64          `expr:"responder_id"`
	GroupID      int64          `expr:"group_id"`
	DepartmentID int64          `expr:"department_id"`
	Type         string         `expr:"type"`
	Tags         []string       `expr:"tags"`
	Category     string         `expr:"category"`
	SubCategory  string         `expr:"sub_category"`
	CustomFields map[string]any `expr:"custom_fields"`
	DueBy        time.Time      `expr:"due_by"`
	FrDueBy      time.Time      `expr:"fr_due_by"`
	CreatedAt    time.Time      `expr:"created_at"`
	UpdatedAt    time.Time      `expr:"updated_at"`
	WorkspaceID  int64          `expr:"workspace_id"`

	// DescriptionText is the ticket's description as plain text, at most
	// MaxDescriptionText characters (the mirror keeps no more).
	DescriptionText string `expr:"description_text"`
	// Requester, Agent and Group name the ticket's requester_id,
	// responder_id and group_id, when the evaluation has People (the
	// scheduler's looks them up on the desk); else, and for an id not
	// known yet, their fields are "".
	Requester Person    `expr:"requester"`
	Agent     Person    `expr:"agent"`
	Group     GroupInfo `expr:"group"`

	// steps counts the loop steps of the expression running on this
	// ticket (expressions cannot see it): past MaxSteps it stops with
	// ErrBudget. NewTicketEnv sets it; without it nothing is counted.
	steps *stepCounter
}

// stepCounter is the run-time step budget of one ticket's evaluation; an
// evaluation runs on one goroutine, one expression at a time.
type stepCounter struct{ n int }

// Env is the environment every rule expression and template is compiled
// against and run with: the ticket, and now() returning the evaluation's
// clock (the cycle's now, not the wall clock, so tests and `rules test
// --now` are reproducible).
type Env struct {
	Ticket TicketEnv        `expr:"ticket"`
	Now    func() time.Time `expr:"now"`
}

// NewTicketEnv converts a desk ticket to the view expressions see. Its
// times are in UTC, whatever offset the desk sent, so that a template
// prints them alike, in UTC unless it converts them itself
// (ticket.due_by.In(timezone("Europe/Zurich"))).
func NewTicketEnv(t *sdclient.Ticket) TicketEnv {
	e := ticketFields(t)
	e.steps = &stepCounter{}
	if e.Tags == nil {
		e.Tags = []string{}
	}
	if e.CustomFields == nil {
		e.CustomFields = map[string]any{}
	}
	return e
}

// ticketFields is NewTicketEnv without its step counter and without
// making nil tags and custom fields empty: what allocates, which a caller
// reusing them does itself.
func ticketFields(t *sdclient.Ticket) TicketEnv {
	e := TicketEnv{
		ID:           t.ID,
		Subject:      t.Subject,
		Status:       t.Status,
		Priority:     t.Priority,
		Source:       t.Source,
		RequesterID:  t.RequesterID,
		ResponderID:  deref(t.ResponderID),
		GroupID:      deref(t.GroupID),
		DepartmentID: deref(t.DepartmentID),
		Type:         t.Type,
		Tags:         t.Tags,
		Category:     deref(t.Category),
		SubCategory:  deref(t.SubCategory),
		CustomFields: t.CustomFields,
		DueBy:        deref(t.DueBy).UTC(),
		FrDueBy:      deref(t.FrDueBy).UTC(),
		CreatedAt:    t.CreatedAt.UTC(),
		UpdatedAt:    t.UpdatedAt.UTC(),
		WorkspaceID:  deref(t.WorkspaceID),
	}
	e.DescriptionText = TrimDescription(t.DescriptionText)
	return e
}

// MaxDescriptionText is how much of a ticket's description_text rules see,
// in characters: the scheduler's mirror keeps no more of it.
const MaxDescriptionText = 2000

// TrimDescription cuts a description to MaxDescriptionText characters.
func TrimDescription(s string) string {
	if len(s) <= MaxDescriptionText {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxDescriptionText {
			return s[:i]
		}
		n++
	}
	return s
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// namedCodes are the identifiers expressions may use instead of the API's
// numeric codes; the loader replaces them by constants at compile time.
var namedCodes = map[string]int{
	"Low":      sdclient.PriorityLow,
	"Medium":   sdclient.PriorityMedium,
	"High":     sdclient.PriorityHigh,
	"Urgent":   sdclient.PriorityUrgent,
	"Open":     sdclient.StatusOpen,
	"Pending":  sdclient.StatusPending,
	"Resolved": sdclient.StatusResolved,
	"Closed":   sdclient.StatusClosed,
}

// ticketFieldGetters read one field of a TicketEnv by its expression name;
// Explain uses them to show the values an `if` referenced.
var ticketFieldGetters = map[string]func(*TicketEnv) any{
	"id":               func(t *TicketEnv) any { return t.ID },
	"subject":          func(t *TicketEnv) any { return t.Subject },
	"status":           func(t *TicketEnv) any { return t.Status },
	"priority":         func(t *TicketEnv) any { return t.Priority },
	"source":           func(t *TicketEnv) any { return t.Source },
	"requester_id":     func(t *TicketEnv) any { return t.RequesterID },
	"responder_id":     func(t *TicketEnv) any { return t.ResponderID },
	"group_id":         func(t *TicketEnv) any { return t.GroupID },
	"department_id":    func(t *TicketEnv) any { return t.DepartmentID },
	"type":             func(t *TicketEnv) any { return t.Type },
	"tags":             func(t *TicketEnv) any { return t.Tags },
	"category":         func(t *TicketEnv) any { return t.Category },
	"sub_category":     func(t *TicketEnv) any { return t.SubCategory },
	"custom_fields":    func(t *TicketEnv) any { return t.CustomFields },
	"due_by":           func(t *TicketEnv) any { return t.DueBy },
	"fr_due_by":        func(t *TicketEnv) any { return t.FrDueBy },
	"created_at":       func(t *TicketEnv) any { return t.CreatedAt },
	"updated_at":       func(t *TicketEnv) any { return t.UpdatedAt },
	"workspace_id":     func(t *TicketEnv) any { return t.WorkspaceID },
	"description_text": func(t *TicketEnv) any { return t.DescriptionText },
	"requester":        func(t *TicketEnv) any { return t.Requester },
	"agent":            func(t *TicketEnv) any { return t.Agent },
	"group":            func(t *TicketEnv) any { return t.Group },
}

package fakedesk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// Desk is a small in-memory bot.Desk. Lock Mu to read or change its
// fields while it serves calls.
type Desk struct {
	Mu         sync.Mutex
	Tickets    map[int64]*sdclient.Ticket
	AgentList  []*sdclient.Agent
	MeID       int64
	StatusList []sdclient.FieldChoice
	GroupList  []*sdclient.Group
	Convs      []Conv
	NextID     int64
	Delay      time.Duration
	Fail       map[string][]error // per op: errors returned by the next calls
	Calls      map[string]int
	Creates    []sdclient.TicketCreate
	Updates    []Update
	PanicOn    string
	// WorkspaceList is what Workspaces lists (nil: none named).
	WorkspaceList []*sdclient.Workspace
	// Lacks holds the abilities this desk does not have ("requester",
	// "agents", "requesterByEmail", "workspaces", "requesterNote"): they
	// answer errors.ErrUnsupported, as a desk without the ability does.
	Lacks map[string]bool
}

// Lack takes the abilities ops away from the desk (see Lacks).
func (d *Desk) Lack(ops ...string) *Desk {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if d.Lacks == nil {
		d.Lacks = map[string]bool{}
	}
	for _, op := range ops {
		d.Lacks[op] = true
	}
	return d
}

// able counts a call of an ability and answers errors.ErrUnsupported
// when the desk lacks it; otherwise as enter.
func (d *Desk) able(ctx context.Context, op string) error {
	d.Mu.Lock()
	lacks := d.Lacks[op]
	d.Mu.Unlock()
	if lacks {
		return fmt.Errorf("fake desk: %s: %w", op, errors.ErrUnsupported)
	}
	return d.enter(ctx, op)
}

// Conv is a note or reply written on a ticket.
type Conv struct {
	TicketID int64
	Body     string
	UserID   int64
	Private  bool
	Incoming bool // written as the requester (RequesterNote)
}

// Update is one UpdateTicket call.
type Update struct {
	ID int64
	U  sdclient.TicketUpdate
}

func lastName(s string) *string { return &s }

// New is a desk with three agents (Alice, the API key's agent; Bob;
// inactive Olga), five statuses, two groups and tickets 42, 43 and 44.
func New() *Desk {
	ws := []int64{1}
	t0 := time.Date(2026, 11, 5, 9, 30, 0, 0, time.UTC)
	due := t0.Add(8 * time.Hour)
	d := &Desk{
		Tickets: map[int64]*sdclient.Ticket{},
		AgentList: []*sdclient.Agent{
			{Person: sdclient.Person{ID: 7, FirstName: "Alice", LastName: lastName("Agent"), Active: true}, Email: "alice@example.com", WorkspaceIDs: ws},
			{Person: sdclient.Person{ID: 8, FirstName: "Bob", LastName: lastName("Builder"), Active: true}, Email: "bob@example.com", WorkspaceIDs: ws},
			{Person: sdclient.Person{ID: 9, FirstName: "Olga", Active: false}, Email: "olga@example.com"},
		},
		MeID: 7,
		StatusList: []sdclient.FieldChoice{
			{ID: 2, Value: "Open"}, {ID: 3, Value: "Pending"}, {ID: 4, Value: "Resolved"}, {ID: 5, Value: "Closed"},
			{ID: 6, Value: "Waiting on vendor"},
		},
		GroupList: []*sdclient.Group{{ID: 3, Name: "Hardware"}, {ID: 4, Name: "Network"}},
		NextID:    100,
		Fail:      map[string][]error{},
		Calls:     map[string]int{},
	}
	d.Tickets[42] = &sdclient.Ticket{
		ID: 42, Subject: "Printer on fire", Status: 2, Priority: 4, RequesterID: 501,
		GroupID: sdclient.Ptr[int64](3), DueBy: &due, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour),
		WorkspaceID: sdclient.Ptr[int64](1),
		Requester:   &sdclient.TicketRequester{ID: 501, Name: "Carol Requester", Email: "carol@example.com"},
		Conversations: []*sdclient.Conversation{
			{ID: 1, TicketID: 42, BodyText: "It smells of smoke.", Incoming: true, CreatedAt: t0.Add(10 * time.Minute)},
			{ID: 2, TicketID: 42, BodyText: "Fire brigade called.", Private: true, Source: 2, CreatedAt: t0.Add(20 * time.Minute)},
		},
	}
	d.Tickets[43] = &sdclient.Ticket{ID: 43, Subject: "VPN down", Status: 6, Priority: 3, RequesterID: 502,
		ResponderID: sdclient.Ptr[int64](7), CreatedAt: t0, UpdatedAt: t0, WorkspaceID: sdclient.Ptr[int64](1)}
	d.Tickets[44] = &sdclient.Ticket{ID: 44, Subject: "Old laptop", Status: 5, Priority: 1, RequesterID: 502,
		ResponderID: sdclient.Ptr[int64](8), CreatedAt: t0, UpdatedAt: t0, WorkspaceID: sdclient.Ptr[int64](1)}
	return d
}

// enter counts a call, sleeps the configured delay and returns an injected
// error or panics when asked.
func (d *Desk) enter(ctx context.Context, op string) error {
	d.Mu.Lock()
	d.Calls[op]++
	delay := d.Delay
	var err error
	if errs := d.Fail[op]; len(errs) > 0 {
		err, d.Fail[op] = errs[0], errs[1:]
	}
	p := d.PanicOn == op
	d.Mu.Unlock()
	if p {
		panic("fake desk exploded in " + op)
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return err
}

// FailNext makes the next calls of op fail with errs, one each.
func (d *Desk) FailNext(op string, errs ...error) {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	d.Fail[op] = append(d.Fail[op], errs...)
}

// Count is how often op was called.
func (d *Desk) Count(op string) int {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return d.Calls[op]
}

// Snapshot is a copy of ticket id as stored now.
func (d *Desk) Snapshot(id int64) sdclient.Ticket {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return *d.Tickets[id]
}

// Conversations is a copy of the notes and replies written.
func (d *Desk) Conversations() []Conv {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return append([]Conv(nil), d.Convs...)
}

// CreateTicket implements bot.Desk: the ticket gets the next id.
func (d *Desk) CreateTicket(ctx context.Context, nt *sdclient.TicketCreate) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "create"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	d.NextID++
	t := &sdclient.Ticket{ID: d.NextID, Subject: nt.Subject, Description: nt.Description, Status: nt.Status, Priority: nt.Priority, Source: nt.Source}
	if nt.GroupID != 0 {
		t.GroupID = &nt.GroupID
	}
	d.Tickets[t.ID] = t
	d.Creates = append(d.Creates, *nt)
	c := *t
	return &c, nil
}

// TicketBrief counts as a ticket read, like Ticket, and as a brief one.
func (d *Desk) TicketBrief(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	d.Mu.Lock()
	d.Calls["ticket brief"]++
	d.Mu.Unlock()
	return d.Ticket(ctx, id)
}

// Ticket implements bot.Desk.
func (d *Desk) Ticket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "ticket"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	t, err := d.ticketLocked("get", id)
	if err != nil {
		return nil, err
	}
	c := *t
	return &c, nil
}

// ticketLocked is ticket id, or the desk's 404 for op.
func (d *Desk) ticketLocked(op string, id int64) (*sdclient.Ticket, error) {
	t, ok := d.Tickets[id]
	if !ok {
		return nil, fmt.Errorf("%s ticket %d: %w", op, id, sdclient.ErrNotFound)
	}
	return t, nil
}

// UpdateTicket implements bot.Desk for status, priority and agent.
func (d *Desk) UpdateTicket(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "update"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	t, err := d.ticketLocked("update", id)
	if err != nil {
		return nil, err
	}
	if u.Status != nil {
		t.Status = *u.Status
	}
	if u.Priority != nil {
		t.Priority = *u.Priority
	}
	if u.ResponderID != nil {
		t.ResponderID = sdclient.Ptr(*u.ResponderID)
	}
	d.Updates = append(d.Updates, Update{id, u})
	c := *t
	return &c, nil
}

func (d *Desk) addConv(ctx context.Context, op string, c Conv) error {
	if err := d.enter(ctx, op); err != nil {
		return err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if _, ok := d.Tickets[c.TicketID]; !ok {
		return fmt.Errorf("%s on ticket %d: %w", op, c.TicketID, sdclient.ErrNotFound)
	}
	d.Convs = append(d.Convs, c)
	return nil
}

// AddNote implements bot.Desk.
func (d *Desk) AddNote(ctx context.Context, id int64, body string, user int64) error {
	return d.addConv(ctx, "note", Conv{TicketID: id, Body: body, UserID: user, Private: true})
}

// Reply implements bot.Desk.
func (d *Desk) Reply(ctx context.Context, id int64, body string, user int64) error {
	return d.addConv(ctx, "reply", Conv{TicketID: id, Body: body, UserID: user})
}

// RequesterNote implements bot.Desk: a public, incoming note by the
// requester.
func (d *Desk) RequesterNote(ctx context.Context, id int64, body string, requester int64) error {
	d.Mu.Lock()
	lacks := d.Lacks["requesterNote"]
	d.Mu.Unlock()
	if lacks {
		return fmt.Errorf("fake desk: requesterNote: %w", errors.ErrUnsupported)
	}
	return d.addConv(ctx, "requesterNote", Conv{TicketID: id, Body: body, UserID: requester, Incoming: true})
}

// Workspaces implements bot.Desk: WorkspaceList.
func (d *Desk) Workspaces(ctx context.Context) ([]*sdclient.Workspace, error) {
	if err := d.able(ctx, "workspaces"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return append([]*sdclient.Workspace(nil), d.WorkspaceList...), nil
}

// FilterTickets implements bot.Desk over status, priority, requester,
// agent and group.
func (d *Desk) FilterTickets(ctx context.Context, q string, ws int64, limit int) ([]*sdclient.Ticket, int, error) {
	if err := d.enter(ctx, "filter"); err != nil {
		return nil, 0, err
	}
	e, err := filter.Parse(q)
	if err != nil {
		return nil, 0, fmt.Errorf("filter %q: %w", q, sdclient.ErrValidation)
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	var out []*sdclient.Ticket
	total := 0
	for id := int64(1); id <= d.NextID; id++ {
		t, ok := d.Tickets[id]
		if !ok {
			continue
		}
		rec := filter.Values{
			"status":       {filter.Number(int64(t.Status))},
			"priority":     {filter.Number(int64(t.Priority))},
			"requester_id": {filter.Number(t.RequesterID)},
			"agent_id":     {filter.Null()},
			"group_id":     {filter.Null()},
		}
		if t.ResponderID != nil {
			rec["agent_id"] = []filter.Value{filter.Number(*t.ResponderID)}
		}
		if t.GroupID != nil {
			rec["group_id"] = []filter.Value{filter.Number(*t.GroupID)}
		}
		if !e.Eval(rec) {
			continue
		}
		total++
		if len(out) < limit {
			c := *t
			out = append(out, &c)
		}
	}
	return out, total, nil
}

// AgentByEmail implements bot.Desk.
func (d *Desk) AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, error) {
	if err := d.enter(ctx, "agentByEmail"); err != nil {
		return nil, err
	}
	for _, a := range d.AgentList {
		if strings.EqualFold(a.Email, email) {
			c := *a
			return &c, nil
		}
	}
	return nil, fmt.Errorf("agent %s: %w", email, sdclient.ErrNotFound)
}

// Agent implements bot.Desk.
func (d *Desk) Agent(ctx context.Context, id int64) (*sdclient.Agent, error) {
	if err := d.enter(ctx, "agent"); err != nil {
		return nil, err
	}
	for _, a := range d.AgentList {
		if a.ID == id {
			c := *a
			return &c, nil
		}
	}
	return nil, fmt.Errorf("agent %d: %w", id, sdclient.ErrNotFound)
}

// Me implements bot.Desk: the agent MeID.
func (d *Desk) Me(ctx context.Context) (*sdclient.Agent, error) {
	return d.Agent(ctx, d.MeID)
}

// Statuses implements bot.Desk.
func (d *Desk) Statuses(ctx context.Context) ([]sdclient.FieldChoice, error) {
	if err := d.enter(ctx, "statuses"); err != nil {
		return nil, err
	}
	return append([]sdclient.FieldChoice(nil), d.StatusList...), nil
}

// Groups implements bot.Desk.
func (d *Desk) Groups(ctx context.Context) ([]*sdclient.Group, error) {
	if err := d.enter(ctx, "groups"); err != nil {
		return nil, err
	}
	return append([]*sdclient.Group(nil), d.GroupList...), nil
}

// Requester implements bot.Desk: the requester embedded in a ticket with
// that id, or the agent with that id (agents ask for help too).
func (d *Desk) Requester(ctx context.Context, id int64) (*sdclient.TicketRequester, error) {
	if err := d.able(ctx, "requester"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if rq := d.requesterLocked(func(rq *sdclient.TicketRequester) bool { return rq.ID == id }); rq != nil {
		return rq, nil
	}
	for _, a := range d.AgentList {
		if a.ID == id {
			return &sdclient.TicketRequester{ID: a.ID, Name: a.Name(), Email: a.Email}, nil
		}
	}
	return nil, fmt.Errorf("requester %d: %w", id, sdclient.ErrNotFound)
}

// RequesterByEmail implements bot.Desk: the requester embedded in a
// ticket with that e-mail.
func (d *Desk) RequesterByEmail(ctx context.Context, email string) (*sdclient.TicketRequester, error) {
	if err := d.able(ctx, "requesterByEmail"); err != nil {
		return nil, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if rq := d.requesterLocked(func(rq *sdclient.TicketRequester) bool { return strings.EqualFold(rq.Email, email) }); rq != nil {
		return rq, nil
	}
	return nil, fmt.Errorf("requester %s: %w", email, sdclient.ErrNotFound)
}

// requesterLocked is a copy of the first requester embedded in a ticket
// (by id) that match accepts, or nil.
func (d *Desk) requesterLocked(match func(*sdclient.TicketRequester) bool) *sdclient.TicketRequester {
	for id := int64(1); id <= d.NextID; id++ {
		if t, ok := d.Tickets[id]; ok && t.Requester != nil && match(t.Requester) {
			c := *t.Requester
			return &c
		}
	}
	return nil
}

// Agents implements bot.Desk: AgentList, at most limit of them.
func (d *Desk) Agents(ctx context.Context, limit int) ([]*sdclient.Agent, bool, error) {
	if err := d.able(ctx, "agents"); err != nil {
		return nil, false, err
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	var out []*sdclient.Agent
	for _, a := range d.AgentList {
		if len(out) == limit {
			return out, true, nil
		}
		c := *a
		out = append(out, &c)
	}
	return out, false, nil
}

// Busy is the desk's 429 as sdclient returns it, asking to wait d.
func Busy(d time.Duration) error {
	return &sdclient.RateLimitError{APIError: &sdclient.APIError{Op: "fake", Method: "GET", StatusCode: 429}, RetryAfter: d}
}

package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// fakeDesk is a small in-memory Desk for router and transport tests.
type fakeDesk struct {
	mu       sync.Mutex
	tickets  map[int64]*sdclient.Ticket
	agents   []*sdclient.Agent
	me       int64
	statuses []sdclient.FieldChoice
	groups   []*sdclient.Group
	convs    []fakeConv
	nextID   int64
	delay    time.Duration
	fail     map[string][]error // per op: errors returned by the next calls
	calls    map[string]int
	creates  []NewTicket
	updates  []fakeUpdate
	panicOn  string
}

type fakeConv struct {
	TicketID int64
	Body     string
	UserID   int64
	Private  bool
}

type fakeUpdate struct {
	ID int64
	U  sdclient.TicketUpdate
}

var _ Desk = (*fakeDesk)(nil)

func lastName(s string) *string { return &s }

func newFakeDesk() *fakeDesk {
	ws := []int64{1}
	t0 := time.Date(2026, 11, 5, 9, 30, 0, 0, time.UTC)
	due := t0.Add(8 * time.Hour)
	d := &fakeDesk{
		tickets: map[int64]*sdclient.Ticket{},
		agents: []*sdclient.Agent{
			{ID: 7, FirstName: "Alice", LastName: lastName("Agent"), Email: "alice@example.com", Active: true, WorkspaceIDs: ws},
			{ID: 8, FirstName: "Bob", LastName: lastName("Builder"), Email: "bob@example.com", Active: true, WorkspaceIDs: ws},
			{ID: 9, FirstName: "Olga", Email: "olga@example.com", Active: false},
		},
		me: 7,
		statuses: []sdclient.FieldChoice{
			{ID: 2, Value: "Open"}, {ID: 3, Value: "Pending"}, {ID: 4, Value: "Resolved"}, {ID: 5, Value: "Closed"},
			{ID: 6, Value: "Waiting on vendor"},
		},
		groups: []*sdclient.Group{{ID: 3, Name: "Hardware"}, {ID: 4, Name: "Network"}},
		nextID: 100,
		fail:   map[string][]error{},
		calls:  map[string]int{},
	}
	d.tickets[42] = &sdclient.Ticket{
		ID: 42, Subject: "Printer on fire", Status: 2, Priority: 4, RequesterID: 501,
		GroupID: sdclient.Ptr[int64](3), DueBy: &due, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour),
		WorkspaceID: sdclient.Ptr[int64](1),
		Requester:   &sdclient.TicketRequester{ID: 501, Name: "Carol Requester", Email: "carol@example.com"},
		Conversations: []*sdclient.Conversation{
			{ID: 1, TicketID: 42, BodyText: "It smells of smoke.", Incoming: true, CreatedAt: t0.Add(10 * time.Minute)},
			{ID: 2, TicketID: 42, BodyText: "Fire brigade called.", Private: true, Source: 2, CreatedAt: t0.Add(20 * time.Minute)},
		},
	}
	d.tickets[43] = &sdclient.Ticket{ID: 43, Subject: "VPN down", Status: 6, Priority: 3, RequesterID: 502,
		ResponderID: sdclient.Ptr[int64](7), CreatedAt: t0, UpdatedAt: t0, WorkspaceID: sdclient.Ptr[int64](1)}
	d.tickets[44] = &sdclient.Ticket{ID: 44, Subject: "Old laptop", Status: 5, Priority: 1, RequesterID: 502,
		ResponderID: sdclient.Ptr[int64](8), CreatedAt: t0, UpdatedAt: t0, WorkspaceID: sdclient.Ptr[int64](1)}
	return d
}

// enter counts a call, sleeps the configured delay and returns an injected
// error or panics when asked.
func (d *fakeDesk) enter(ctx context.Context, op string) error {
	d.mu.Lock()
	d.calls[op]++
	delay := d.delay
	var err error
	if errs := d.fail[op]; len(errs) > 0 {
		err, d.fail[op] = errs[0], errs[1:]
	}
	p := d.panicOn == op
	d.mu.Unlock()
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

func (d *fakeDesk) failNext(op string, errs ...error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail[op] = append(d.fail[op], errs...)
}

func (d *fakeDesk) count(op string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[op]
}

func (d *fakeDesk) ticket(id int64) sdclient.Ticket {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.tickets[id]
}

func (d *fakeDesk) conversations() []fakeConv {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]fakeConv(nil), d.convs...)
}

func (d *fakeDesk) CreateTicket(ctx context.Context, nt NewTicket) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "create"); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	t := &sdclient.Ticket{ID: d.nextID, Subject: nt.Subject, Description: nt.Description, Status: nt.Status, Priority: nt.Priority, Source: nt.Source}
	if nt.GroupID != 0 {
		t.GroupID = &nt.GroupID
	}
	d.tickets[t.ID] = t
	d.creates = append(d.creates, nt)
	c := *t
	return &c, nil
}

// TicketBrief counts as a ticket read, like Ticket, and as a brief one.
func (d *fakeDesk) TicketBrief(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	d.mu.Lock()
	d.calls["ticket brief"]++
	d.mu.Unlock()
	return d.Ticket(ctx, id)
}

func (d *fakeDesk) Ticket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "ticket"); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tickets[id]
	if !ok {
		return nil, fmt.Errorf("get ticket %d: %w", id, sdclient.ErrNotFound)
	}
	c := *t
	return &c, nil
}

func (d *fakeDesk) UpdateTicket(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error) {
	if err := d.enter(ctx, "update"); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tickets[id]
	if !ok {
		return nil, fmt.Errorf("update ticket %d: %w", id, sdclient.ErrNotFound)
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
	d.updates = append(d.updates, fakeUpdate{id, u})
	c := *t
	return &c, nil
}

func (d *fakeDesk) addConv(ctx context.Context, op string, id int64, body string, user int64, private bool) error {
	if err := d.enter(ctx, op); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.tickets[id]; !ok {
		return fmt.Errorf("%s on ticket %d: %w", op, id, sdclient.ErrNotFound)
	}
	d.convs = append(d.convs, fakeConv{TicketID: id, Body: body, UserID: user, Private: private})
	return nil
}

func (d *fakeDesk) AddNote(ctx context.Context, id int64, body string, user int64) error {
	return d.addConv(ctx, "note", id, body, user, true)
}

func (d *fakeDesk) Reply(ctx context.Context, id int64, body string, user int64) error {
	return d.addConv(ctx, "reply", id, body, user, false)
}

func (d *fakeDesk) FilterTickets(ctx context.Context, q string, ws int64, limit int) ([]*sdclient.Ticket, int, error) {
	if err := d.enter(ctx, "filter"); err != nil {
		return nil, 0, err
	}
	e, err := filter.Parse(q)
	if err != nil {
		return nil, 0, fmt.Errorf("filter %q: %w", q, sdclient.ErrValidation)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*sdclient.Ticket
	total := 0
	for id := int64(1); id <= d.nextID; id++ {
		t, ok := d.tickets[id]
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

func (d *fakeDesk) AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, error) {
	if err := d.enter(ctx, "agentByEmail"); err != nil {
		return nil, err
	}
	for _, a := range d.agents {
		if strings.EqualFold(a.Email, email) {
			c := *a
			return &c, nil
		}
	}
	return nil, fmt.Errorf("agent %s: %w", email, sdclient.ErrNotFound)
}

func (d *fakeDesk) Agent(ctx context.Context, id int64) (*sdclient.Agent, error) {
	if err := d.enter(ctx, "agent"); err != nil {
		return nil, err
	}
	for _, a := range d.agents {
		if a.ID == id {
			c := *a
			return &c, nil
		}
	}
	return nil, fmt.Errorf("agent %d: %w", id, sdclient.ErrNotFound)
}

func (d *fakeDesk) Me(ctx context.Context) (*sdclient.Agent, error) {
	return d.Agent(ctx, d.me)
}

func (d *fakeDesk) Statuses(ctx context.Context) ([]sdclient.FieldChoice, error) {
	if err := d.enter(ctx, "statuses"); err != nil {
		return nil, err
	}
	return append([]sdclient.FieldChoice(nil), d.statuses...), nil
}

func (d *fakeDesk) Groups(ctx context.Context) ([]*sdclient.Group, error) {
	if err := d.enter(ctx, "groups"); err != nil {
		return nil, err
	}
	return append([]*sdclient.Group(nil), d.groups...), nil
}

// busyErr is the desk's 429 as sdclient returns it, asking to wait d.
func busyErr(d time.Duration) error {
	return &sdclient.RateLimitError{APIError: &sdclient.APIError{Op: "fake", Method: "GET", StatusCode: 429}, RetryAfter: d}
}

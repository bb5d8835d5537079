package firing

import (
	"context"

	"github.com/deskbot/deskbot/sdclient"
)

// Desk is the part of the desk API a cycle uses: the change feed's reads
// (package feed declares its own subset), the execution step's re-reads,
// writes and look-ups. ClientDesk adapts an *sdclient.Client; tests wrap
// it to observe or break calls. Every method returns the sdclient Response
// (nil when nothing was sent) so that the caller can count requests and
// read the rate state (Deps.Count).
type Desk interface {
	// OpenStatuses returns every open status id, custom ones included.
	OpenStatuses(ctx context.Context) ([]int, error)
	// FilterTickets reads one page of a filter search.
	FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error)
	// ListTickets reads one page of GET /tickets (the change feed).
	ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error)
	// GetTicket re-reads one ticket.
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
	// UpdateTicket applies a merged update.
	UpdateTicket(ctx context.Context, id int64, u *sdclient.TicketUpdate) (*sdclient.Ticket, *sdclient.Response, error)
	// AddNote adds a note to a ticket.
	AddNote(ctx context.Context, id int64, n *sdclient.NoteRequest) (*sdclient.Conversation, *sdclient.Response, error)
	// Reply sends a public reply on a ticket.
	Reply(ctx context.Context, id int64, r *sdclient.ReplyRequest) (*sdclient.Conversation, *sdclient.Response, error)
	// ListConversations reads one page of a ticket's conversations.
	ListConversations(ctx context.Context, id int64, opts *sdclient.ListOptions) ([]*sdclient.Conversation, *sdclient.Response, error)
	// AgentByEmail finds an agent by e-mail (an error matching
	// sdclient.ErrNotFound when there is none).
	AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, *sdclient.Response, error)
	// PeopleDesk names the people and groups of a ticket for the rules.
	PeopleDesk
	// Stopping returns a view of the desk whose requests, when they wait
	// for the rate budget, give up (sdclient.ErrStopped) once stop ends,
	// though their own context (a firing's, cut loose from the cycle so
	// that a shutdown does not cut a write in half) goes on. A cycle's
	// re-reads and writes go through this view, so a Desk that wraps
	// another must wrap its Stopping view too.
	Stopping(stop context.Context) Desk
}

// ClientDesk adapts an sdclient client to Desk. Pass the background client
// (sdclient.New's), so that polling never eats the interactive reserve.
func ClientDesk(c *sdclient.Client) Desk { return clientDesk{c} }

type clientDesk struct{ c *sdclient.Client }

func (d clientDesk) OpenStatuses(ctx context.Context) ([]int, error) { return d.c.OpenStatuses(ctx) }

func (d clientDesk) FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error) {
	return d.c.Tickets.Filter(ctx, query, opts)
}

func (d clientDesk) ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error) {
	return d.c.Tickets.List(ctx, opts)
}

func (d clientDesk) GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error) {
	return d.c.Tickets.Get(ctx, id)
}

func (d clientDesk) UpdateTicket(ctx context.Context, id int64, u *sdclient.TicketUpdate) (*sdclient.Ticket, *sdclient.Response, error) {
	return d.c.Tickets.Update(ctx, id, u)
}

func (d clientDesk) AddNote(ctx context.Context, id int64, n *sdclient.NoteRequest) (*sdclient.Conversation, *sdclient.Response, error) {
	return d.c.Conversations.Note(ctx, id, n)
}

func (d clientDesk) Reply(ctx context.Context, id int64, r *sdclient.ReplyRequest) (*sdclient.Conversation, *sdclient.Response, error) {
	return d.c.Conversations.Reply(ctx, id, r)
}

func (d clientDesk) ListConversations(ctx context.Context, id int64, opts *sdclient.ListOptions) ([]*sdclient.Conversation, *sdclient.Response, error) {
	return d.c.Conversations.List(ctx, id, opts)
}

func (d clientDesk) Stopping(stop context.Context) Desk { return clientDesk{d.c.StopWith(stop)} }

func (d clientDesk) AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, *sdclient.Response, error) {
	return d.c.Agents.GetByEmail(ctx, email)
}

// PeopleDesk is the part of the desk that names the people and groups of
// a ticket for rules (ticket.requester, ticket.agent, ticket.group) and
// for direct messages; part of Desk.
type PeopleDesk interface {
	// GetRequester reads requester id.
	GetRequester(ctx context.Context, id int64) (*sdclient.Requester, *sdclient.Response, error)
	// GetAgent reads agent id.
	GetAgent(ctx context.Context, id int64) (*sdclient.Agent, *sdclient.Response, error)
	// GetGroup reads group id.
	GetGroup(ctx context.Context, id int64) (*sdclient.Group, *sdclient.Response, error)
}

func (d clientDesk) GetRequester(ctx context.Context, id int64) (*sdclient.Requester, *sdclient.Response, error) {
	return d.c.Requesters.Get(ctx, id)
}

func (d clientDesk) GetAgent(ctx context.Context, id int64) (*sdclient.Agent, *sdclient.Response, error) {
	return d.c.Agents.Get(ctx, id)
}

func (d clientDesk) GetGroup(ctx context.Context, id int64) (*sdclient.Group, *sdclient.Response, error) {
	return d.c.Groups.Get(ctx, id)
}

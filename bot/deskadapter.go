package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
)

// DeskAdapter fits *sdclient.Client to the Desk interface. It sends through
// the client's interactive twin (people are waiting: it may use the rate
// reserve) and returns the client's own typed errors (*sdclient.APIError,
// *sdclient.RateLimitError and the sdclient sentinels) unchanged.
type DeskAdapter struct {
	c *sdclient.Client
}

var _ Desk = (*DeskAdapter)(nil)

// NewDeskAdapter wraps a desk client for the bot.
func NewDeskAdapter(c *sdclient.Client) *DeskAdapter {
	return &DeskAdapter{c: c.Interactive()}
}

// CreateTicket implements Desk (POST /tickets).
func (a *DeskAdapter) CreateTicket(ctx context.Context, t *sdclient.TicketCreate) (*sdclient.Ticket, error) {
	out, _, err := a.c.Tickets.Create(ctx, t)
	return out, err
}

// Ticket implements Desk (GET /tickets/{id}?include=conversations,requester).
func (a *DeskAdapter) Ticket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	t, _, err := a.c.Tickets.Get(ctx, id, "conversations", "requester")
	return t, err
}

// TicketBrief implements Desk (GET /tickets/{id}).
func (a *DeskAdapter) TicketBrief(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	t, _, err := a.c.Tickets.Get(ctx, id)
	return t, err
}

// UpdateTicket implements Desk (PUT /tickets/{id}).
func (a *DeskAdapter) UpdateTicket(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error) {
	t, _, err := a.c.Tickets.Update(ctx, id, &u)
	return t, err
}

// AddNote implements Desk (POST /tickets/{id}/notes, private).
func (a *DeskAdapter) AddNote(ctx context.Context, id int64, body string, userID int64) error {
	_, _, err := a.c.Conversations.Note(ctx, id, &sdclient.NoteRequest{Body: body, Private: true, UserID: userID})
	return err
}

// Reply implements Desk (POST /tickets/{id}/reply).
func (a *DeskAdapter) Reply(ctx context.Context, id int64, body string, userID int64) error {
	_, _, err := a.c.Conversations.Reply(ctx, id, &sdclient.ReplyRequest{Body: body, UserID: userID})
	return err
}

// FilterTickets implements Desk with one page of GET /tickets/filter.
func (a *DeskAdapter) FilterTickets(ctx context.Context, query string, workspaceID int64, limit int) ([]*sdclient.Ticket, int, error) {
	opts := &sdclient.FilterOptions{}
	if workspaceID != 0 {
		opts.WorkspaceID = &workspaceID
	}
	page, _, err := a.c.Tickets.Filter(ctx, query, opts)
	if err != nil {
		return nil, 0, err
	}
	ts := page.Tickets
	if len(ts) > limit {
		ts = ts[:limit]
	}
	return ts, max(page.Total, len(page.Tickets)), nil
}

// AgentByEmail implements Desk (GET /agents?email=).
func (a *DeskAdapter) AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, error) {
	ag, _, err := a.c.Agents.GetByEmail(ctx, email)
	if errors.Is(err, sdclient.ErrInvalidInput) {
		// Not an e-mail address: certainly not an agent.
		return nil, fmt.Errorf("%w: %w", sdclient.ErrNotFound, err)
	}
	return ag, err
}

// Agent implements Desk (GET /agents/{id}).
func (a *DeskAdapter) Agent(ctx context.Context, id int64) (*sdclient.Agent, error) {
	ag, _, err := a.c.Agents.Get(ctx, id)
	return ag, err
}

// Requester implements Desk (GET /requesters/{id}; an agent who
// asked for help is not a requester: then GET /agents/{id}).
func (a *DeskAdapter) Requester(ctx context.Context, id int64) (*sdclient.TicketRequester, error) {
	rq, _, err := a.c.Requesters.Get(ctx, id)
	if err == nil {
		out := &sdclient.TicketRequester{ID: rq.ID, Name: rq.FirstName}
		if rq.LastName != nil {
			out.Name = strings.TrimSpace(out.Name + " " + *rq.LastName)
		}
		if rq.PrimaryEmail != nil {
			out.Email = *rq.PrimaryEmail
		}
		return out, nil
	}
	if !errors.Is(err, sdclient.ErrNotFound) {
		return nil, err
	}
	ag, _, err := a.c.Agents.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return &sdclient.TicketRequester{ID: ag.ID, Name: ag.Name(), Email: ag.Email}, nil
}

// Workspaces implements Desk (GET /workspaces).
func (a *DeskAdapter) Workspaces(ctx context.Context) ([]*sdclient.Workspace, error) {
	var out []*sdclient.Workspace
	for w, err := range a.c.Workspaces.ListAll(ctx, &sdclient.ListOptions{PerPage: 100}) {
		if err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		out = append(out, w)
	}
	return out, nil
}

// Agents implements Desk (GET /agents?per_page=100, page by page,
// up to limit agents).
func (a *DeskAdapter) Agents(ctx context.Context, limit int) ([]*sdclient.Agent, bool, error) {
	var out []*sdclient.Agent
	for ag, err := range a.c.Agents.ListAll(ctx, &sdclient.AgentListOptions{ListOptions: sdclient.ListOptions{PerPage: 100}}) {
		if err != nil {
			return nil, false, fmt.Errorf("list agents: %w", err)
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, ag)
	}
	return out, false, nil
}

// Me implements Desk (GET /agents/me).
func (a *DeskAdapter) Me(ctx context.Context) (*sdclient.Agent, error) {
	ag, _, err := a.c.Agents.Me(ctx)
	return ag, err
}

// Statuses implements Desk (the status form field's choices).
func (a *DeskAdapter) Statuses(ctx context.Context) ([]sdclient.FieldChoice, error) {
	s, err := a.c.Statuses(ctx)
	return s, err
}

// Groups implements Desk (every page of GET /groups).
func (a *DeskAdapter) Groups(ctx context.Context) ([]*sdclient.Group, error) {
	var out []*sdclient.Group
	for g, err := range a.c.Groups.ListAll(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list groups: %w", err)
		}
		out = append(out, g)
	}
	return out, nil
}

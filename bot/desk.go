package bot

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Desk is what the chat commands need from the service desk. It is declared
// here, by its consumer; DeskAdapter fits *sdclient.Client to it. Errors are
// sdclient's own (wrapped or not): the bot tests them with errors.Is and
// errors.As against sdclient.ErrNotFound, sdclient.ErrForbidden,
// sdclient.ErrUnauthorized, sdclient.ErrValidation, sdclient.ErrInvalidInput,
// *sdclient.RateLimitError and *sdclient.APIError to tell the user what went
// wrong.
type Desk interface {
	// CreateTicket opens a ticket; the requester is t.Email.
	CreateTicket(ctx context.Context, t *sdclient.TicketCreate) (*sdclient.Ticket, error)
	// Ticket reads one ticket with its conversations and requester embedded.
	Ticket(ctx context.Context, id int64) (*sdclient.Ticket, error)
	// TicketBrief reads one ticket without embeds: a third of Ticket's
	// credits, for commands that only need its fields.
	TicketBrief(ctx context.Context, id int64) (*sdclient.Ticket, error)
	// UpdateTicket changes the set fields of a ticket and returns it.
	UpdateTicket(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error)
	// AddNote adds a private note on behalf of the agent userID.
	AddNote(ctx context.Context, id int64, body string, userID int64) error
	// Reply sends a public reply (e-mailed to the requester) on behalf of
	// the agent userID.
	Reply(ctx context.Context, id int64, body string, userID int64) error
	// FilterTickets runs a filter query in one workspace (0: the account's
	// default) and returns at most limit tickets and the total count.
	FilterTickets(ctx context.Context, query string, workspaceID int64, limit int) ([]*sdclient.Ticket, int, error)
	// AgentByEmail finds the agent with that e-mail; sdclient.ErrNotFound if
	// none.
	AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, error)
	// Agent reads one agent by id.
	Agent(ctx context.Context, id int64) (*sdclient.Agent, error)
	// Me is the agent that owns the desk API key.
	Me(ctx context.Context) (*sdclient.Agent, error)
	// Statuses lists the account's ticket statuses (the choices of the
	// status form field: id and agent-facing name), custom ones included.
	Statuses(ctx context.Context) ([]sdclient.FieldChoice, error)
	// Groups lists the agent groups.
	Groups(ctx context.Context) ([]*sdclient.Group, error)

	// Some desks lack the abilities below: such a desk answers an error
	// wrapping errors.ErrUnsupported, and the bot does without (see each).

	// Requester reads the person with this id (a requester, or an agent
	// who asked for help); sdclient.ErrNotFound if none. It names the
	// requester of a ticket read without the requester embedded (alerts
	// and pages get such tickets from the rules), so that its card shows a
	// name, not "requester #N"; unsupported, those cards keep the id and a
	// requester's thread reply is not copied.
	Requester(ctx context.Context, id int64) (*sdclient.TicketRequester, error)
	// Agents lists the desk's agents, at most limit of them; more reports
	// that there were more. It is /ticket agents (/assign list);
	// unsupported, that lists groups only.
	Agents(ctx context.Context, limit int) (agents []*sdclient.Agent, more bool, err error)
	// RequesterByEmail finds the requester with that e-mail;
	// sdclient.ErrNotFound if none. A person's home lists the tickets they
	// asked for by it; unsupported, an agent's requests are listed under
	// the agent's own id (the desk's agents are requesters too) and anyone
	// else is told it cannot.
	RequesterByEmail(ctx context.Context, email string) (*sdclient.TicketRequester, error)
	// Workspaces lists the account's workspaces, so that answers name a
	// workspace rather than give its id; unsupported, they give the id.
	Workspaces(ctx context.Context) ([]*sdclient.Workspace, error)
	// RequesterNote adds a public, incoming note to ticket id on behalf of
	// the requester requesterID, for the requester's replies in a linked
	// thread; unsupported, those are copied as private notes on behalf of
	// the API key's agent, saying who wrote them.
	RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error
}

// Explainer says why the rules did or did not act on a ticket the command
// has just read; the rules engine implements it. A nil Explainer means no
// rules are loaded.
type Explainer interface {
	ExplainTicket(ctx context.Context, t *sdclient.Ticket) (string, error)
}

// Acks records that someone acknowledged an alert, so that on-call
// escalation stops. The store package implements it; nil disables it.
type Acks interface {
	Acknowledge(ctx context.Context, alertKey, byEmail string, at time.Time) error
}

package bot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// budgetWindow is the desk's rate window: credits spent leave it a minute
// later (the desk and sdclient count in a sliding 60-second window).
const budgetWindow = time.Minute

// WithDeskBudget tells the router how many desk credits a minute people's
// commands may spend: the desk client's whole rate
// (DESKBOT_DESK_RATE_PER_MIN), since its Interactive twin may use the
// reserve too. The Slack transport sizes its command workers to it and
// answers "busy" at once, instead of after a long wait, when the budget of
// the current minute is spent (see gate.go). 0, the default, leaves the
// budget unchecked (workers are then sized as for the default budget, 60).
func WithDeskBudget(perMinute int) Option {
	return func(c *routerConfig) { c.budget = perMinute }
}

// deskMeter counts the desk credits the router's calls spent in the last
// minute, the way sdclient's limiter counts them (one time per credit).
// It sees only this router's calls: what the scheduler spends in the
// background is not in it (sdclient serves interactive requests first, and
// keeps a fifth of the budget for them).
type deskMeter struct {
	mu    sync.Mutex
	spent []time.Time // one per credit, ascending
}

func (m *deskMeter) record(now time.Time, credits int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(now)
	for range credits {
		m.spent = append(m.spent, now)
	}
}

func (m *deskMeter) pruneLocked(now time.Time) {
	cut := now.Add(-budgetWindow)
	drop := 0
	for drop < len(m.spent) && !m.spent[drop].After(cut) {
		drop++
	}
	if drop > 0 {
		m.spent = append(m.spent[:0], m.spent[drop:]...)
	}
}

// used is how many credits were spent in the window ending now.
func (m *deskMeter) used(now time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(now)
	return len(m.spent)
}

// freed is how long until n more credits have left the window; ok is
// false when fewer than n are in it.
func (m *deskMeter) freed(now time.Time, n int) (d time.Duration, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(now)
	if n <= 0 {
		return 0, true
	}
	if n > len(m.spent) {
		return 0, false
	}
	return m.spent[n-1].Add(budgetWindow).Sub(now), true
}

// account is what one admitted command has spent so far; the gate counts
// the rest of its estimate as still to come.
type account struct{ credits atomic.Int64 }

type accountKey struct{}

func withAccount(ctx context.Context, a *account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// Credits the desk charges for what the router asks (sdclient's
// requestCost): one a request, and a ticket read with its conversations and
// requester embedded (DeskAdapter.Ticket) one more per embed.
const (
	creditsRequest    = 1
	creditsFullTicket = 3
)

// meteredDesk records what each call costs in the router's meter and in
// the calling command's account, and hands the tickets the desk answers
// with to the mirror (WithMirrorUpdates): every desk call of the router
// passes here.
type meteredDesk struct {
	Desk
	meter   *deskMeter
	updates MirrorUpdater // nil: none
}

// seen hands t, as the desk answered, to the mirror.
func (d *meteredDesk) seen(t *sdclient.Ticket, err error) (*sdclient.Ticket, error) {
	if err == nil && t != nil && d.updates != nil {
		d.updates.Observe(t)
	}
	return t, err
}

func (d *meteredDesk) spend(ctx context.Context, credits int) {
	d.meter.record(time.Now(), credits) // the desk's window is wall time
	if a, ok := ctx.Value(accountKey{}).(*account); ok {
		a.credits.Add(int64(credits))
	}
}

// The Desk methods of meteredDesk spend what the call costs, then call
// the desk.

// CreateTicket costs one request.
func (d *meteredDesk) CreateTicket(ctx context.Context, t *sdclient.TicketCreate) (*sdclient.Ticket, error) {
	d.spend(ctx, creditsRequest)
	return d.seen(d.Desk.CreateTicket(ctx, t))
}

func (d *meteredDesk) Ticket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	d.spend(ctx, creditsFullTicket)
	return d.seen(d.Desk.Ticket(ctx, id))
}

func (d *meteredDesk) TicketBrief(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	d.spend(ctx, creditsRequest)
	return d.seen(d.Desk.TicketBrief(ctx, id))
}

func (d *meteredDesk) UpdateTicket(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error) {
	d.spend(ctx, creditsRequest)
	return d.seen(d.Desk.UpdateTicket(ctx, id, u))
}

func (d *meteredDesk) AddNote(ctx context.Context, id int64, body string, userID int64) error {
	d.spend(ctx, creditsRequest)
	return d.Desk.AddNote(ctx, id, body, userID)
}

func (d *meteredDesk) Reply(ctx context.Context, id int64, body string, userID int64) error {
	d.spend(ctx, creditsRequest)
	return d.Desk.Reply(ctx, id, body, userID)
}

func (d *meteredDesk) FilterTickets(ctx context.Context, query string, workspaceID int64, limit int) ([]*sdclient.Ticket, int, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.FilterTickets(ctx, query, workspaceID, limit)
}

func (d *meteredDesk) AgentByEmail(ctx context.Context, email string) (*sdclient.Agent, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.AgentByEmail(ctx, email)
}

func (d *meteredDesk) Agent(ctx context.Context, id int64) (*sdclient.Agent, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.Agent(ctx, id)
}

// Requester costs one request when the desk can look requesters up.
func (d *meteredDesk) Requester(ctx context.Context, id int64) (*sdclient.TicketRequester, error) {
	rq, err := d.Desk.Requester(ctx, id)
	d.spendAsked(ctx, err)
	return rq, err
}

// spendAsked spends the request of a people look-up unless the desk said
// it cannot do it (errors.ErrUnsupported): then nothing was asked.
func (d *meteredDesk) spendAsked(ctx context.Context, err error) {
	if !errors.Is(err, errors.ErrUnsupported) {
		d.spend(ctx, creditsRequest)
	}
}

// Agents is counted as one page of 100 when the desk can list agents.
func (d *meteredDesk) Agents(ctx context.Context, limit int) ([]*sdclient.Agent, bool, error) {
	as, more, err := d.Desk.Agents(ctx, limit)
	d.spendAsked(ctx, err)
	return as, more, err
}

// Workspaces costs one request when the desk can list workspaces.
func (d *meteredDesk) Workspaces(ctx context.Context) ([]*sdclient.Workspace, error) {
	ws, err := d.Desk.Workspaces(ctx)
	d.spendAsked(ctx, err)
	return ws, err
}

func (d *meteredDesk) Me(ctx context.Context) (*sdclient.Agent, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.Me(ctx)
}

func (d *meteredDesk) Statuses(ctx context.Context) ([]sdclient.FieldChoice, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.Statuses(ctx)
}

// Groups is counted as one page; a desk with more than a page of groups
// spends a little more than the meter knows.
func (d *meteredDesk) Groups(ctx context.Context) ([]*sdclient.Group, error) {
	d.spend(ctx, creditsRequest)
	return d.Desk.Groups(ctx)
}

// Warm fills the caches nearly every command reads (the account's
// statuses), so that the first commands after a start do not each wait
// for them: at a desk answering in 2 s, a cold /ticket show takes three
// round trips (agent, ticket, statuses) instead of two. It costs one
// request.
func (r *Router) Warm(ctx context.Context) {
	r.statusChoices(ctx)
}

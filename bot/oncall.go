package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// OnCall is what the chat needs of on-call escalation; *oncall.Escalator
// implements it. The buttons of a page card and /oncall act through it.
type OnCall interface {
	// Ack stops page key: by (an e-mail) acknowledged it at now; the
	// escalator writes the private note. ok is false when someone already
	// had; the page then says who.
	Ack(ctx context.Context, key, by string, now time.Time) (oncall.Page, bool, error)
	// Take is Ack for the Take it button (the bot assigned the ticket first).
	Take(ctx context.Context, key, by string, now time.Time) (oncall.Page, bool, error)
	// EscalateNow pages the next level at once; false when the page is
	// stopped or a step is being sent.
	EscalateNow(ctx context.Context, key, by string, now time.Time) (bool, error)
	// TicketPages reads the pages of a ticket (/oncall ack N acknowledges
	// those the caller may acknowledge).
	TicketPages(ctx context.Context, ticketID int64) ([]oncall.Page, error)
	// ResolveTicket stops the pages of a ticket that was resolved or closed.
	ResolveTicket(ctx context.Context, ticketID int64, now time.Time) (int, error)
	// Page reads one page.
	Page(ctx context.Context, key string) (oncall.Page, bool, error)
	// WhoIsOnCall reports who is on call now and next in every schedule.
	WhoIsOnCall(now time.Time) []oncall.Status
	// Config returns the schedules and policies: the people of a page's
	// policy may acknowledge and escalate it without being agents.
	Config() *oncall.Config
}

// WithOnCall wires the page buttons and /oncall to an escalator.
func WithOnCall(o OnCall) Option {
	return func(c *routerConfig) { c.oncall = o }
}

// pageClick is what one page-card button did: the page after it (nil:
// read it again), the ticket when the button assigned it, and the answer.
type pageClick struct {
	page  *oncall.Page
	taken *sdclient.Ticket
	text  string
}

// pageButton is the work of one page-card button on page key of ticket id.
type pageButton struct {
	verb string // for error answers; N becomes "ticket 42"
	do   func(r *Router, ctx context.Context, c *call, key string, now time.Time) (pageClick, error)
}

// pageButtonTable is the page card's buttons by action id.
func pageButtonTable() map[string]pageButton {
	return map[string]pageButton{
		chat.ActionPageAck:      {"acknowledge the page of N", (*Router).pageAck},
		chat.ActionPageTake:     {"take N", (*Router).pageTake},
		chat.ActionPageEscalate: {"escalate the page of N", (*Router).pageEscalate},
	}
}

// actPage performs a click on a page card: Acknowledge, Take it (assign
// the ticket to the clicking agent, then acknowledge) or Escalate now;
// value is the button's value (ticket, rule and page key).
func (r *Router) actPage(ctx context.Context, caller Caller, action, value string) (res Reply) {
	idv, _, key := chat.SplitButtonValue(value)
	id, _ := parseTicketID(strings.TrimSpace(idv))
	b, known := pageButtonTable()[action]
	if !known || id <= 0 || key == "" {
		return failed(fmt.Sprintf("unknown page button %q (value %q)", action, idv))
	}
	// Take it draws the card from the ticket its access check reads; the
	// others only check access with it (and read the card afterwards).
	c := &call{caller: caller, cmd: &command{name: "button " + action, verb: b.verb, brief: action != chat.ActionPageTake}, ticket: id}
	resp := r.run(ctx, c.cmd.name, func(ctx context.Context) (Reply, error) {
		if r.oncall == nil {
			return Reply{}, refuse("on-call paging is not configured here (no oncall: section in the rules file)")
		}
		click, err := b.do(r, ctx, c, key, r.now())
		if err != nil {
			return Reply{}, err
		}
		if click.page == nil {
			q, found, err := r.oncall.Page(ctx, key)
			if err != nil || !found {
				return Reply{}, fmt.Errorf("read page %s: %w", key, errors.Join(err, oncall.ErrNoPage))
			}
			click.page = &q
		}
		p := *click.page
		if action == chat.ActionPageEscalate && p.Exhausted && !p.Acked() {
			click.text = fmt.Sprintf("Nobody is left to page: every level of %s was paged, so the page of ticket #%d stopped; it needs an owner.", p.Policy, id)
		}
		res.Page = &p
		if click.taken != nil {
			res.Ticket, res.Card = click.taken, r.ticketCard(ctx, click.taken)
		} else {
			res.Ticket, res.Card = r.PageTicketCard(ctx, id)
		}
		res.Card.Buttons = chat.PageButtons(p)
		return Reply{Text: click.text}, nil
	}, c)
	if resp.Failed {
		return resp
	}
	res.Text = resp.Text
	return res
}

// pageAck is Acknowledge on a page card.
func (r *Router) pageAck(ctx context.Context, c *call, key string, now time.Time) (pageClick, error) {
	email, err := r.pagePermit(ctx, c, key, "acknowledge")
	if err != nil {
		return pageClick{}, err
	}
	p, ok, err := r.oncall.Ack(ctx, key, email, now)
	if err != nil && !ok {
		return pageClick{}, fmt.Errorf("acknowledge page %s: %w", key, err)
	}
	text := fmt.Sprintf("You acknowledged the page of ticket #%d; the escalation stopped.", c.ticket)
	if !ok {
		text = r.alreadyText(ctx, p)
	}
	return pageClick{page: &p, text: text}, nil
}

// pageTake is Take it on a page card: the ticket is assigned to the
// clicking agent, then the page acknowledged.
func (r *Router) pageTake(ctx context.Context, c *call, key string, now time.Time) (pageClick, error) {
	if err := r.authorise(ctx, c); err != nil {
		return pageClick{}, err
	}
	if err := r.permit(ctx, c); err != nil {
		return pageClick{}, err
	}
	t, err := r.update(ctx, c.ticket, sdclient.TicketUpdate{ResponderID: sdclient.Ptr(c.agent.ID)})
	if err != nil {
		return pageClick{}, err
	}
	taken := withEmbeds(t, c.t)
	p, ok, err := r.oncall.Take(ctx, key, c.email, now)
	if err != nil && !ok {
		return pageClick{}, fmt.Errorf("take page %s: %w", key, err)
	}
	text := fmt.Sprintf("Ticket #%d is assigned to you and the escalation stopped.", c.ticket)
	if !ok {
		text = fmt.Sprintf("Ticket #%d is assigned to you. %s", c.ticket, r.alreadyText(ctx, p))
	}
	return pageClick{page: &p, taken: taken, text: text}, nil
}

// pageEscalate is Escalate now on a page card; the page is read again
// afterwards.
func (r *Router) pageEscalate(ctx context.Context, c *call, key string, now time.Time) (pageClick, error) {
	email, err := r.pagePermit(ctx, c, key, "escalate")
	if err != nil {
		return pageClick{}, err
	}
	ok, err := r.oncall.EscalateNow(ctx, key, email, now)
	if err != nil && !ok {
		return pageClick{}, fmt.Errorf("escalate page %s: %w", key, err)
	}
	if !ok {
		return pageClick{}, refuse("nothing to escalate: the page of ticket #%d is stopped (acknowledged, resolved or out of levels) or its next page is being sent", c.ticket)
	}
	return pageClick{text: fmt.Sprintf("Escalated the page of ticket #%d to the next level.", c.ticket)}, nil
}

// alreadyText says who stopped a page before the click: by name when
// they are a desk agent (issue 23: names, not ids), else by e-mail.
func (r *Router) alreadyText(ctx context.Context, p oncall.Page) string {
	switch {
	case p.Acked():
		return fmt.Sprintf("%s already acknowledged the page at %s.", r.personText(ctx, p.AckedBy), p.AckedAt.UTC().Format("2006-01-02 15:04 UTC"))
	case p.Resolved():
		return "The ticket was resolved; the page had stopped."
	}
	return "The page had already stopped."
}

// personText names the person with that e-mail as "Name (e-mail)" when
// they are a desk agent deskbot can look up (cached), else by the e-mail.
func (r *Router) personText(ctx context.Context, email string) string {
	a, err := r.agentByEmail(ctx, email)
	if err != nil || a == nil || a.Name() == "" {
		return email
	}
	return fmt.Sprintf("%s (%s)", a.Name(), email)
}

// PageTicketCard reads what a page card shows besides the page: the
// ticket and its card without buttons (the transports call it when they
// page). A desk failure leaves a nil ticket and a bare card rather than no
// card.
func (r *Router) PageTicketCard(ctx context.Context, id int64) (*sdclient.Ticket, *Card) {
	t, err := r.getTicket(ctx, id, false)
	if err != nil {
		r.log.Warn("read ticket for the page card", "ticket", id, "err", err)
		return nil, &Card{Title: fmt.Sprintf("#%d", id), URL: r.TicketLink(id)}
	}
	card := r.ticketCard(ctx, t)
	card.Buttons = nil
	return t, card
}

func (r *Router) cmdOnCall(ctx context.Context, c *call) (Reply, error) {
	if r.oncall == nil {
		return Reply{Text: "on-call is not configured (no oncall: section in the rules file)"}, nil
	}
	st := r.oncall.WhoIsOnCall(r.now())
	resp := Reply{Text: oncall.RenderStatusWith(st, func(member string) string { return r.memberName(ctx, c.caller, member) })}
	if m, ok := c.caller.Users.(chat.Mentioner); ok && len(st) > 0 {
		resp.Markup = oncall.RenderStatusWith(st, func(member string) string { return m.MentionMember(ctx, member) })
	}
	return resp, nil
}

func (r *Router) cmdOnCallAck(ctx context.Context, c *call) (Reply, error) {
	if r.oncall == nil {
		return Reply{}, refuse("on-call is not configured (no oncall: section in the rules file)")
	}
	email, err := r.callerEmail(ctx, c.caller)
	if err != nil {
		return Reply{}, err
	}
	all, err := r.oncall.TicketPages(ctx, c.p.ID)
	if err != nil {
		return Reply{}, fmt.Errorf("acknowledge pages of ticket %d: %w", c.p.ID, err)
	}
	g := &pageGate{r: r, c: c, email: email}
	res, err := r.ackPages(ctx, g, all, email)
	if err != nil {
		return Reply{}, err
	}
	if res.allowed == 0 {
		return Reply{}, g.noPageToAck(ctx)
	}
	if len(res.pages) == 0 {
		return Reply{}, r.nothingAcked(ctx, c.p.ID, res)
	}
	text := fmt.Sprintf("Acknowledged the page of ticket #%d (%s); the escalation stopped and a private note records it.", c.p.ID, strings.Join(res.acked, ", "))
	if len(res.why) > 0 {
		text += " Not acknowledged: " + strings.Join(res.why, "; ") + "."
	}
	return Reply{Text: text, Pages: res.pages}, nil
}

// pageAcks is what /oncall ack did with the pages of a ticket.
type pageAcks struct {
	pages   []oncall.Page // acknowledged now
	stopped []oncall.Page // acknowledged or resolved before
	acked   []string      // the policies of pages
	why     []string      // why escalating pages were not the caller's to acknowledge
	errs    []error
	allowed int // pages the caller may act on
}

// ackPages acknowledges, as email, the escalating pages of all that the
// gate lets the caller act on.
func (r *Router) ackPages(ctx context.Context, g *pageGate, all []oncall.Page, email string) (pageAcks, error) {
	var res pageAcks
	now := r.now()
	for _, p := range all {
		v, err := g.may(ctx, p)
		if err != nil {
			return pageAcks{}, err
		}
		if v != pageAllowed {
			// A page the caller may not act on is named only to someone
			// who may act on another page of the ticket (below), and only
			// while it escalates: who stopped it is not theirs to know.
			if !p.Acked() && !p.Resolved() {
				res.why = append(res.why, g.refusal(v, p.Policy))
			}
			continue
		}
		res.allowed++
		if p.Acked() || p.Resolved() {
			res.stopped = append(res.stopped, p)
			continue
		}
		q, won, err := r.oncall.Ack(ctx, p.Key, email, now)
		if err != nil {
			res.errs = append(res.errs, err)
		}
		if won {
			res.pages = append(res.pages, q)
			res.acked = append(res.acked, q.Policy)
		}
	}
	return res, nil
}

// noPageToAck is the answer when the caller may act on no page of the
// ticket, maybe because it has none: it says nothing of its pages,
// neither whether there are any nor who acknowledged them.
func (g *pageGate) noPageToAck(ctx context.Context) error {
	a, err := g.lookup(ctx)
	if err != nil {
		return err
	}
	if a == nil {
		return refuse("only desk agents and the people on the rota of a ticket's page can use %s; %s is neither. You can open a ticket with /ticket new subject", g.c.cmd.slash(), g.email)
	}
	if err := g.inScope(ctx); err != nil {
		return err
	}
	return refuse("no page of ticket #%d is waiting for an acknowledgement", g.c.p.ID)
}

// nothingAcked is the answer when the caller acknowledged no page of
// ticket id.
func (r *Router) nothingAcked(ctx context.Context, id int64, res pageAcks) error {
	if err := errors.Join(res.errs...); err != nil {
		return fmt.Errorf("acknowledge pages of ticket %d: %w", id, err)
	}
	if len(res.why) > 0 {
		return refuse("did not acknowledge the page of ticket #%d: %s", id, strings.Join(res.why, "; "))
	}
	if len(res.stopped) > 0 {
		// The newest page says who was first (or that the ticket was
		// resolved), rather than a bare "nothing to acknowledge".
		return refuse("no page of ticket #%d is waiting for an acknowledgement: %s", id, r.alreadyText(ctx, res.stopped[0]))
	}
	return refuse("no page of ticket #%d is waiting for an acknowledgement", id)
}

// alertPageKey derives the page key of the firing an alert key names
// ("deskbot:f=<rule>/<ticket>/<episode>.<seq>/<action>" -> rule/ticket/episode):
// an alert and a page of the same rule, ticket and episode belong together.
func alertPageKey(alertKey string) (string, bool) {
	_, _, page, ok := splitAlertKey(alertKey)
	return page, ok
}

// splitAlertKey returns the rule and ticket an alert key names, and the key
// of the page of the same firing.
func splitAlertKey(alertKey string) (rule string, ticket int64, page string, ok bool) {
	rest, ok := strings.CutPrefix(alertKey, "deskbot:f=")
	if !ok {
		return "", 0, "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", 0, "", false
	}
	rest = rest[:i]
	j := strings.LastIndexByte(rest, '.')
	if j < 0 {
		return "", 0, "", false
	}
	page = rest[:j]
	k := strings.LastIndexByte(page, '/')
	if k < 0 {
		return "", 0, "", false
	}
	l := strings.LastIndexByte(page[:k], '/')
	if l < 0 {
		return "", 0, "", false
	}
	ticket, err := strconv.ParseInt(page[l+1:k], 10, 64)
	if err != nil || ticket <= 0 {
		return "", 0, "", false
	}
	return page[:l], ticket, page, true
}

// alertKeyPermit refuses an alert button whose key is not of the alert of
// the button's own ticket and rule. The button's value comes back from
// the client and anyone can change it: the caller's access was checked on
// the ticket it names, so the key may only name that ticket's firings, or
// else a person could stop the page of a ticket they may not touch.
func alertKeyPermit(id int64, rule, key string) error {
	kr, kt, _, ok := splitAlertKey(key)
	if !ok || kt != id || kr != rule {
		return refuse("this button does not belong to an alert of ticket #%d", id)
	}
	return nil
}

// ackAlertPage acknowledges the page that goes with an alert of ticket id,
// if any. The page is read from the store and must be of that ticket
// (alertKeyPermit checked the key already; this holds whatever the key).
func (r *Router) ackAlertPage(ctx context.Context, id int64, alertKey, email string) (oncall.Page, bool) {
	if r.oncall == nil {
		return oncall.Page{}, false
	}
	key, ok := alertPageKey(alertKey)
	if !ok {
		return oncall.Page{}, false
	}
	if p, found, err := r.oncall.Page(ctx, key); err != nil || !found || p.TicketID != id {
		return oncall.Page{}, false
	}
	p, won, err := r.oncall.Ack(ctx, key, email, r.now())
	if err != nil {
		r.log.Warn("acknowledge the page of an alert", "page", key, "err", err)
	}
	return p, won
}

// resolvePages stops the escalation of a ticket just resolved or closed.
func (r *Router) resolvePages(ctx context.Context, id int64) {
	if r.oncall == nil {
		return
	}
	if _, err := r.oncall.ResolveTicket(ctx, id, r.now()); err != nil {
		r.log.Warn("stop the pages of a resolved ticket", "ticket", id, "err", err)
	}
}

package bot

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
)

// command is one row of the command table; help, usage lines and parsing
// all come from it.
type command struct {
	name      string // "ticket note"; the slash command is the first word
	args      []argSpec
	summary   string
	verb      string // for error answers; N becomes "ticket 42"
	agentOnly bool
	// brief: the command needs the ticket's fields only, so the access
	// check reads it without conversations and requester (1 credit, not 3).
	brief bool
	// mirrored: the command needs only the fields the ticket mirror keeps,
	// so the access check reads the ticket from the mirror when it can.
	mirrored bool
	run      func(r *Router, ctx context.Context, c *call) (Reply, error)
}

func (c *command) slash() string { return "/" + c.name }

func (c *command) usage() string {
	parts := []string{c.slash()}
	for _, a := range c.args {
		parts = append(parts, a.usage())
	}
	return strings.Join(parts, " ")
}

var (
	argN       = argSpec{argID, "N"}
	argPageN   = argSpec{argPage, "page N"}
	argNote    = argSpec{argText, "text"}
	statusArg  = argSpec{argText, "open|pending|resolved|closed|<status name or id>"}
	prioArg    = argSpec{argText, "low|medium|high|urgent|1-4"}
	filterArg  = argSpec{argText, "<filter expression>"}
	assigneeAr = argSpec{argText, "@user|e-mail|me"}
)

// commandTable is every command the bot knows, one row each: its name and
// arguments (help, usage and parsing come from them), whether only agents
// may run it, how the access check reads its ticket, and its handler. Each
// router builds its own (see NewRouter). To add a command, add a row and
// its (*Router).cmdX handler; nothing else changes.
func commandTable() []*command {
	return []*command{
		{name: "ticket new", args: []argSpec{{argOptText, "subject"}}, summary: "open a ticket (without a subject: a form)", verb: "open a ticket", run: (*Router).cmdNew},
		{name: "ticket show", args: []argSpec{argN}, summary: "show a ticket", verb: "see N", agentOnly: true, run: (*Router).cmdShow},
		{name: "ticket note", args: []argSpec{argN, argNote}, summary: "add a private note", verb: "add a note to N", agentOnly: true, brief: true, run: (*Router).cmdNote},
		{name: "ticket reply", args: []argSpec{argN, argNote}, summary: "reply to the requester (sent by e-mail)", verb: "reply on N", agentOnly: true, brief: true, run: (*Router).cmdReply},
		{name: "ticket status", args: []argSpec{argN, statusArg}, summary: "set the status", verb: "change the status of N", agentOnly: true, brief: true, run: (*Router).cmdStatus},
		{name: "ticket priority", args: []argSpec{argN, prioArg}, summary: "set the priority", verb: "change the priority of N", agentOnly: true, brief: true, run: (*Router).cmdPriority},
		{name: "ticket close", args: []argSpec{argN}, summary: "close a ticket", verb: "close N", agentOnly: true, brief: true, run: (*Router).cmdClose},
		{name: "ticket resolve", args: []argSpec{argN}, summary: "resolve a ticket", verb: "resolve N", agentOnly: true, brief: true, run: (*Router).cmdResolve},
		{name: "ticket search", args: []argSpec{filterArg}, summary: "search your workspaces by field (priority:4 AND agent_id:0) or by plain words in subject and description (printer jam); add page N for more", verb: "search tickets", agentOnly: true, run: (*Router).cmdSearch},
		{name: "ticket mine", args: []argSpec{argPageN}, summary: "your open tickets", verb: "list your tickets", agentOnly: true, run: (*Router).cmdMine},
		{name: "ticket unassigned", args: []argSpec{argPageN}, summary: "open tickets nobody owns", verb: "list unassigned tickets", agentOnly: true, run: (*Router).cmdUnassigned},
		{name: "ticket why", args: []argSpec{argN}, summary: "which rules act on a ticket, and why", verb: "explain N", agentOnly: true, brief: true, mirrored: true, run: (*Router).cmdWhy},
		{name: "ticket help", summary: "this list", verb: "show help", run: (*Router).cmdHelp},
		{name: "ticket agents", args: []argSpec{{argOptText, "words"}}, summary: "agents (name, e-mail) and groups to assign to, e.g. /ticket agents alice; also /assign list [words] [page N]", verb: "list agents", agentOnly: true, run: (*Router).cmdAgents},
		{name: "assign", args: []argSpec{argN, assigneeAr}, summary: "assign a ticket to an agent (see /assign list)", verb: "assign N", agentOnly: true, brief: true, run: (*Router).cmdAssign},
		{name: "oncall", summary: "who is on call now and next, per schedule", verb: "show who is on call", run: (*Router).cmdOnCall},
		{name: "oncall ack", args: []argSpec{argN}, summary: "acknowledge the on-call page of a ticket (stops the escalation)", verb: "acknowledge the page of N", brief: true, run: (*Router).cmdOnCallAck},
	}
}

func lookup(table []*command, name string) *command {
	for _, c := range table {
		if c.name == name {
			return c
		}
	}
	return nil
}

func hasSubcommands(table []*command, slash string) bool {
	for _, c := range table {
		if strings.HasPrefix(c.name, slash+" ") {
			return true
		}
	}
	return false
}

// checkTable refuses duplicate names and optional text before other args.
func checkTable(table []*command) error {
	seen := map[string]bool{}
	for _, c := range table {
		if seen[c.name] {
			return fmt.Errorf("bot: command %q registered twice", c.name)
		}
		seen[c.name] = true
		for i, a := range c.args {
			if a.kind != argID && a.kind != argPage && i != len(c.args)-1 {
				return fmt.Errorf("bot: command %q: text argument %q must be last", c.name, a.name)
			}
		}
		if c.run == nil {
			return fmt.Errorf("bot: command %q has no handler", c.name)
		}
	}
	return nil
}

// commandList is the usage lines of one slash command's subcommands.
func commandList(table []*command, slash string) string {
	var lines []string
	for _, c := range table {
		if c.name == slash || strings.HasPrefix(c.name, slash+" ") {
			lines = append(lines, c.usage())
		}
	}
	return strings.Join(lines, " | ")
}

func helpText(table []*command) string {
	var b strings.Builder
	b.WriteString("deskbot commands:\n")
	for _, c := range table {
		fmt.Fprintf(&b, "• %s — %s", c.usage(), c.summary)
		if c.agentOnly {
			b.WriteString(" (agents)")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r *Router) cmdHelp(_ context.Context, _ *call) (Reply, error) {
	return Reply{Text: r.Help()}, nil
}

func (r *Router) cmdNew(ctx context.Context, c *call) (Reply, error) {
	if c.p.Text == "" {
		return Reply{Text: "opening the new-ticket form", Form: &chat.TicketForm{Groups: r.cachedGroups(ctx, 1500*time.Millisecond)}}, nil
	}
	email, err := r.callerEmail(ctx, c.caller)
	if err != nil {
		return Reply{}, err
	}
	return r.create(ctx, email, chat.TicketFormValues{Subject: c.p.Text})
}

// submitForm creates the ticket of a submitted new-ticket form; the
// requester is the submitting user.
func (r *Router) submitForm(ctx context.Context, req Caller, v chat.TicketFormValues) Reply {
	cmd := lookup(r.table, "ticket new")
	c := &call{caller: req, cmd: cmd}
	return r.run(ctx, cmd.name, func(ctx context.Context) (Reply, error) {
		if strings.TrimSpace(v.Subject) == "" {
			return Reply{}, refuse("a ticket needs a subject")
		}
		email, err := r.callerEmail(ctx, req)
		if err != nil {
			return Reply{}, err
		}
		return r.create(ctx, email, v)
	}, c)
}

// maxSubject is the longest subject the bot sends: the desk's subject is
// a 255-character line, and the new-ticket form stops at 250 too.
const maxSubject = 250

func (r *Router) create(ctx context.Context, email string, v chat.TicketFormValues) (Reply, error) {
	subject := strings.Join(strings.Fields(v.Subject), " ")
	desc := strings.TrimSpace(v.Description)
	if desc == "" {
		desc = strings.TrimSpace(v.Subject)
	} else if utf8.RuneCountInString(subject) > maxSubject {
		desc = strings.TrimSpace(v.Subject) + "\n\n" + desc
	}
	// A pasted log as subject: the subject line gets its start, the
	// description keeps all of it.
	subject = chat.Truncate(subject, maxSubject)
	prio := v.Priority
	if prio == 0 {
		prio = sdclient.PriorityLow
	}
	// Creating is not idempotent: never retried.
	t, err := r.desk.CreateTicket(ctx, &sdclient.TicketCreate{
		Subject:     subject,
		Description: htmlText(desc),
		Email:       email,
		Priority:    prio,
		Status:      sdclient.StatusOpen,
		Source:      sdclient.SourceTeamChat,
		GroupID:     v.GroupID,
	})
	if err != nil {
		return Reply{}, fmt.Errorf("create ticket: %w", err)
	}
	text := fmt.Sprintf("Created ticket #%d: %s", t.ID, t.Subject)
	if l := r.TicketLink(t.ID); l != "" {
		text += " — " + l
	}
	return Reply{Text: text, Created: t}, nil
}

func (r *Router) getTicket(ctx context.Context, id int64, brief bool) (*sdclient.Ticket, error) {
	read := r.desk.Ticket
	if brief {
		read = r.desk.TicketBrief
	}
	t, err := retried(ctx, r, func(ctx context.Context) (*sdclient.Ticket, error) { return read(ctx, id) })
	if err != nil {
		return nil, fmt.Errorf("get ticket %d: %w", id, err)
	}
	return t, nil
}

func (r *Router) cmdShow(ctx context.Context, c *call) (Reply, error) {
	card := r.ticketCard(ctx, c.t) // read by permit
	return Reply{Text: card.Title, Card: card}, nil
}

// ticketCard resolves the names a card shows and renders it with buttons.
func (r *Router) ticketCard(ctx context.Context, t *sdclient.Ticket) *Card {
	n := CardNames{Status: statusName(r.statusChoices(ctx), t.Status)}
	if t.ResponderID != nil && *t.ResponderID != 0 {
		n.Agent = r.agentName(ctx, *t.ResponderID)
	}
	if t.GroupID != nil && *t.GroupID != 0 {
		n.Group = fmt.Sprintf("group #%d", *t.GroupID)
		for _, g := range r.cachedGroups(ctx, 2*time.Second) {
			if g.ID == *t.GroupID {
				n.Group = g.Name
			}
		}
	}
	if t.Requester == nil && t.RequesterID != 0 {
		// A ticket read without its requester (alerts, pages): the card
		// shows the name /ticket show shows, not "requester #N".
		if rq := r.requester(ctx, t.RequesterID); rq != nil {
			cp := *t
			cp.Requester = rq
			t = &cp
		}
	}
	card := TicketCard(t, n, r.TicketLink(t.ID))
	card.Buttons = TicketButtons(t, false)
	return card
}

func (r *Router) cmdNote(ctx context.Context, c *call) (Reply, error) {
	if err := r.desk.AddNote(ctx, c.p.ID, htmlText(c.p.Text), c.agent.ID); err != nil {
		return Reply{}, fmt.Errorf("add note to ticket %d: %w", c.p.ID, err)
	}
	return Reply{Text: fmt.Sprintf("Added a private note to ticket #%d.", c.p.ID)}, nil
}

func (r *Router) cmdReply(ctx context.Context, c *call) (Reply, error) {
	if err := r.desk.Reply(ctx, c.p.ID, htmlText(c.p.Text), c.agent.ID); err != nil {
		return Reply{}, fmt.Errorf("reply on ticket %d: %w", c.p.ID, err)
	}
	return Reply{Text: fmt.Sprintf("Replied on ticket #%d; the desk e-mails the reply to the requester.", c.p.ID)}, nil
}

// update sends an idempotent PUT (retried when the desk is busy).
func (r *Router) update(ctx context.Context, id int64, u sdclient.TicketUpdate) (*sdclient.Ticket, error) {
	t, err := retried(ctx, r, func(ctx context.Context) (*sdclient.Ticket, error) { return r.desk.UpdateTicket(ctx, id, u) })
	if err != nil {
		return nil, fmt.Errorf("update ticket %d: %w", id, err)
	}
	return t, nil
}

func (r *Router) setStatus(ctx context.Context, id int64, status int) (Reply, error) {
	if _, err := r.update(ctx, id, sdclient.TicketUpdate{Status: sdclient.Ptr(status)}); err != nil {
		return Reply{}, err
	}
	if !sdclient.IsOpenStatus(status) {
		r.resolvePages(ctx, id)
	}
	return Reply{Text: fmt.Sprintf("Ticket #%d is now %s.", id, statusName(r.statusChoices(ctx), status))}, nil
}

func (r *Router) cmdStatus(ctx context.Context, c *call) (Reply, error) {
	choices := r.statusChoices(ctx)
	id, err := resolveStatus(c.p.Text, choices)
	if err != nil {
		return Reply{}, err
	}
	return r.setStatus(ctx, c.p.ID, id)
}

func (r *Router) cmdClose(ctx context.Context, c *call) (Reply, error) {
	return r.setStatus(ctx, c.p.ID, sdclient.StatusClosed)
}

func (r *Router) cmdResolve(ctx context.Context, c *call) (Reply, error) {
	return r.setStatus(ctx, c.p.ID, sdclient.StatusResolved)
}

func (r *Router) cmdPriority(ctx context.Context, c *call) (Reply, error) {
	p, ok := parsePriority(c.p.Text)
	if !ok {
		return Reply{}, &UsageError{Command: c.cmd.name, Usage: c.cmd.usage(), Reason: fmt.Sprintf("%q is not a priority", c.p.Text)}
	}
	if _, err := r.update(ctx, c.p.ID, sdclient.TicketUpdate{Priority: sdclient.Ptr(p)}); err != nil {
		return Reply{}, err
	}
	return Reply{Text: fmt.Sprintf("Ticket #%d priority is now %s.", c.p.ID, priorityName(p))}, nil
}

func (r *Router) cmdAssign(ctx context.Context, c *call) (Reply, error) {
	target := strings.TrimSpace(c.p.Text)
	if strings.ContainsAny(target, " \t\n") {
		return Reply{}, &UsageError{Command: c.cmd.name, Usage: c.cmd.usage(), Reason: "name one person"}
	}
	var agent *sdclient.Agent
	switch {
	case strings.EqualFold(target, "me"):
		agent = c.agent
	default:
		email, err := r.assigneeEmail(ctx, c, target)
		if err != nil {
			return Reply{}, err
		}
		a, err := r.agentByEmail(ctx, email)
		if err != nil {
			return Reply{}, err
		}
		if a == nil {
			return Reply{}, refuse("%s has no agent account on the desk, so tickets cannot be assigned to them: %s", email, seeAssignList)
		}
		agent = a
	}
	if _, err := r.update(ctx, c.p.ID, sdclient.TicketUpdate{ResponderID: sdclient.Ptr(agent.ID)}); err != nil {
		return Reply{}, err
	}
	return Reply{Text: fmt.Sprintf("Ticket #%d is assigned to %s.", c.p.ID, agent.Name())}, nil
}

// seeAssignList points whoever named someone deskbot cannot assign to at
// the list of those it can.
const seeAssignList = "/assign list shows whom tickets can be assigned to (/assign list WORD finds a name or e-mail)"

// assigneeEmail reads a Slack mention (<@U123> or <@U123|name>), a mailto
// link or a bare e-mail address.
func (r *Router) assigneeEmail(ctx context.Context, c *call, target string) (string, error) {
	switch {
	case strings.HasPrefix(target, "<@") && strings.HasSuffix(target, ">"):
		id, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(target, "<@"), ">"), "|")
		if id == "" {
			break // names nobody
		}
		if c.caller.Users == nil {
			return "", refuse("cannot look up %s here; give an e-mail address", target)
		}
		email, err := c.caller.Users.Email(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("look up e-mail of %s: %w", id, err)
			}
			// The chat does not know the person (the console knows only
			// its own user; Slack: user_not_found), or cannot say now:
			// either way an e-mail address names them.
			r.log.Warn("assign: cannot resolve the person named", "user", id, "err", err)
			if _, network := networkCause(err); network {
				return "", refuse("could not look up <@%s> in the chat just now: name them by e-mail (/assign list shows the agents' e-mails)", id)
			}
			return "", refuse("that person has no agent account on the desk: %s", seeAssignList)
		}
		if email == "" {
			return "", refuse("<@%s> has no e-mail address in their chat profile: name them by e-mail (/assign list shows the agents' e-mails)", id)
		}
		return email, nil
	case strings.HasPrefix(target, "<mailto:") && strings.HasSuffix(target, ">"):
		_, email, ok := strings.Cut(strings.TrimSuffix(target, ">"), "|")
		if !ok {
			email = strings.TrimSuffix(strings.TrimPrefix(target, "<mailto:"), ">")
		}
		if email != "" {
			return email, nil
		}
	case strings.Count(target, "@") == 1 && !strings.HasPrefix(target, "@"):
		return target, nil
	}
	return "", &UsageError{Command: c.cmd.name, Usage: c.cmd.usage(), Reason: fmt.Sprintf("%q is not a @mention, an e-mail address or me", target)}
}

func (r *Router) cmdWhy(ctx context.Context, c *call) (Reply, error) {
	if r.explainer == nil {
		return Reply{Text: "no rules loaded, so no rule acts on any ticket"}, nil
	}
	s, err := r.explainer.ExplainTicket(ctx, c.t)
	if err != nil {
		return Reply{}, fmt.Errorf("explain ticket %d: %w", c.p.ID, err)
	}
	if c.source != "" {
		s = c.source + "\n" + s
	}
	return Reply{Text: s}, nil
}

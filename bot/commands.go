package bot

import (
	"context"
	"errors"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
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
		return Reply{Text: "opening the new-ticket form", Form: &TicketForm{Groups: r.cachedGroups(ctx, 1500*time.Millisecond)}}, nil
	}
	email, err := r.callerEmail(ctx, c.caller)
	if err != nil {
		return Reply{}, err
	}
	return r.create(ctx, email, TicketFormValues{Subject: c.p.Text})
}

// submitForm creates the ticket of a submitted new-ticket form; the
// requester is the submitting user.
func (r *Router) submitForm(ctx context.Context, req Caller, v TicketFormValues) Reply {
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

func (r *Router) create(ctx context.Context, email string, v TicketFormValues) (Reply, error) {
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
	var t *sdclient.Ticket
	err := r.retrying(ctx, true, func(ctx context.Context) error {
		var err error
		if brief {
			t, err = r.desk.TicketBrief(ctx, id)
		} else {
			t, err = r.desk.Ticket(ctx, id)
		}
		return err
	})
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
	var t *sdclient.Ticket
	err := r.retrying(ctx, true, func(ctx context.Context) error {
		var err error
		t, err = r.desk.UpdateTicket(ctx, id, u)
		return err
	})
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

func (r *Router) cmdSearch(ctx context.Context, c *call) (Reply, error) {
	typed, page, err := cutPage(strings.TrimSpace(c.p.Text), maxPage, "10 tickets each")
	if err != nil {
		return Reply{}, err
	}
	if words := searchWords(typed); words != nil {
		return r.searchWords(ctx, c, typed, words, page)
	}
	q, err := prepareQuery(typed, r.statusChoices(ctx))
	if err != nil {
		return Reply{}, refuse("bad filter expression: %v. %s", err, filterHint)
	}
	return r.list(ctx, c, q, "Tickets matching "+typed, listOpts{page: page, more: "/ticket search " + typed,
		narrow: "narrow the search with another term, e.g. /ticket search " + typed + " AND group_id:N"})
}

// filterHint explains the desk's filter syntax to someone who typed
// something else.
var filterHint = "Search with field:value terms joined by AND/OR, e.g. priority:4 AND agent_id:0, tag:'printer', type:'Incident', status:open; fields: " + filterFields() +
	". Plain words (/ticket search printer jam) search the subject and description of open tickets"

func filterFields() string {
	var names []string
	for _, f := range filter.TicketSchema(nil).Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// maxPage bounds /ticket search ... page N: the desk answers a search with
// one page of at most 30 tickets (100 on some desks), which deskbot does
// not page through for a chat answer.
const maxPage = 10

var pageSuffix = regexp.MustCompile(`(?i)\s+page\s+(\S+)\s*$`)

// cutPage takes "page N" (1 to last) off the end of a search; each says
// how large a page is.
func cutPage(s string, last int, each string) (string, int, error) {
	m := pageSuffix.FindStringSubmatchIndex(s)
	if m == nil {
		return s, 1, nil
	}
	n, err := strconv.Atoi(s[m[2]:m[3]])
	if err != nil || n < 1 || n > last {
		return "", 0, refuse("%q is not a page number: pages are 1 to %d (%s)", s[m[2]:m[3]], last, each)
	}
	return strings.TrimSpace(s[:m[0]]), n, nil
}

// searchWords returns the words of a search that is not a filter
// expression (no field:value term), lower-cased; nil for a filter
// expression. AND between words is implied and may be typed.
func searchWords(s string) []string {
	if strings.ContainsAny(s, ":()'\"") {
		return nil
	}
	var words []string
	for _, w := range strings.Fields(strings.ToLower(s)) {
		if w != "and" {
			words = append(words, w)
		}
	}
	return words
}

// searchWords answers a search for plain words. The desk's filter has no
// free-text field, so the words are looked up in deskbot's mirror of the
// open tickets (subject and description, each word somewhere in either);
// without a usable mirror the answer explains the field:value syntax.
func (r *Router) searchWords(ctx context.Context, c *call, typed string, words []string, page int) (Reply, error) {
	match := func(t *sdclient.Ticket) bool {
		if !sdclient.IsOpenStatus(t.Status) {
			return false
		}
		text := strings.ToLower(t.Subject + "\n" + t.DescriptionText)
		for _, w := range words {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	}
	return r.list(ctx, c, "", "Open tickets with "+typed+" in subject or description", listOpts{page: page, mirrored: match, mirrorOnly: true, more: "/ticket search " + typed,
		narrow: "add a word to the search"})
}

func (r *Router) cmdMine(ctx context.Context, c *call) (Reply, error) {
	q := fmt.Sprintf("agent_id:%d AND %s", c.agent.ID, openClause(r.statusChoices(ctx)))
	return r.list(ctx, c, q, "Your open tickets", listOpts{page: c.p.Page, more: "/ticket mine",
		narrow: fmt.Sprintf("narrow them with a search, e.g. /ticket search agent_id:%d AND status:open AND priority:4", c.agent.ID),
		mirrored: func(t *sdclient.Ticket) bool {
			return sdclient.IsOpenStatus(t.Status) && t.ResponderID != nil && *t.ResponderID == c.agent.ID
		}})
}

func (r *Router) cmdUnassigned(ctx context.Context, c *call) (Reply, error) {
	q := "agent_id:0 AND " + openClause(r.statusChoices(ctx))
	return r.list(ctx, c, q, "Open unassigned tickets", listOpts{page: c.p.Page, more: "/ticket unassigned",
		narrow: "narrow them with a search, e.g. /ticket search agent_id:0 AND status:open AND priority:4",
		mirrored: func(t *sdclient.Ticket) bool {
			return sdclient.IsOpenStatus(t.Status) && (t.ResponderID == nil || *t.ResponderID == 0)
		}})
}

// maxQuery is the desk's limit on a filter query.
const maxQuery = 512

// listLimit is how many tickets a list answer shows.
const listLimit = 10

// maxSearchRequests bounds the searches one list command with a split
// scope sends to the desk: its workspaces times the parts of the split
// (see access.scopeQueries).
const maxSearchRequests = 10

// minePage is how many of the caller's own tickets a split search reads
// (the desk's page is at most this large), so that what they share with
// the caller's groups is counted without asking the desk again.
const minePage = 100

// listOpts are the knobs of one list answer.
type listOpts struct {
	// mirrored, when not nil, is q as a test of one ticket: then a
	// workspace the ticket mirror can answer for is answered from it
	// instead, in the desk's order and the caller's scope, and the answer
	// says how fresh it is (or why it read the desk).
	mirrored func(*sdclient.Ticket) bool
	// mirrorOnly: only the mirror can answer (a search for words); a
	// workspace it cannot answer for is refused with the reason.
	mirrorOnly bool
	page       int    // 1-based page of listLimit tickets; 0 is 1
	more       string // the command that asks for more, without "page N"
	// narrow says how to see tickets past the ones the desk answers with.
	narrow string
}

// list runs q in each of the caller's workspaces and renders one page of
// the result.
func (r *Router) list(ctx context.Context, c *call, q, title string, o listOpts) (Reply, error) {
	page := max(o.page, 1)
	// Tickets to read from each workspace: this page and the next, so the
	// answer offers a next page only when it can be shown. (One desk page
	// is read either way.)
	want := (page + 1) * listLimit
	if len(q) > maxQuery {
		return Reply{}, refuse("the filter expression is %d characters long; the desk accepts at most %d", len(q), maxQuery)
	}
	ac := accessOf(c.agent)
	workspaces := c.agent.WorkspaceIDs
	if len(workspaces) == 0 {
		workspaces = []int64{0}
	}
	var fromMirror map[int64]*mirrorWS
	var source string
	if o.mirrored != nil {
		var err error
		if fromMirror, source, err = r.mirrorLists(ctx, workspaces); err != nil {
			return Reply{}, err
		}
	}
	if o.mirrorOnly {
		var err error
		if workspaces, source, err = r.mirrorOnly(workspaces, fromMirror, source); err != nil {
			return Reply{}, err
		}
	}
	sq, err := r.deskScope(ac, q, workspaces, fromMirror)
	if err != nil {
		return Reply{}, err
	}
	var all []*sdclient.Ticket
	total := 0
	for _, ws := range workspaces {
		if m := fromMirror[ws]; m != nil {
			ts, n := mirrorList(m, ws, ac, o.mirrored, want)
			all = append(all, ts...)
			total += n
			continue
		}
		ts, n, err := r.searchScoped(ctx, sq, ws, ac, want)
		if err != nil {
			return Reply{}, fmt.Errorf("filter tickets in %s: %w", r.workspaceName(ctx, ws), err)
		}
		all = append(all, ts...)
		total += n
	}
	card, err := r.listCard(ctx, c, all, total, title, page, o)
	if err != nil {
		return Reply{}, err
	}
	if source != "" {
		card.Notes = append(card.Notes, source)
	}
	return Reply{Text: card.Title, Card: card}, nil
}

// mirrorOnly narrows a search only the mirror can answer (words) to the
// workspaces it holds, and says which it did not search; it refuses when
// the mirror holds none.
func (r *Router) mirrorOnly(workspaces []int64, fromMirror map[int64]*mirrorWS, source string) ([]int64, string, error) {
	if len(fromMirror) == 0 {
		why := strings.TrimPrefix(source, "read from the desk: ")
		if r.mirror == nil {
			why = "deskbot keeps a mirror of the tickets only while rules are loaded, and none are"
		}
		return nil, "", refuse("the desk cannot search for words (its filter has no free-text field), and deskbot's mirror of the open tickets cannot answer: %s. %s", why, filterHint)
	}
	// Search the workspaces the mirror holds; name the others.
	workspaces = slices.DeleteFunc(slices.Clone(workspaces), func(ws int64) bool { return fromMirror[ws] == nil })
	source = "searched deskbot's mirror of the open tickets (the desk cannot search words), " +
		strings.TrimPrefix(strings.Replace(source, "; read from the desk for ", "; not searched: ", 1), "from deskbot's mirror, ")
	return workspaces, source, nil
}

// deskScope narrows q to the caller's scope for the workspaces the desk
// answers for (see access.go; the results are checked again with the same
// rule), refusing a search that would take too many requests.
func (r *Router) deskScope(ac access, q string, workspaces []int64, fromMirror map[int64]*mirrorWS) (scopedQuery, error) {
	desk := 0 // workspaces the desk answers for
	for _, ws := range workspaces {
		if fromMirror[ws] == nil {
			desk++
		}
	}
	if desk == 0 {
		return scopedQuery{}, nil
	}
	sq, err := ac.scopeQueries(q, maxQuery)
	if err != nil {
		return scopedQuery{}, err
	}
	if n := desk * sq.requests(); sq.whole == "" && n > maxSearchRequests {
		return scopedQuery{}, refuse("your search plus your access scope (%d groups) would take %d searches at the desk, more than the %d deskbot sends for one command; shorten your search",
			len(ac.groups), n, maxSearchRequests)
	}
	return sq, nil
}

// listCard renders page of the tickets found (total in all), or refuses
// a page past the end. all holds the tickets up to the next page's, when
// the desk answered with them.
func (r *Router) listCard(ctx context.Context, c *call, all []*sdclient.Ticket, total int, title string, page int, o listOpts) (*Card, error) {
	choices := r.statusChoices(ctx)
	card := &Card{Title: fmt.Sprintf("%s: %d", title, total)}
	from := (page - 1) * listLimit
	if from >= len(all) && page > 1 {
		if from < total {
			return nil, refuse("the desk answers with its first %d tickets only, so page %d cannot be shown; to see the others, %s", len(all), page, o.narrow)
		}
		return nil, refuse("%s: %d, so there is no page %d", title, total, page)
	}
	for _, t := range all[min(from, len(all)):min(from+listLimit, len(all))] {
		who := "unassigned"
		switch {
		case t.ResponderID == nil || *t.ResponderID == 0:
		case *t.ResponderID == c.agent.ID:
			who = c.agent.Name() // the caller: no need to ask the desk
		default:
			who = r.agentName(ctx, *t.ResponderID)
		}
		line := fmt.Sprintf("#%d %s · %s · %s — %s", t.ID, statusName(choices, t.Status), priorityName(t.Priority), who, t.Subject)
		card.Lines = append(card.Lines, line)
	}
	if total > len(card.Lines) {
		end := from + len(card.Lines)
		note := fmt.Sprintf("showing %d–%d of %d", from+1, end, total)
		switch {
		case end >= total || o.more == "":
		case len(all) > end && page < maxPage:
			note += fmt.Sprintf("; next: %s page %d", o.more, page+1)
		case len(all) > end:
			note += fmt.Sprintf("; pages stop at %d: to see the others, %s", maxPage, o.narrow)
		default:
			note += fmt.Sprintf("; the desk answers with its first %d only: to see the others, %s", len(all), o.narrow)
		}
		card.Notes = append(card.Notes, note)
	}
	if total == 0 {
		card.Lines = []string{"nothing found"}
	}
	return card, nil
}

// searchScoped runs a scoped query in workspace ws and returns the
// tickets to show (at most listLimit, in the desk's order) and how many
// the caller may see in all. A split scope's parts are merged without
// duplicates, and the total is the size of their union: the sum of the
// parts' totals less the caller's own tickets in their groups, which
// both mine and a chunk count. Those are counted from mine's page when it
// holds all of mine, else asked of the desk chunk by chunk.
func (r *Router) searchScoped(ctx context.Context, sq scopedQuery, ws int64, ac access, want int) ([]*sdclient.Ticket, int, error) {
	search := func(q string, limit int) ([]*sdclient.Ticket, int, error) {
		var ts []*sdclient.Ticket
		var n int
		err := r.retrying(ctx, true, func(ctx context.Context) error {
			var err error
			ts, n, err = r.desk.FilterTickets(ctx, q, ws, limit)
			return err
		})
		return ts, max(n, len(ts)), err
	}
	var found []*sdclient.Ticket
	total := 0
	if sq.whole != "" {
		ts, n, err := search(sq.whole, want)
		if err != nil {
			return nil, 0, err
		}
		found, total = ts, n
	} else {
		// Each part answers with its first tickets in the desk's order; the
		// merge is the desk's order of the union up to the horizon, the
		// earliest last ticket of a part that has more. (A part cut at
		// listLimit leaves listLimit tickets before its horizon; only
		// a desk page smaller than that shortens the list.)
		byID := map[int64]bool{}
		var horizon *sdclient.Ticket
		none := false // a part has tickets but answered with none
		add := func(ts []*sdclient.Ticket, n int) {
			for _, t := range ts {
				if !byID[t.ID] {
					byID[t.ID] = true
					found = append(found, t)
				}
			}
			switch {
			case len(ts) >= n:
			case len(ts) == 0:
				none = true
			case horizon == nil || deskOrder(ts[len(ts)-1], horizon) < 0:
				horizon = ts[len(ts)-1]
			}
		}
		mine, nMine, err := search(sq.mine, minePage)
		if err != nil {
			return nil, 0, err
		}
		total = nMine
		add(mine, nMine)
		for _, ch := range sq.chunks {
			ts, n, err := search(ch.query, want)
			if err != nil {
				return nil, 0, err
			}
			add(ts, n)
			total += n
		}
		if len(mine) >= nMine {
			for _, t := range mine {
				if t.GroupID != nil && slices.Contains(sq.groups, *t.GroupID) {
					total--
				}
			}
		} else {
			for _, ch := range sq.chunks {
				_, both, err := search(ch.mine, 0)
				if err != nil {
					return nil, 0, err
				}
				total -= both
			}
		}
		slices.SortFunc(found, deskOrder)
		switch {
		case none:
			found = nil
		case horizon != nil:
			i := slices.IndexFunc(found, func(t *sdclient.Ticket) bool { return deskOrder(t, horizon) > 0 })
			if i >= 0 {
				found = found[:i]
			}
		}
	}
	// The desk was asked for the caller's scope only; a ticket it answers
	// with that the caller may not act on (moved meanwhile, or outside the
	// caller's workspaces) is neither shown nor counted.
	shown := found[:0:0]
	for _, t := range found {
		if ac.denied(t) != "" {
			total--
			continue
		}
		shown = append(shown, t)
	}
	return shown[:min(len(shown), want)], max(total, len(shown)), nil
}

// openClause is (status:2 OR status:3 OR ...) over every open status.
func openClause(choices []sdclient.FieldChoice) string {
	var terms []string
	for _, ch := range choices {
		if sdclient.IsOpenStatus(int(ch.ID)) {
			terms = append(terms, fmt.Sprintf("status:%d", ch.ID))
		}
	}
	if len(terms) == 0 {
		terms = []string{"status:2", "status:3"}
	}
	return "(" + strings.Join(terms, " OR ") + ")"
}

// resolveStatus reads open|pending|resolved|closed, a status name or an id.
func resolveStatus(v string, choices []sdclient.FieldChoice) (int, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil {
		for _, ch := range choices {
			if int(ch.ID) == n {
				return n, nil
			}
		}
		return 0, refuse("status %d does not exist; statuses are %s", n, statusList(choices))
	}
	for _, ch := range choices {
		if strings.EqualFold(ch.Value, v) {
			return int(ch.ID), nil
		}
	}
	fixed := map[string]int{"open": sdclient.StatusOpen, "pending": sdclient.StatusPending, "resolved": sdclient.StatusResolved, "closed": sdclient.StatusClosed}
	if n, ok := fixed[strings.ToLower(v)]; ok {
		return n, nil
	}
	return 0, refuse("unknown status %q; statuses are %s", v, statusList(choices))
}

func statusList(choices []sdclient.FieldChoice) string {
	var s []string
	for _, ch := range choices {
		s = append(s, fmt.Sprintf("%s (%d)", ch.Value, ch.ID))
	}
	return strings.Join(s, ", ")
}

func statusName(choices []sdclient.FieldChoice, id int) string {
	for _, ch := range choices {
		if int(ch.ID) == id {
			return ch.Value
		}
	}
	for _, ch := range defaultStatuses() {
		if int(ch.ID) == id {
			return ch.Value
		}
	}
	return fmt.Sprintf("status %d", id)
}

func parsePriority(s string) (int, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "1":
		return sdclient.PriorityLow, true
	case "medium", "2":
		return sdclient.PriorityMedium, true
	case "high", "3":
		return sdclient.PriorityHigh, true
	case "urgent", "4":
		return sdclient.PriorityUrgent, true
	}
	return 0, false
}

func priorityName(p int) string {
	switch p {
	case sdclient.PriorityLow:
		return "Low"
	case sdclient.PriorityMedium:
		return "Medium"
	case sdclient.PriorityHigh:
		return "High"
	case sdclient.PriorityUrgent:
		return "Urgent"
	}
	return fmt.Sprintf("priority %d", p)
}

// htmlText turns typed text into the desk's HTML body.
func htmlText(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
}

// maxAgentsRead bounds the agents /ticket agents reads from the desk (5
// pages of 100); maxAgentsShown how many one answer lists.
const (
	maxAgentsRead  = 500
	maxAgentsShown = 15
	maxGroupsShown = 15
)

// cmdAgents lists the active agents who share a workspace with the caller,
// and the groups, whose name (or e-mail) holds every word typed: whom
// /assign can name. The list is cached like the groups (ten minutes).
func (r *Router) cmdAgents(ctx context.Context, c *call) (Reply, error) {
	typed, page, err := cutPage(" "+c.p.Text, (maxAgentsRead+maxAgentsShown-1)/maxAgentsShown, fmt.Sprintf("%d agents each", maxAgentsShown))
	if err != nil {
		return Reply{}, err
	}
	words := strings.Fields(strings.ToLower(typed))
	has := func(s string) bool {
		s = strings.ToLower(s)
		for _, w := range words {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
	agents, truncated, err := r.agentList(ctx)
	if err != nil {
		return Reply{}, err
	}
	var match []*sdclient.Agent
	for _, a := range agents {
		if a.Active && sharesWorkspace(c.agent, a) && has(a.Name()+" "+a.Email) {
			match = append(match, a)
		}
	}
	var groups []string
	for _, g := range r.cachedGroups(ctx, 5*time.Second) {
		if has(g.Name) {
			groups = append(groups, g.Name)
		}
	}
	title := "Agents to assign to"
	if len(words) > 0 {
		title += " matching " + strings.Join(words, " ")
	}
	card := &Card{Title: fmt.Sprintf("%s: %d", title, len(match))}
	from := (page - 1) * maxAgentsShown
	if from >= len(match) && page > 1 {
		return Reply{}, refuse("%s: %d, so there is no page %d", title, len(match), page)
	}
	shown := match[min(from, len(match)):min(from+maxAgentsShown, len(match))]
	for _, a := range shown {
		card.Lines = append(card.Lines, fmt.Sprintf("%s — %s", a.Name(), a.Email))
	}
	if len(shown) < len(match) {
		note := fmt.Sprintf("showing %d–%d of %d", from+1, from+len(shown), len(match))
		if from+len(shown) < len(match) {
			note += fmt.Sprintf("; next: %s page %d", strings.Join(append([]string{"/assign list"}, words...), " "), page+1)
		}
		card.Notes = append(card.Notes, note+"; or add a word of the name or e-mail to narrow, e.g. /assign list smith")
	}
	if len(match) == 0 {
		card.Lines = []string{"no agent found"}
	}
	if len(groups) > 0 {
		more := ""
		if len(groups) > maxGroupsShown {
			more = fmt.Sprintf(" and %d more", len(groups)-maxGroupsShown)
			groups = groups[:maxGroupsShown]
		}
		card.Fields = append(card.Fields, Field{Label: "Groups", Value: strings.Join(groups, ", ") + more})
	}
	if truncated {
		card.Notes = append(card.Notes, fmt.Sprintf("read the first %d agents of the desk only", maxAgentsRead))
	}
	card.Notes = append(card.Notes, "assign with /assign N e-mail, /assign N @person or /assign N me")
	return Reply{Text: card.Title, Card: card}, nil
}

// sharesWorkspace: an agent of the caller's workspaces (either without
// workspaces: yes).
func sharesWorkspace(caller, a *sdclient.Agent) bool {
	if len(caller.WorkspaceIDs) == 0 || len(a.WorkspaceIDs) == 0 {
		return true
	}
	for _, ws := range a.WorkspaceIDs {
		if slices.Contains(caller.WorkspaceIDs, ws) {
			return true
		}
	}
	return false
}

// agentList is the desk's agents sorted by name, cached for ten minutes.
func (r *Router) agentList(ctx context.Context) ([]*sdclient.Agent, bool, error) {
	now := r.now()
	if l, ok := fresh(r, &r.agentsList, now, 10*time.Minute); ok {
		return l.v.agents, l.v.more, nil
	}
	var v agentPage
	err := r.retrying(ctx, true, func(ctx context.Context) error {
		var err error
		v.agents, v.more, err = r.desk.Agents(ctx, maxAgentsRead)
		return err
	})
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list agents: %w", err)
	}
	slices.SortFunc(v.agents, func(a, b *sdclient.Agent) int {
		return strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name()))
	})
	keep(r, &r.agentsList, v, now)
	return v.agents, v.more, nil
}

type agentPage struct {
	agents []*sdclient.Agent
	more   bool
}

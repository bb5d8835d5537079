package bot

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

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
	var total int
	var err error
	if sq.whole != "" {
		found, total, err = search(sq.whole, want)
	} else {
		found, total, err = searchParts(search, sq, want)
	}
	if err != nil {
		return nil, 0, err
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

// deskSearch runs one filter query at the desk: at most limit tickets
// and the total.
type deskSearch func(q string, limit int) ([]*sdclient.Ticket, int, error)

// searchParts runs a query split into parts (the caller's own tickets and
// the chunks of their groups) and merges the answers; the total counts a
// ticket in two parts once.
func searchParts(search deskSearch, sq scopedQuery, want int) ([]*sdclient.Ticket, int, error) {
	var m partMerge
	mine, nMine, err := search(sq.mine, minePage)
	if err != nil {
		return nil, 0, err
	}
	total := nMine
	m.add(mine, nMine)
	for _, ch := range sq.chunks {
		ts, n, err := search(ch.query, want)
		if err != nil {
			return nil, 0, err
		}
		m.add(ts, n)
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
	return m.merged(), total, nil
}

// partMerge merges the answers of the parts of a query. Each part answers
// with its first tickets in the desk's order; the merge is the desk's
// order of the union up to the horizon, the earliest last ticket of a part
// that has more. (A part cut at listLimit leaves listLimit tickets before
// its horizon; only a desk page smaller than that shortens the list.)
type partMerge struct {
	found   []*sdclient.Ticket
	byID    map[int64]bool
	horizon *sdclient.Ticket
	none    bool // a part has tickets but answered with none
}

// add takes a part's answer: ts of its n tickets.
func (m *partMerge) add(ts []*sdclient.Ticket, n int) {
	if m.byID == nil {
		m.byID = map[int64]bool{}
	}
	for _, t := range ts {
		if !m.byID[t.ID] {
			m.byID[t.ID] = true
			m.found = append(m.found, t)
		}
	}
	switch {
	case len(ts) >= n:
	case len(ts) == 0:
		m.none = true
	case m.horizon == nil || deskOrder(ts[len(ts)-1], m.horizon) < 0:
		m.horizon = ts[len(ts)-1]
	}
}

// merged is the union in the desk's order, up to the horizon.
func (m *partMerge) merged() []*sdclient.Ticket {
	found := m.found
	slices.SortFunc(found, deskOrder)
	switch {
	case m.none:
		return nil
	case m.horizon != nil:
		i := slices.IndexFunc(found, func(t *sdclient.Ticket) bool { return deskOrder(t, m.horizon) > 0 })
		if i >= 0 {
			found = found[:i]
		}
	}
	return found
}

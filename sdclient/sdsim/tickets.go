package sdsim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

// listWindow is how far back GET /tickets looks without updated_since: the
// real desk lists only tickets created in the last 30 days.
const listWindow = 30 * 24 * time.Hour

var (
	viewIncludes = []string{"assets", "conversations", "requester", "requested_for", "stats", "problem", "tags", "related_tickets"}
	listIncludes = []string{"conversations", "requester", "requested_for", "stats"}
	listPresets  = []string{"new_and_my_open", "watching", "spam", "deleted"}
	listOrders   = []string{"created_at", "updated_at", "due_by", "status", "priority"}
	ticketTypes  = []string{"Incident", "Service Request", "Alert"}
	// validSources are the real desk's source codes (custom ones are >= 1001).
	validSources = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 18}

	ticketWritable = []string{
		"subject", "description", "email", "name", "phone", "requester_id", "requested_for_id",
		"priority", "status", "source", "urgency", "impact", "group_id", "responder_id",
		"department_id", "type", "tags", "category", "sub_category", "item_category",
		"custom_fields", "due_by", "fr_due_by", "cc_emails", "workspace_id",
	}
)

// ---- view / list -------------------------------------------------------

func (c *call) includes(allowed []string) ([]string, *reply) {
	s := c.q.Get("include")
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allowed, p) {
			r := invalidValue("include", "It should be one of these values: '"+strings.Join(allowed, ",")+"'")
			return nil, &r
		}
		out = append(out, p)
	}
	return out, nil
}

func (st *state) person(id int64) *json.RawMessage {
	var p *personWire
	if r, ok := st.requesters.get(id); ok {
		p = &personWire{ID: r.ID, Name: r.Name(), Email: r.PrimaryEmail, Mobile: r.MobilePhoneNumber, Phone: r.WorkPhoneNumber}
	} else if a, ok := st.agents.get(id); ok {
		p = &personWire{ID: a.ID, Name: a.Name(), Email: a.Email, Mobile: a.MobilePhoneNumber, Phone: a.WorkPhoneNumber}
	}
	raw := json.RawMessage("null")
	if p != nil {
		raw, _ = json.Marshal(p)
	}
	return &raw
}

func (st *state) userEmail(id int64) string {
	if r, ok := st.requesters.get(id); ok {
		return r.PrimaryEmail
	}
	if a, ok := st.agents.get(id); ok {
		return a.Email
	}
	return ""
}

func (st *state) isAgent(id int64) bool { _, ok := st.agents.get(id); return ok }

func (st *state) isUser(id int64) bool {
	_, r := st.requesters.get(id)
	_, a := st.agents.get(id)
	return r || a
}

// render turns a ticket into its wire form with the asked-for embeds.
func (st *state) render(t *Ticket, inc []string) *ticketWire {
	w := t.wire()
	for _, i := range inc {
		switch i {
		case "conversations":
			convs := []conversationWire{}
			for _, id := range st.convsByTicket[t.ID] {
				if len(convs) == 10 { // the desk embeds the first 10
					break
				}
				convs = append(convs, st.convs[id].wire())
			}
			w.Conversations = &convs
		case "requester":
			w.Requester = st.person(t.RequesterID)
		case "requested_for":
			if t.RequestedForID != 0 {
				w.RequestedFor = st.person(t.RequestedForID)
			} else {
				raw := json.RawMessage("null")
				w.RequestedFor = &raw
			}
		case "stats":
			s := &statsWire{
				FirstRespondedAt: ts(t.FirstRespondedAt), AgentRespondedAt: ts(t.FirstRespondedAt),
				ResolvedAt: ts(t.ResolvedAt), ClosedAt: ts(t.ClosedAt), StatusUpdatedAt: ts(t.UpdatedAt),
			}
			if t.Status == 3 {
				s.PendingSince = ts(t.UpdatedAt)
			}
			w.Stats = s
		case "problem":
			raw := json.RawMessage("null")
			if p, ok := st.problems.get(t.ProblemID); ok {
				raw, _ = json.Marshal(p)
			}
			w.Problem = &raw
		case "assets":
			as := []*Asset{}
			for _, id := range t.AssetDisplayIDs {
				if a, ok := st.assets.get(id); ok {
					as = append(as, a)
				}
			}
			w.Assets = &as
		case "related_tickets":
			w.RelatedTickets = &relatedWire{ParentID: orNull(t.ParentID), ChildIDs: nonNil(t.ChildIDs)}
		}
	}
	return w
}

func (c *call) ticket() (*Ticket, *reply) {
	if id, ok := c.id(0); ok {
		if t, ok := c.st.tickets[id]; ok {
			return t, nil
		}
	}
	r := notFound("ticket " + c.params[0])
	return nil, &r
}

// viewTicket: GET /tickets/{id}; deleted tickets are still served (deleted:true).
func viewTicket(c *call) reply {
	t, rep := c.ticket()
	if rep != nil {
		return *rep
	}
	inc, rep := c.includes(viewIncludes)
	if rep != nil {
		return *rep
	}
	return success(map[string]any{"ticket": c.st.render(t, inc)})
}

// workspaceParam reads workspace_id: one existing workspace, the primary
// one when absent.
func (c *call) workspaceParam() (int64, *reply) {
	s := c.q.Get("workspace_id")
	if s == "" {
		return c.st.primaryWorkspace(), nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || !c.st.workspace(id) {
		r := invalidValue("workspace_id", "It should be the id of one workspace of this account (one workspace per request)")
		return 0, &r
	}
	return id, nil
}

// listTickets: GET /tickets with the presets, updated_since, ordering,
// paging and list embeds. Without updated_since only tickets created in
// the last 30 days are listed; deleted and spam tickets only with their
// preset.
func listTickets(c *call) reply {
	page, per, rep := c.pageParams()
	if rep != nil {
		return *rep
	}
	inc, rep := c.includes(listIncludes)
	if rep != nil {
		return *rep
	}
	p, rep := c.ticketListParams()
	if rep != nil {
		return *rep
	}
	key := fmt.Sprintf("list|%s|%d|%s|%s|%s|%d|%d|%s|%s|%d", p.preset, p.since.Unix(), p.orderBy, p.orderType, p.email, p.requesterID, p.ws, p.typ, c.now.Format(time.RFC3339), c.agent.ID)
	items := c.st.cached(key, 0, func() []*Ticket {
		cutoff := c.now.Add(-listWindow)
		var out []*Ticket
		for _, id := range c.st.ticketIDs {
			if t := c.st.tickets[id]; p.lists(c, t, cutoff) {
				out = append(out, t)
			}
		}
		sortTickets(out, p.orderBy, p.orderType == "desc")
		return out
	})
	pg, next := paginate(c, items, page, per)
	wires := make([]*ticketWire, len(pg))
	for i, t := range pg {
		wires[i] = c.st.render(t, inc)
	}
	return reply{status: http.StatusOK, body: map[string]any{"tickets": wires}, next: next}
}

// ticketList is what GET /tickets selects and how it orders.
type ticketList struct {
	preset      string    // filter=
	since       time.Time // updated_since=; zero: the last 30 days' tickets
	orderBy     string
	orderType   string // asc or desc
	ws          int64
	requesterID int64
	email       string // lower case
	typ         string
}

// ticketListParams reads and checks GET /tickets' query.
func (c *call) ticketListParams() (ticketList, *reply) {
	p := ticketList{
		preset:    c.q.Get("filter"),
		orderBy:   cmp.Or(c.q.Get("order_by"), "created_at"),
		orderType: cmp.Or(c.q.Get("order_type"), "desc"),
		email:     strings.ToLower(c.q.Get("email")),
		typ:       c.q.Get("type"),
	}
	bad := func(field, msg string) (ticketList, *reply) {
		r := invalidValue(field, msg)
		return ticketList{}, &r
	}
	if p.preset != "" && !slices.Contains(listPresets, p.preset) {
		return bad("filter", "It should be one of these values: '"+strings.Join(listPresets, ",")+"'")
	}
	if s := c.q.Get("updated_since"); s != "" {
		t, err := parseTime(s)
		if err != nil {
			return bad("updated_since", "It should be in the 'valid date-time' format (YYYY-MM-DDTHH:MM:SSZ)")
		}
		p.since = t
	}
	if !slices.Contains(listOrders, p.orderBy) {
		return bad("order_by", "It should be one of these values: '"+strings.Join(listOrders, ",")+"'")
	}
	if p.orderType != "asc" && p.orderType != "desc" {
		return bad("order_type", "It should be one of these values: 'asc,desc'")
	}
	ws, rep := c.workspaceParam()
	if rep != nil {
		return ticketList{}, rep
	}
	p.ws = ws
	if s := c.q.Get("requester_id"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad("requester_id", "It should be a/an Positive Integer")
		}
		p.requesterID = n
	}
	return p, nil
}

// lists reports whether the list holds t: in its workspace and time span,
// shown by its preset, and matching its requester and type.
func (p ticketList) lists(c *call, t *Ticket, cutoff time.Time) bool {
	if t.WorkspaceID != p.ws {
		return false
	}
	if !p.since.IsZero() {
		if t.UpdatedAt.Before(p.since) {
			return false
		}
	} else if t.CreatedAt.Before(cutoff) {
		return false
	}
	if !p.presetShows(c, t) {
		return false
	}
	if p.requesterID != 0 && t.RequesterID != p.requesterID {
		return false
	}
	if p.email != "" && !strings.EqualFold(c.st.userEmail(t.RequesterID), p.email) {
		return false
	}
	return p.typ == "" || t.Type == p.typ
}

// presetShows reports whether the list's preset shows t: deleted and spam
// tickets only with their own preset.
func (p ticketList) presetShows(c *call, t *Ticket) bool {
	switch p.preset {
	case "deleted":
		return t.Deleted
	case "spam":
		return t.Spam && !t.Deleted
	}
	if t.Deleted || t.Spam {
		return false
	}
	switch p.preset {
	case "new_and_my_open":
		return t.Status == 2 && (t.ResponderID == 0 || t.ResponderID == c.agent.ID)
	case "watching":
		return slices.Contains(t.WatcherIDs, c.agent.ID)
	}
	return true
}

func sortTickets(ts []*Ticket, by string, desc bool) {
	key := func(t *Ticket) int64 {
		switch by {
		case "updated_at":
			return t.UpdatedAt.Unix()
		case "due_by":
			if t.DueBy.IsZero() {
				return 1 << 62
			}
			return t.DueBy.Unix()
		case "status":
			return int64(t.Status)
		case "priority":
			return int64(t.Priority)
		}
		return t.CreatedAt.Unix()
	}
	slices.SortStableFunc(ts, func(a, b *Ticket) int {
		r := cmp.Compare(key(a), key(b))
		if r == 0 {
			r = cmp.Compare(a.ID, b.ID)
		}
		if desc {
			return -r
		}
		return r
	})
}

// ---- search ------------------------------------------------------------

type searchCache struct {
	version uint64
	entries map[string][]*Ticket
}

// cached memoises an ordered result until the desk changes, so that paging
// through a result costs one scan. lagged results are not cached.
func (st *state) cached(key string, lag time.Duration, build func() []*Ticket) []*Ticket {
	if lag > 0 {
		return build()
	}
	if st.cache.version != st.version || st.cache.entries == nil || len(st.cache.entries) > 64 {
		st.cache = searchCache{version: st.version, entries: map[string][]*Ticket{}}
	}
	if r, ok := st.cache.entries[key]; ok {
		return r
	}
	r := build()
	st.cache.entries[key] = r
	return r
}

// indexed is the version of a ticket the search index holds at cutoff, or
// nil when the index does not know the ticket yet.
func (st *state) indexed(id int64, cutoff time.Time) *Ticket {
	h := st.history[id]
	if len(h) == 0 {
		return st.tickets[id]
	}
	var v *Ticket
	for _, x := range h {
		if !x.UpdatedAt.After(cutoff) {
			v = x
		}
	}
	return v
}

func (st *state) customKinds() map[string]filter.Kind {
	m := make(map[string]filter.Kind, len(st.customFields))
	for _, f := range st.customFields {
		m[f.Name] = f.Kind.filterKind()
	}
	return m
}

func (k FieldKind) filterKind() filter.Kind {
	switch k {
	case FieldNumber:
		return filter.KindNumber
	case FieldBool:
		return filter.KindBool
	case FieldDate:
		return filter.KindDate
	}
	return filter.KindString
}

// ticketRecord exposes a ticket to filter evaluation under the filter
// language's field names (agent_id is responder_id, tag matches tags).
type ticketRecord struct {
	t  *Ticket
	st *state
}

func num(n int64) []filter.Value {
	if n == 0 {
		return nil
	}
	return []filter.Value{filter.Number(n)}
}

func date(t time.Time) []filter.Value {
	if t.IsZero() {
		return nil
	}
	return []filter.Value{filter.DateTime(t)}
}

func text(s string) []filter.Value {
	if s == "" {
		return nil
	}
	return []filter.Value{filter.String(s)}
}

// FilterValues gives a ticket's values for a filter field.
func (r ticketRecord) FilterValues(field string) []filter.Value {
	t := r.t
	switch field {
	case "status":
		return num(int64(t.Status))
	case "priority":
		return num(int64(t.Priority))
	case "source":
		return num(int64(t.Source))
	case "urgency":
		return num(int64(t.Urgency))
	case "impact":
		return num(int64(t.Impact))
	case "agent_id", "responder_id":
		return num(t.ResponderID)
	case "group_id":
		return num(t.GroupID)
	case "department_id":
		return num(t.DepartmentID)
	case "requester_id":
		return num(t.RequesterID)
	case "requested_for_id":
		return num(t.RequestedForID)
	case "workspace_id":
		return num(t.WorkspaceID)
	case "type":
		return text(t.Type)
	case "category":
		return text(t.Category)
	case "sub_category":
		return text(t.SubCategory)
	case "email":
		return text(r.st.userEmail(t.RequesterID))
	case "tag":
		vs := make([]filter.Value, len(t.Tags))
		for i, s := range t.Tags {
			vs[i] = filter.String(s)
		}
		return vs
	case "created_at":
		return date(t.CreatedAt)
	case "updated_at":
		return date(t.UpdatedAt)
	case "due_by":
		return date(t.DueBy)
	case "fr_due_by":
		return date(t.FrDueBy)
	}
	return customValue(t.CustomFields[field])
}

func customValue(v any) []filter.Value {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		if t, err := parseTime(x); err == nil {
			return []filter.Value{filter.DateTime(t)}
		}
		return []filter.Value{filter.String(x)}
	case bool:
		return []filter.Value{filter.Bool(x)}
	case float64:
		return []filter.Value{filter.Number(int64(x))}
	case int:
		return []filter.Value{filter.Number(int64(x))}
	case int64:
		return []filter.Value{filter.Number(x)}
	case time.Time:
		return []filter.Value{filter.DateTime(x)}
	}
	return nil
}

// parseQuery validates the query parameter of a filter endpoint: present,
// in outer double quotes, at most filter.MaxLen characters inside them,
// well formed and naming only known fields.
func (c *call) parseQuery() (filter.Expr, *reply) {
	q, present := decodeFilterQuery(c.r.URL.RawQuery)
	if !present || q == "" {
		r := invalid(fieldError{"query", "Mandatory attribute missing: query=\"<expression>\"", "missing_field"})
		return nil, &r
	}
	if inner := len(strings.TrimSuffix(strings.TrimPrefix(q, `"`), `"`)); inner > filter.MaxLen {
		r := invalidValue("query", fmt.Sprintf("query is %d characters long; at most %d are allowed", inner, filter.MaxLen))
		return nil, &r
	}
	e, err := filter.ParseQuoted(q)
	if err != nil {
		r := invalidValue("query", err.Error())
		return nil, &r
	}
	if err := filter.TicketSchema(c.st.customKinds()).Validate(e); err != nil {
		r := invalidValue("query", "[:invalid_field] "+err.Error())
		return nil, &r
	}
	return e, nil
}

// filterPage reads page for the filter endpoints (and enforces the cap).
func (c *call) filterPage() (int, *reply) {
	page := 1
	if s := c.q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			r := invalidValue("page", "It should be a/an Positive Integer")
			return 0, &r
		}
		page = n
	}
	if capPages := c.d.filterPageCap; capPages > 0 && page > capPages {
		// Freshdesk's own words past its search's 10 pages.
		r := invalidValue("page", fmt.Sprintf("You cannot access tickets beyond the %s page", ordinal(capPages)))
		return 0, &r
	}
	return page, nil
}

// ordinal writes n as 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// filterArgs reads what every filter endpoint takes: the query, the
// workspace and the page.
func (c *call) filterArgs() (filter.Expr, int64, int, *reply) {
	e, rep := c.parseQuery()
	if rep != nil {
		return nil, 0, 0, rep
	}
	ws, rep := c.workspaceParam()
	if rep != nil {
		return nil, 0, 0, rep
	}
	page, rep := c.filterPage()
	if rep != nil {
		return nil, 0, 0, rep
	}
	return e, ws, page, nil
}

// filterWindow is the part of a filter result on page, in pages of the
// configured size.
func filterWindow[T any](c *call, items []T, page int) []T {
	per := c.d.filterPageSize
	start := min((page-1)*per, len(items))
	return items[start:min(start+per, len(items))]
}

// filterTickets: GET /tickets/filter. One workspace per request, pages of
// the configured size ordered by created_at descending, {"tickets","total"},
// no Link header (page until total), answered from the lagging index.
func filterTickets(c *call) reply {
	e, ws, page, rep := c.filterArgs()
	if rep != nil {
		return *rep
	}
	lag := c.st.indexLag
	cutoff := c.now.Add(-lag)
	items := c.st.cached(fmt.Sprintf("filter|%d|%s", ws, e), lag, func() []*Ticket {
		var out []*Ticket
		for _, id := range c.st.ticketIDs {
			t := c.st.tickets[id]
			if lag > 0 {
				if t = c.st.indexed(id, cutoff); t == nil {
					continue
				}
			}
			if t.WorkspaceID != ws || t.Deleted || t.Spam {
				continue
			}
			if e.Eval(ticketRecord{t, c.st}) {
				out = append(out, t)
			}
		}
		sortTickets(out, "created_at", true)
		return out
	})
	window := filterWindow(c, items, page)
	wires := make([]*ticketWire, 0, len(window))
	for _, t := range window {
		wires = append(wires, t.wire())
	}
	return success(map[string]any{"tickets": wires, "total": len(items)})
}

// ---- create / update / delete -------------------------------------------

// applyTicket applies a create or update body to t and returns every fault
// found, or nil; an unknown email on create makes a new requester. Faults
// come in the order of the phases: fields not writable, texts and dates,
// codes, links to other records, workspace, custom fields, e-mail.
func (c *call) applyTicket(t *Ticket, create bool) []fieldError {
	f := &fields{body: c.body}
	f.only(ticketWritable...)
	if len(f.errs) > 0 {
		return f.errs
	}
	st := c.st
	applyTicketTexts(f, t)
	st.applyTicketCodes(f, t)
	st.applyTicketLinks(f, t)
	if f.has("workspace_id") {
		st.applyTicketWorkspace(f, t, create)
	}
	if f.has("custom_fields") {
		st.applyTicketCustom(f, t)
	}
	var email string
	if f.has("email") {
		f.str("email", &email)
		if email != "" && !strings.Contains(email, "@") {
			f.fail("email", "It should be in the 'valid email address' format", "invalid_value")
		}
	}
	if create && t.RequesterID == 0 && email == "" {
		f.fail("requester_id", "Mandatory attribute missing: send either email or requester_id", "missing_field")
		f.fail("email", "Mandatory attribute missing: send either email or requester_id", "missing_field")
	}
	if len(f.errs) > 0 {
		return f.errs
	}
	if email != "" && !f.has("requester_id") {
		t.RequesterID = c.requesterFor(email)
	}
	return nil
}

// applyTicketTexts applies the texts, tags, e-mail lists, dates and type.
func applyTicketTexts(f *fields, t *Ticket) {
	f.str("subject", &t.Subject)
	f.str("description", &t.Description)
	f.str("category", &t.Category)
	f.str("sub_category", &t.SubCategory)
	f.str("item_category", &t.ItemCategory)
	f.strs("tags", &t.Tags)
	f.strs("cc_emails", &t.CCEmails)
	f.time("due_by", &t.DueBy)
	f.time("fr_due_by", &t.FrDueBy)
	var s string
	if f.has("type") && f.str("type", &s) {
		if !slices.Contains(ticketTypes, s) {
			f.fail("type", "It should be one of these values: '"+strings.Join(ticketTypes, ",")+"'", "invalid_value")
		} else {
			t.Type = s
		}
	}
}

// applyTicketCodes applies the numeric codes: status, priority, source,
// urgency and impact.
func (st *state) applyTicketCodes(f *fields, t *Ticket) {
	var n int
	if f.has("status") && f.num("status", &n) {
		if !st.validStatus(n) {
			ids := make([]string, len(st.statuses))
			for i, s := range st.statuses {
				ids[i] = strconv.Itoa(s.ID)
			}
			f.fail("status", "It should be one of these values: '"+strings.Join(ids, ",")+"'", "invalid_value")
		} else {
			t.Status = n
		}
	}
	if f.has("priority") && f.num("priority", &n) {
		if n < 1 || n > 4 {
			f.fail("priority", "It should be one of these values: '1,2,3,4'", "invalid_value")
		} else {
			t.Priority = n
		}
	}
	if f.has("source") && f.num("source", &n) {
		if !slices.Contains(validSources, n) && n < 1001 {
			f.fail("source", "It should be one of the source ids of this account", "invalid_value")
		} else {
			t.Source = n
		}
	}
	applyScale(f, "urgency", &t.Urgency)
	applyScale(f, "impact", &t.Impact)
}

// applyScale applies a 1-3 code that null clears (urgency, impact).
func applyScale(f *fields, k string, dst *int) {
	if !f.has(k) {
		return
	}
	var n int
	if f.isNull(k) {
		n = 0
	} else if !f.num(k, &n) {
		return
	} else if n < 1 || n > 3 {
		f.fail(k, "It should be one of these values: '1,2,3'", "invalid_value")
		return
	}
	*dst = n
}

// applyTicketLinks applies the ids of the records a ticket links to, each
// checked to exist (0, from null, unlinks where the desk allows it).
func (st *state) applyTicketLinks(f *fields, t *Ticket) {
	links := []struct {
		field string
		dst   *int64
		ok    func(id int64) bool
		what  string
	}{
		{"responder_id", &t.ResponderID, func(id int64) bool { return id == 0 || st.isAgent(id) }, "agent"},
		{"group_id", &t.GroupID, func(id int64) bool { _, ok := st.groups.get(id); return id == 0 || ok }, "group"},
		{"department_id", &t.DepartmentID, func(id int64) bool { _, ok := st.departments.get(id); return id == 0 || ok }, "department"},
		{"requested_for_id", &t.RequestedForID, func(id int64) bool { return id == 0 || st.isUser(id) }, "requester"},
		{"requester_id", &t.RequesterID, st.isUser, "requester"},
	}
	for _, l := range links {
		var id int64
		if !f.has(l.field) || !f.id(l.field, &id) {
			continue
		}
		if !l.ok(id) {
			f.fail(l.field, "There is no "+l.what+" with this id", "invalid_value")
			continue
		}
		*l.dst = id
	}
}

// applyTicketWorkspace applies workspace_id, which only a create may set.
func (st *state) applyTicketWorkspace(f *fields, t *Ticket, create bool) {
	var id int64
	if !create {
		f.fail("workspace_id", "workspace_id cannot be updated; move the ticket with PUT /tickets/{id}/move_workspace", "readonly_field")
	} else if f.id("workspace_id", &id) {
		if !st.workspace(id) {
			f.fail("workspace_id", "There is no workspace with this id", "invalid_value")
		} else {
			t.WorkspaceID = id
		}
	}
}

// applyTicketCustom applies custom_fields, each checked against its
// field's kind and choices.
func (st *state) applyTicketCustom(f *fields, t *Ticket) {
	var cf map[string]any
	if !f.decode("custom_fields", &cf, "key/value object") {
		return
	}
	if t.CustomFields == nil {
		t.CustomFields = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(cf)) {
		if msg := st.checkCustom(k, cf[k]); msg != "" {
			f.fail(k, msg, "invalid_value")
			continue
		}
		t.CustomFields[k] = cf[k]
	}
}

// requesterFor finds the user with this e-mail, creating a requester when
// there is none (as the desk does for an unknown email on create).
func (c *call) requesterFor(email string) int64 {
	for _, r := range c.st.requesters.all() {
		if strings.EqualFold(r.PrimaryEmail, email) {
			return r.ID
		}
	}
	for _, a := range c.st.agents.all() {
		if strings.EqualFold(a.Email, email) {
			return a.ID
		}
	}
	var name string
	_ = json.Unmarshal(c.body["name"], &name)
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	first, last, _ := strings.Cut(name, " ")
	return c.st.addRequester(Requester{FirstName: first, LastName: last, PrimaryEmail: email}, c.now).ID
}

func (st *state) checkCustom(name string, v any) string {
	for _, f := range st.customFields {
		if f.Name != name {
			continue
		}
		if v == nil {
			return ""
		}
		switch f.Kind {
		case FieldNumber:
			// A fraction would be stored but then match its integer part.
			if n, ok := v.(float64); !ok || n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return "It should be a/an Integer"
			}
		case FieldBool:
			if _, ok := v.(bool); !ok {
				return "It should be a/an Boolean"
			}
		case FieldDate:
			s, ok := v.(string)
			if _, err := parseTime(s); !ok || err != nil {
				return "It should be in the 'valid date' format (YYYY-MM-DD)"
			}
		default:
			s, ok := v.(string)
			if !ok {
				return "It should be a/an String"
			}
			if len(f.Choices) > 0 && !slices.Contains(f.Choices, s) {
				return "It should be one of these values: '" + strings.Join(f.Choices, ",") + "'"
			}
		}
		return ""
	}
	return "Unexpected/invalid field in request: no custom field named " + strconv.Quote(name)
}

func (st *state) touchStatus(t *Ticket, old int, now time.Time) {
	if t.Status == old {
		return
	}
	switch t.Status {
	case 4:
		t.ResolvedAt = now
	case 5:
		if t.ResolvedAt.IsZero() {
			t.ResolvedAt = now
		}
		t.ClosedAt = now
	}
}

// createTicket: POST /tickets → 201 + Location.
func createTicket(c *call) reply {
	t := &Ticket{Status: 2, Priority: 1, Source: 2, Type: "Incident", WorkspaceID: c.st.primaryWorkspace()}
	if errs := c.applyTicket(t, true); errs != nil {
		return invalid(errs...)
	}
	t.ID = 0
	t.CreatedAt, t.UpdatedAt = c.now, c.now
	if t.DueBy.IsZero() {
		t.DueBy = c.now.Add(time.Duration(5-t.Priority) * 24 * time.Hour)
	}
	if t.FrDueBy.IsZero() {
		t.FrDueBy = c.now.Add(time.Duration(5-t.Priority) * 4 * time.Hour)
	}
	c.st.touchStatus(t, 2, c.now)
	t = c.st.addTicket(t, c.now)
	return created(map[string]any{"ticket": c.st.render(t, nil)}, "/tickets/"+strconv.FormatInt(t.ID, 10))
}

// saveTicket stores a changed copy: updated_at moves, the index remembers.
func (c *call) saveTicket(t *Ticket) {
	t.UpdatedAt = c.now
	c.st.tickets[t.ID] = t
	c.st.remember(t, c.now)
	c.st.version++
}

// updateTicket: PUT /tickets/{id}. Tags replace the list; responder_id null
// unassigns; status must be one of the status field's choices.
func updateTicket(c *call) reply {
	cur, rep := c.ticket()
	if rep != nil {
		return *rep
	}
	t := cur.clone()
	if errs := c.applyTicket(t, false); errs != nil {
		return invalid(errs...)
	}
	c.st.touchStatus(t, cur.Status, c.now)
	c.saveTicket(t)
	return success(map[string]any{"ticket": c.st.render(t, nil)})
}

// deleteTicket: DELETE /tickets/{id} is a soft delete → 204.
func deleteTicket(c *call) reply { return setDeleted(c, true) }

// restoreTicket: PUT /tickets/{id}/restore → 204.
func restoreTicket(c *call) reply { return setDeleted(c, false) }

func setDeleted(c *call, deleted bool) reply {
	cur, rep := c.ticket()
	if rep != nil {
		return *rep
	}
	t := cur.clone()
	t.Deleted = deleted
	c.saveTicket(t)
	return noContent()
}

// ---- conversations -----------------------------------------------------

func listConversations(c *call) reply {
	t, rep := c.ticket()
	if rep != nil {
		return *rep
	}
	var out []conversationWire
	for _, id := range c.st.convsByTicket[t.ID] {
		out = append(out, c.st.convs[id].wire())
	}
	return listPage(c, "conversations", nonNil(out))
}

func (c *call) conversationUser(f *fields) int64 {
	var uid int64
	if f.has("user_id") && f.id("user_id", &uid) && uid != 0 && !c.st.isUser(uid) {
		f.fail("user_id", "There is no user with this id", "invalid_value")
	}
	if uid == 0 {
		uid = c.agent.ID
	}
	return uid
}

func requireBody(f *fields) string {
	var body string
	if !f.has("body") {
		f.fail("body", "Mandatory attribute missing", "missing_field")
	} else if f.str("body", &body) && strings.TrimSpace(body) == "" {
		f.fail("body", "It should not be blank", "invalid_value")
	}
	return body
}

// startConversation reads what a reply and a note share: the ticket, a
// body of only the allowed fields, its text and its author. Faults of the
// text and author stay in f, reported with the caller's own.
func (c *call) startConversation(allowed ...string) (cur *Ticket, f *fields, body string, uid int64, rep *reply) {
	cur, rep = c.ticket()
	if rep != nil {
		return nil, nil, "", 0, rep
	}
	f = &fields{body: c.body}
	f.only(allowed...)
	if len(f.errs) > 0 {
		r := invalid(f.errs...)
		return nil, nil, "", 0, &r
	}
	return cur, f, requireBody(f), c.conversationUser(f), nil
}

// createReply: POST /tickets/{id}/reply → a public conversation (source 0)
// e-mailed to the requester.
func createReply(c *call) reply {
	cur, f, body, uid, rep := c.startConversation("body", "from_email", "user_id", "cc_emails", "bcc_emails", "attachments")
	if rep != nil {
		return *rep
	}
	var from, cc, bcc = "", []string{}, []string{}
	if f.str("from_email", &from) && from != "" && !strings.Contains(from, SupportEmail) {
		f.fail("from_email", "It should be one of the support e-mail addresses of this account ("+SupportEmail+")", "invalid_value")
	}
	f.strs("cc_emails", &cc)
	f.strs("bcc_emails", &bcc)
	if len(f.errs) > 0 {
		return invalid(f.errs...)
	}
	var to []string
	if e := c.st.userEmail(cur.RequesterID); e != "" {
		to = []string{e}
	}
	conv := c.st.addConversation(Conversation{
		TicketID: cur.ID, UserID: uid, Body: body, Source: ConversationSourceReply,
		SupportEmail: SupportEmail, FromEmail: `"Service Desk" <` + SupportEmail + ">",
		ToEmails: nonNil(to), CCEmails: cc, BCCEmails: bcc, CreatedAt: c.now,
	}, c.now)
	t := cur.clone()
	if t.FirstRespondedAt.IsZero() && c.st.isAgent(uid) {
		t.FirstRespondedAt = c.now
	}
	c.saveTicket(t)
	return reply{status: http.StatusCreated, body: map[string]any{"conversation": conv.wire()}}
}

// createNote: POST /tickets/{id}/notes → a note (source 2), private unless
// "private": false.
func createNote(c *call) reply {
	cur, f, body, uid, rep := c.startConversation("body", "private", "incoming", "notify_emails", "user_id", "attachments")
	if rep != nil {
		return *rep
	}
	private, incoming, notify := true, false, []string{}
	f.boolean("private", &private)
	f.boolean("incoming", &incoming)
	f.strs("notify_emails", &notify)
	if len(f.errs) > 0 {
		return invalid(f.errs...)
	}
	conv := c.st.addConversation(Conversation{
		TicketID: cur.ID, UserID: uid, Body: body, Source: ConversationSourceNote,
		Private: private, Incoming: incoming, ToEmails: notify, CreatedAt: c.now,
	}, c.now)
	c.saveTicket(cur.clone())
	return reply{status: http.StatusCreated, body: map[string]any{"conversation": conv.wire()}}
}

// updateConversation: PUT /conversations/{id}. Only notes may be edited
// (body only); a reply is answered 405 with Allow: DELETE.
func updateConversation(c *call) reply {
	id, _ := c.id(0)
	conv, ok := c.st.convs[id]
	if !ok {
		return notFound("conversation " + c.params[0])
	}
	if conv.Source != ConversationSourceNote {
		return reply{status: http.StatusMethodNotAllowed, allow: "DELETE",
			body: codeBody("method_not_allowed", "only notes can be edited; conversation "+c.params[0]+" is a reply")}
	}
	f := &fields{body: c.body}
	f.only("body")
	if len(f.errs) > 0 {
		return invalid(f.errs...)
	}
	body := requireBody(f)
	if len(f.errs) > 0 {
		return invalid(f.errs...)
	}
	n := *conv
	if c.st.stripHTMLComments {
		body = stripHTMLComments(body)
	}
	n.Body, n.UpdatedAt = body, c.now
	c.st.convs[id] = &n
	if t, ok := c.st.tickets[n.TicketID]; ok {
		c.saveTicket(t.clone())
	}
	c.st.version++
	return success(map[string]any{"conversation": n.wire()})
}

// deleteConversation: DELETE /conversations/{id} → 204 (replies and notes).
func deleteConversation(c *call) reply {
	id, _ := c.id(0)
	conv, ok := c.st.convs[id]
	if !ok {
		return notFound("conversation " + c.params[0])
	}
	delete(c.st.convs, id)
	ids := c.st.convsByTicket[conv.TicketID]
	if i := slices.Index(ids, id); i >= 0 {
		c.st.convsByTicket[conv.TicketID] = slices.Delete(slices.Clone(ids), i, i+1)
	}
	if t, ok := c.st.tickets[conv.TicketID]; ok {
		c.saveTicket(t.clone())
	}
	c.st.version++
	return noContent()
}

// listTimeEntries: GET /tickets/{id}/time_entries.
func listTimeEntries(c *call) reply {
	t, rep := c.ticket()
	if rep != nil {
		return *rep
	}
	return listPage(c, "time_entries", nonNil(c.st.timeEntries[t.ID]))
}

package sdsim

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of a new Desk.
const (
	// DefaultAPIKey authenticates as DefaultAgentID.
	DefaultAPIKey = "sim-api-key"
	// DefaultAgentID is the admin agent every desk starts with. Agent and
	// requester ids start above 2^34 to catch int32 bugs in clients.
	DefaultAgentID int64 = 21000000001
	// DefaultWorkspaceID is the primary workspace every desk starts with.
	DefaultWorkspaceID int64 = 2
	// DefaultFilterPageSize is the page size of GET /tickets/filter: the real
	// API's 30 (the description says 100; see WithFilterPageSize).
	DefaultFilterPageSize = 30
	// SupportEmail is the support address public replies are sent from.
	SupportEmail = "helpdesk@sim.deskbot.test"
)

// Desk is the in-memory service desk. Create one with New.
type Desk struct {
	clock          func() time.Time
	filterPageSize int
	filterPageCap  int

	traffic traffic

	mu sync.Mutex // guards everything below
	st state
}

type state struct {
	keys              map[string]int64
	indexLag          time.Duration
	stripHTMLComments bool // WithHTMLCommentsStripped
	workspaces        []*Workspace
	statuses          []status
	customFields      []CustomField

	tickets   map[int64]*Ticket
	ticketIDs []int64 // ascending
	history   map[int64][]*Ticket

	convs         map[int64]*Conversation
	convsByTicket map[int64][]int64
	timeEntries   map[int64][]*TimeEntry

	agents      table[Agent, *Agent]
	requesters  table[Requester, *Requester]
	groups      table[Group, *Group]
	departments table[Department, *Department]
	assets      table[Asset, *Asset]
	changes     table[Change, *Change]
	problems    table[Problem, *Problem]
	releases    table[Release, *Release]

	catalog catalog

	next struct {
		ticket, conv, user, group, dept, asset, assetDisplay, change, problem, release, timeEntry int64
	}
	version uint64 // bumped on every mutation; keys the search cache
	cache   searchCache
}

type status struct {
	ID            int
	Name          string
	CustomerLabel string
}

// Option configures a Desk in New (and NewServer). Options only record
// their values in the desk's configuration; New applies them.
type Option func(*config)

// config is what the options set, applied by New.
type config struct {
	clock             func() time.Time
	keys              []agentKey // WithAgentKey, in order
	rateLimit         int
	filterPageSize    int
	filterPageCap     int
	stripHTMLComments bool
	indexLag          time.Duration
	latency           time.Duration
	genSeed           int64
	genTickets        int // -1: no generated desk
}

// agentKey is an API key and the agent it authenticates as.
type agentKey struct {
	key     string
	agentID int64
}

// WithClock sets the clock used for every timestamp, the rate-limit window
// and the index lag. Default: time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithAgentKey makes key an API key of the agent agentID (which may be added
// later). Several keys may map to different agents.
func WithAgentKey(key string, agentID int64) Option {
	return func(c *config) { c.keys = append(c.keys, agentKey{key, agentID}) }
}

// WithRateLimit sets the account's budget in requests per minute (sliding
// 60-second window); 0, the default, means unlimited.
func WithRateLimit(perMinute int) Option { return func(c *config) { c.rateLimit = perMinute } }

// WithFilterPageSize sets how many tickets a page of GET /tickets/filter
// holds: 30 by default (the real API), 100 per the description.
func WithFilterPageSize(n int) Option { return func(c *config) { c.filterPageSize = n } }

// WithFilterPageCap makes GET /tickets/filter refuse pages beyond the cap
// as Freshdesk's search refuses its 11th page: 400 with a "page" field
// error ("You cannot access tickets beyond the 10th page"); the total still
// counts every match. 0, the default, means no cap.
func WithFilterPageCap(pages int) Option { return func(c *config) { c.filterPageCap = pages } }

// WithHTMLCommentsStripped makes the desk sanitise note and reply bodies
// the way some help desks do: HTML comments (<!-- ... -->) are removed
// before the conversation is stored. It lets tests show that deskbot's
// crash recovery does not depend on its invisible markers surviving.
func WithHTMLCommentsStripped() Option { return func(c *config) { c.stripHTMLComments = true } }

// WithIndexLag makes GET /tickets/filter and GET /changes/filter answer from
// the state of lag ago, like the real desk's search index.
func WithIndexLag(lag time.Duration) Option { return func(c *config) { c.indexLag = lag } }

// WithLatency delays every response by d.
func WithLatency(latency time.Duration) Option { return func(c *config) { c.latency = latency } }

// WithGenerated seeds the desk with Generate(seed, tickets, clock()).
func WithGenerated(seed int64, tickets int) Option {
	return func(c *config) { c.genSeed, c.genTickets = seed, tickets }
}

// New returns a desk holding one primary workspace, the default admin agent
// (DefaultAgentID, key DefaultAPIKey), the four fixed statuses, the default
// form fields and a small read-only catalogue (solutions, products, vendors,
// canned responses).
func New(opts ...Option) *Desk {
	cfg := config{clock: time.Now, filterPageSize: DefaultFilterPageSize, genTickets: -1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.filterPageSize < 1 {
		cfg.filterPageSize = DefaultFilterPageSize
	}
	d := &Desk{clock: cfg.clock, filterPageSize: cfg.filterPageSize, filterPageCap: cfg.filterPageCap}
	d.traffic.init()
	d.traffic.limit, d.traffic.latency = cfg.rateLimit, cfg.latency
	d.st.init()
	for _, k := range cfg.keys {
		d.st.keys[k.key] = k.agentID
	}
	d.st.stripHTMLComments, d.st.indexLag = cfg.stripHTMLComments, cfg.indexLag
	now := d.now()
	d.AddAgent(Agent{
		ID: DefaultAgentID, FirstName: "Ada", LastName: "Admin", Email: "ada.admin@sim.deskbot.test",
		JobTitle: orNull("Service Desk Administrator"), WorkspaceIDs: []int64{DefaultWorkspaceID},
		Roles: []AgentRole{{RoleID: 1, AssignmentScope: "entire_helpdesk", Groups: []int64{}}},
	})
	d.st.catalog = newCatalog(now)
	if cfg.genTickets >= 0 {
		d.Generate(cfg.genSeed, cfg.genTickets, now)
	}
	return d
}

// init makes the empty state of a new desk: the default key, the primary
// workspace, the fixed statuses and the first ids.
func (st *state) init() {
	st.keys = map[string]int64{DefaultAPIKey: DefaultAgentID}
	st.tickets = map[int64]*Ticket{}
	st.history = map[int64][]*Ticket{}
	st.convs = map[int64]*Conversation{}
	st.convsByTicket = map[int64][]int64{}
	st.timeEntries = map[int64][]*TimeEntry{}
	st.agents.init()
	st.requesters.init()
	st.groups.init()
	st.departments.init()
	st.assets.init()
	st.changes.init()
	st.problems.init()
	st.releases.init()
	st.next.ticket = 1
	st.next.conv = 10000000001
	st.next.user = DefaultAgentID
	st.next.group = 21000100001
	st.next.dept = 21000200001
	st.next.asset = 21000300001
	st.next.assetDisplay = 1
	st.next.change = 1
	st.next.problem = 1
	st.next.release = 1
	st.next.timeEntry = 21000400001
	st.statuses = []status{
		{2, "Open", "Being Processed"},
		{3, "Pending", "Awaiting your Reply"},
		{4, "Resolved", "This ticket has been Resolved"},
		{5, "Closed", "This ticket has been Closed"},
	}
	st.workspaces = []*Workspace{{ID: DefaultWorkspaceID, Name: "IT", Primary: true}}
}

// now is the clock's time in the desk's resolution (UTC seconds).
func (d *Desk) now() time.Time { return norm(d.clock()) }

func norm(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}

func normPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := norm(*t)
	return &n
}

// AddAPIKey makes key an API key of the agent agentID.
func (d *Desk) AddAPIKey(key string, agentID int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.st.keys[key] = agentID
}

// SetIndexLag changes the search-index lag (see WithIndexLag).
func (d *Desk) SetIndexLag(lag time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.st.indexLag = lag
	d.st.version++
}

// AddWorkspace adds a workspace (an id is assigned when ID is 0) and returns
// it. A workspace marked Primary becomes the default one. The default admin
// agent (DefaultAgentID) is an account admin, and an account admin is a
// member of every workspace: the new one joins its workspace_ids.
func (d *Desk) AddWorkspace(w Workspace) Workspace {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.ID == 0 {
		for _, x := range d.st.workspaces {
			w.ID = max(w.ID, x.ID)
		}
		w.ID++
	}
	if w.Primary {
		for _, x := range d.st.workspaces {
			x.Primary = false
		}
	}
	d.st.workspaces = append(d.st.workspaces, &w)
	if admin, ok := d.st.agents.get(DefaultAgentID); ok && !slices.Contains(admin.WorkspaceIDs, w.ID) {
		admin.WorkspaceIDs = append(admin.WorkspaceIDs, w.ID)
	}
	d.st.version++
	return w
}

// Workspaces returns the account's workspaces.
func (d *Desk) Workspaces() []Workspace {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Workspace, len(d.st.workspaces))
	for i, w := range d.st.workspaces {
		out[i] = *w
	}
	return out
}

// AddStatus adds a ticket status (custom statuses have ids above 5) or
// renames an existing one; it shows up in the status form field's choices
// and becomes a valid status on create and update.
func (d *Desk) AddStatus(id int, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.st.statuses {
		if d.st.statuses[i].ID == id {
			d.st.statuses[i].Name = name
			return
		}
	}
	d.st.statuses = append(d.st.statuses, status{id, name, "Being Processed"})
	slices.SortFunc(d.st.statuses, func(a, b status) int { return a.ID - b.ID })
}

// AddCustomField declares a ticket custom field (see CustomField).
func (d *Desk) AddCustomField(f CustomField) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.st.customFields = append(d.st.customFields, f)
	d.st.version++
}

// AddAgent adds an agent (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddAgent(a Agent) Agent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.st.addAgent(a, d.now())
}

func (st *state) addAgent(a Agent, now time.Time) *Agent {
	a.LastLoginAt = normPtr(a.LastLoginAt)
	if !a.Occasional {
		a.Active = true
	}
	if a.TimeZone == "" {
		a.TimeZone = "Eastern Time (US & Canada)"
	}
	if a.TimeFormat == "" {
		a.TimeFormat = "24h"
	}
	if a.Language == "" {
		a.Language = "en"
	}
	if len(a.WorkspaceIDs) == 0 {
		a.WorkspaceIDs = []int64{st.primaryWorkspace()}
	}
	a.DepartmentIDs = nonNil(a.DepartmentIDs)
	a.MemberOf = nonNil(a.MemberOf)
	a.ObserverOf = nonNil(a.ObserverOf)
	a.MemberOfPending = nonNil(a.MemberOfPending)
	a.ObserverOfPending = nonNil(a.ObserverOfPending)
	a.Roles = nonNil(a.Roles)
	a.CustomFields = nonNilMap(a.CustomFields)
	seed(st, &st.agents, &st.next.user, &a, now)
	return &a
}

func (st *state) userID() int64 { return nextID(&st.next.user) }

// AddRequester adds a requester (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddRequester(r Requester) Requester {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.st.addRequester(r, d.now())
}

func (st *state) addRequester(r Requester, now time.Time) *Requester {
	r.Active = true
	if r.TimeZone == "" {
		r.TimeZone = "Eastern Time (US & Canada)"
	}
	if r.Language == "" {
		r.Language = "en"
	}
	if r.TimeFormat == "" {
		r.TimeFormat = "12h"
	}
	r.SecondaryEmails = nonNil(r.SecondaryEmails)
	r.DepartmentIDs = nonNil(r.DepartmentIDs)
	r.CustomFields = nonNilMap(r.CustomFields)
	seed(st, &st.requesters, &st.next.user, &r, now)
	return &r
}

// AddGroup adds an agent group (an id is assigned when ID is 0) and returns
// it. Its members and observers get the group in their member_of and
// observer_of, as on Freshservice, where an agent's assignment scope
// member_groups reads member_of.
func (d *Desk) AddGroup(g Group) Group {
	d.mu.Lock()
	defer d.mu.Unlock()
	if g.WorkspaceID == 0 {
		g.WorkspaceID = d.st.primaryWorkspace()
	}
	g.Members, g.Observers, g.Leaders = nonNil(g.Members), nonNil(g.Observers), nonNil(g.Leaders)
	g.MembersPending, g.ObserversPending, g.LeadersPending = nonNil(g.MembersPending), nonNil(g.ObserversPending), nonNil(g.LeadersPending)
	seed(&d.st, &d.st.groups, &d.st.next.group, &g, d.now())
	for _, id := range g.Members {
		if a, ok := d.st.agents.get(id); ok && !slices.Contains(a.MemberOf, g.ID) {
			a.MemberOf = append(a.MemberOf, g.ID)
		}
	}
	for _, id := range g.Observers {
		if a, ok := d.st.agents.get(id); ok && !slices.Contains(a.ObserverOf, g.ID) {
			a.ObserverOf = append(a.ObserverOf, g.ID)
		}
	}
	return g
}

// AddDepartment adds a department (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddDepartment(dep Department) Department {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dep.WorkspaceID == 0 {
		dep.WorkspaceID = d.st.primaryWorkspace()
	}
	dep.Domains = nonNil(dep.Domains)
	dep.CustomFields = nonNilMap(dep.CustomFields)
	seed(&d.st, &d.st.departments, &d.st.next.dept, &dep, d.now())
	return dep
}

// AddAsset adds an asset (id and display id are assigned when 0) and returns it.
func (d *Desk) AddAsset(a Asset) Asset {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.st.addAsset(a, d.now())
}

func (st *state) addAsset(a Asset, now time.Time) *Asset {
	if a.ID == 0 {
		a.ID = nextID(&st.next.asset)
	}
	if a.WorkspaceID == 0 {
		a.WorkspaceID = st.primaryWorkspace()
	}
	if a.Impact == "" {
		a.Impact = "low"
	}
	if a.UsageType == "" {
		a.UsageType = "permanent"
	}
	if a.AuthorType == "" {
		a.AuthorType = "User"
	}
	a.TypeFields = nonNilMap(a.TypeFields)
	seed(st, &st.assets, &st.next.assetDisplay, &a, now) // keyed by display id
	return &a
}

// AddChange adds a change (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddChange(c Change) Change {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.WorkspaceID == 0 {
		c.WorkspaceID = d.st.primaryWorkspace()
	}
	c.Status, c.Priority, c.Impact, c.Risk, c.ChangeType = orDefault(c.Status, 1), orDefault(c.Priority, 1), orDefault(c.Impact, 1), orDefault(c.Risk, 1), orDefault(c.ChangeType, 2)
	c.CustomFields = nonNilMap(c.CustomFields)
	seed(&d.st, &d.st.changes, &d.st.next.change, &c, d.now())
	return c
}

// AddProblem adds a problem (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddProblem(p Problem) Problem {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.WorkspaceID == 0 {
		p.WorkspaceID = d.st.primaryWorkspace()
	}
	p.Status, p.Priority, p.Impact = orDefault(p.Status, 1), orDefault(p.Priority, 1), orDefault(p.Impact, 1)
	p.CustomFields = nonNilMap(p.CustomFields)
	seed(&d.st, &d.st.problems, &d.st.next.problem, &p, d.now())
	return p
}

// AddRelease adds a release (an id is assigned when ID is 0) and returns it.
func (d *Desk) AddRelease(r Release) Release {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.WorkspaceID == 0 {
		r.WorkspaceID = d.st.primaryWorkspace()
	}
	r.Status, r.Priority, r.ReleaseType = orDefault(r.Status, 1), orDefault(r.Priority, 1), orDefault(r.ReleaseType, 2)
	r.CustomFields = nonNilMap(r.CustomFields)
	seed(&d.st, &d.st.releases, &d.st.next.release, &r, d.now())
	return r
}

// seed stores a record added from Go: its id is kept (or the next one of
// the sequence taken), its created_at defaults to now and its updated_at to
// created_at, both in the desk's resolution.
func seed[T any, P interface {
	*T
	record
}](st *state, tab *table[T, P], next *int64, p P, now time.Time) {
	id, created, updated := p.meta()
	*id = claimID(next, *id)
	*created, *updated = stamps(*created, *updated, now)
	tab.put(p)
	st.version++
}

// nextID takes the next id of a sequence.
func nextID(next *int64) int64 {
	id := *next
	*next++
	return id
}

// claimID returns id, or the sequence's next id when id is 0, and moves the
// sequence past it so that an id seeded from Go is never handed out again.
func claimID(next *int64, id int64) int64 {
	if id == 0 {
		return nextID(next)
	}
	*next = max(*next, id+1)
	return id
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func stamps(created, updated, now time.Time) (time.Time, time.Time) {
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = created
	}
	return norm(created), norm(updated)
}

// AddTicket adds a ticket exactly as given (tests may set any created_at,
// due_by, status or responder), filling only what is missing: an id, the
// primary workspace, status Open, priority Low, source Portal, type Incident,
// created_at = now, updated_at = created_at. References are not checked.
func (d *Desk) AddTicket(t Ticket) Ticket {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.st.addTicket(&t, d.now()).clone()
}

func (st *state) addTicket(t *Ticket, now time.Time) *Ticket {
	t.ID = claimID(&st.next.ticket, t.ID)
	if t.WorkspaceID == 0 {
		t.WorkspaceID = st.primaryWorkspace()
	}
	t.Status, t.Priority, t.Source = orDefault(t.Status, 2), orDefault(t.Priority, 1), orDefault(t.Source, 2)
	if t.Type == "" {
		t.Type = "Incident"
	}
	t.CreatedAt, t.UpdatedAt = stamps(t.CreatedAt, t.UpdatedAt, now)
	normTicketTimes(t)
	if _, ok := st.tickets[t.ID]; !ok {
		i, _ := slices.BinarySearch(st.ticketIDs, t.ID)
		st.ticketIDs = slices.Insert(st.ticketIDs, i, t.ID)
	}
	st.tickets[t.ID] = t
	st.remember(t, now)
	st.version++
	return t
}

func normTicketTimes(t *Ticket) {
	t.DueBy, t.FrDueBy = norm(t.DueBy), norm(t.FrDueBy)
	t.FirstRespondedAt, t.ResolvedAt, t.ClosedAt = norm(t.FirstRespondedAt), norm(t.ResolvedAt), norm(t.ClosedAt)
	t.CreatedAt, t.UpdatedAt = norm(t.CreatedAt), norm(t.UpdatedAt)
}

// remember keeps a copy of the ticket's new version for the lagging search
// index; versions older than the one visible at now-lag are dropped.
func (st *state) remember(t *Ticket, now time.Time) {
	if st.indexLag <= 0 {
		delete(st.history, t.ID)
		return
	}
	h := append(st.history[t.ID], t.clone())
	cutoff := now.Add(-st.indexLag)
	keep := 0
	for i, v := range h {
		if !v.UpdatedAt.After(cutoff) {
			keep = i
		}
	}
	st.history[t.ID] = h[keep:]
}

// UpdateTicket changes a ticket from Go. Unless fn sets UpdatedAt itself,
// updated_at becomes now. It reports whether the ticket exists.
func (d *Desk) UpdateTicket(id int64, fn func(*Ticket)) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.st.tickets[id]
	if !ok {
		return false
	}
	c := t.clone()
	before := c.UpdatedAt
	fn(c)
	c.ID = id
	if c.UpdatedAt.Equal(before) {
		c.UpdatedAt = d.now()
	}
	normTicketTimes(c)
	d.st.tickets[id] = c
	d.st.remember(c, d.now())
	d.st.version++
	return true
}

// Ticket returns a copy of ticket id.
func (d *Desk) Ticket(id int64) (Ticket, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.st.tickets[id]
	if !ok {
		return Ticket{}, false
	}
	return *t.clone(), true
}

// TicketIDs returns the ids of every ticket, deleted ones included, ascending.
func (d *Desk) TicketIDs() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.st.ticketIDs)
}

// Conversations returns the replies and notes of a ticket, oldest first.
func (d *Desk) Conversations(ticketID int64) []Conversation {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Conversation
	for _, id := range d.st.convsByTicket[ticketID] {
		c := *d.st.convs[id]
		c.ToEmails, c.CCEmails, c.BCCEmails = cloneSlice(c.ToEmails), cloneSlice(c.CCEmails), cloneSlice(c.BCCEmails)
		out = append(out, c)
	}
	return out
}

// AddConversation adds a reply or note to a ticket as given (an id is
// assigned when ID is 0; created_at defaults to now). It does not touch the
// ticket; it reports false when the ticket does not exist.
func (d *Desk) AddConversation(c Conversation) (Conversation, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.st.tickets[c.TicketID]; !ok {
		return Conversation{}, false
	}
	return *d.st.addConversation(c, d.now()), true
}

func (st *state) addConversation(c Conversation, now time.Time) *Conversation {
	if st.stripHTMLComments {
		c.Body = stripHTMLComments(c.Body)
	}
	c.ID = claimID(&st.next.conv, c.ID)
	c.CreatedAt, c.UpdatedAt = stamps(c.CreatedAt, c.UpdatedAt, now)
	st.convs[c.ID] = &c
	st.convsByTicket[c.TicketID] = append(st.convsByTicket[c.TicketID], c.ID)
	st.version++
	return &c
}

// stripHTMLComments removes every <!-- ... --> (an unterminated one runs to
// the end, as in a browser) and the line breaks left trailing.
func stripHTMLComments(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			break
		}
		s = s[i+4+j+3:]
	}
	return strings.TrimRight(b.String(), "\n")
}

// AddTimeEntry logs time on a ticket; it reports false for an unknown ticket.
func (d *Desk) AddTimeEntry(e TimeEntry) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.st.tickets[e.TicketID]; !ok {
		return false
	}
	d.st.addTimeEntry(e, d.now())
	return true
}

func (st *state) addTimeEntry(e TimeEntry, now time.Time) {
	if e.ID == 0 {
		e.ID = nextID(&st.next.timeEntry)
	}
	e.CreatedAt, e.UpdatedAt = stamps(e.CreatedAt, e.UpdatedAt, now)
	if e.StartTime.IsZero() {
		e.StartTime = e.CreatedAt
	}
	if e.ExecutedAt.IsZero() {
		e.ExecutedAt = e.CreatedAt
	}
	e.StartTime, e.ExecutedAt = norm(e.StartTime), norm(e.ExecutedAt)
	if e.TimeSpent == "" {
		e.TimeSpent = "00:15"
	}
	e.CustomFields = nonNilMap(e.CustomFields)
	st.timeEntries[e.TicketID] = append(st.timeEntries[e.TicketID], &e)
}

// Agent returns a copy of agent id.
func (d *Desk) Agent(id int64) (Agent, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.st.agents.get(id)
	if !ok {
		return Agent{}, false
	}
	return *a, true
}

// Agents returns every agent in insertion order.
func (d *Desk) Agents() []Agent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.agents.copies()
}

// Groups returns every group in insertion order.
func (d *Desk) Groups() []Group {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.groups.copies()
}

// Requesters returns every requester in insertion order.
func (d *Desk) Requesters() []Requester {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.requesters.copies()
}

// Statuses returns the ticket statuses as id -> name.
func (d *Desk) Statuses() map[int]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := map[int]string{}
	for _, s := range d.st.statuses {
		m[s.ID] = s.Name
	}
	return m
}

func (st *state) primaryWorkspace() int64 {
	for _, w := range st.workspaces {
		if w.Primary {
			return w.ID
		}
	}
	if len(st.workspaces) > 0 {
		return st.workspaces[0].ID
	}
	return DefaultWorkspaceID
}

func (st *state) workspace(id int64) bool {
	for _, w := range st.workspaces {
		if w.ID == id {
			return true
		}
	}
	return false
}

func (st *state) validStatus(id int) bool {
	for _, s := range st.statuses {
		if s.ID == id {
			return true
		}
	}
	return false
}

// ---- generic tables ----------------------------------------------------

type record interface {
	meta() (id *int64, created, updated *time.Time)
}

type table[T any, P interface {
	*T
	record
}] struct {
	byID map[int64]P
	ids  []int64 // insertion order
}

func (t *table[T, P]) init() { t.byID = map[int64]P{} }

// deriver is a record with fields made from its others when it is stored
// (description_text from description).
type deriver interface{ derive() }

func (t *table[T, P]) put(p P) {
	if d, ok := any(p).(deriver); ok {
		d.derive()
	}
	id, _, _ := p.meta()
	if _, ok := t.byID[*id]; !ok {
		t.ids = append(t.ids, *id)
	}
	t.byID[*id] = p
}

func (t *table[T, P]) get(id int64) (P, bool) {
	p, ok := t.byID[id]
	return p, ok
}

func (t *table[T, P]) del(id int64) {
	delete(t.byID, id)
	if i := slices.Index(t.ids, id); i >= 0 {
		t.ids = slices.Delete(t.ids, i, i+1)
	}
}

func (t *table[T, P]) all() []P {
	out := make([]P, 0, len(t.ids))
	for _, id := range t.ids {
		out = append(out, t.byID[id])
	}
	return out
}

// copies are shallow copies of every record in insertion order (nil when
// there are none), for the Desk's getters.
func (t *table[T, P]) copies() []T {
	var out []T
	for _, id := range t.ids {
		out = append(out, *t.byID[id])
	}
	return out
}

func (a *Agent) meta() (*int64, *time.Time, *time.Time)     { return &a.ID, &a.CreatedAt, &a.UpdatedAt }
func (r *Requester) meta() (*int64, *time.Time, *time.Time) { return &r.ID, &r.CreatedAt, &r.UpdatedAt }
func (g *Group) meta() (*int64, *time.Time, *time.Time)     { return &g.ID, &g.CreatedAt, &g.UpdatedAt }
func (x *Department) meta() (*int64, *time.Time, *time.Time) {
	return &x.ID, &x.CreatedAt, &x.UpdatedAt
}
func (a *Asset) meta() (*int64, *time.Time, *time.Time) {
	return &a.DisplayID, &a.CreatedAt, &a.UpdatedAt
}
func (c *Change) meta() (*int64, *time.Time, *time.Time)  { return &c.ID, &c.CreatedAt, &c.UpdatedAt }
func (p *Problem) meta() (*int64, *time.Time, *time.Time) { return &p.ID, &p.CreatedAt, &p.UpdatedAt }
func (r *Release) meta() (*int64, *time.Time, *time.Time) { return &r.ID, &r.CreatedAt, &r.UpdatedAt }

func (c *Change) derive()  { c.DescriptionText = stripTags(c.Description) }
func (p *Problem) derive() { p.DescriptionText = stripTags(p.Description) }
func (r *Release) derive() { r.DescriptionText = stripTags(r.Description) }

package sdsim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/sdclient/filter"
)

// kind is the generic CRUD of a resource whose JSON shape is its Go type:
// create and update bodies are flat objects of the type's own fields.
type kind[T any, P interface {
	*T
	record
}] struct {
	single, plural string
	tab            func(*state) *table[T, P]
	template       func(c *call) P                              // defaults of a new record
	validate       func(c *call, p P, create bool) []fieldError // required fields, references
	assign         func(c *call, p P)                           // ids of a new record
	keep           func(old, new P)                             // fields an update may not change
	filter         func(c *call, p P) bool                      // list query parameters
	sort           func(a, b P) int
	readOnly       []string
}

// ro is the fields no body may set: id, created_at, updated_at and the
// resource's own read-only fields.
func (k kind[T, P]) ro() []string {
	if k.readOnly == nil {
		return baseReadOnly
	}
	return k.readOnly
}

func (k kind[T, P]) find(c *call) (P, *reply) {
	id, ok := c.id(0)
	if ok {
		if p, ok := k.tab(c.st).get(id); ok {
			return p, nil
		}
	}
	r := notFound(k.single + " " + c.params[0])
	return nil, &r
}

func (k kind[T, P]) list(c *call) reply {
	var items []P
	for _, p := range k.tab(c.st).all() {
		if k.filter == nil || k.filter(c, p) {
			items = append(items, p)
		}
	}
	if k.sort != nil {
		slices.SortStableFunc(items, k.sort)
	}
	return listPage(c, k.plural, nonNil(items))
}

func (k kind[T, P]) view(c *call) reply {
	p, rep := k.find(c)
	if rep != nil {
		return *rep
	}
	return success(map[string]any{k.single: p})
}

func (k kind[T, P]) create(c *call) reply {
	patched, errs := patch((*T)(k.template(c)), c.body, k.ro()...)
	if errs != nil {
		return invalid(errs...)
	}
	p := P(patched)
	if rep := k.check(c, p, true); rep != nil {
		return *rep
	}
	k.assign(c, p)
	id, createdAt, updatedAt := p.meta()
	*createdAt, *updatedAt = c.now, c.now
	k.tab(c.st).put(p)
	c.st.version++
	return created(map[string]any{k.single: p}, "/"+k.plural+"/"+strconv.FormatInt(*id, 10))
}

// check validates a create or update body: a duplicate is a 409, any other
// fault a 400 listing them all.
func (k kind[T, P]) check(c *call, p P, create bool) *reply {
	if k.validate == nil {
		return nil
	}
	errs := k.validate(c, p, create)
	if len(errs) == 0 {
		return nil
	}
	if errs[0].Code == "duplicate_value" {
		r := conflict(errs[0].Field, errs[0].Message)
		return &r
	}
	r := invalid(errs...)
	return &r
}

func (k kind[T, P]) update(c *call) reply {
	cur, rep := k.find(c)
	if rep != nil {
		return *rep
	}
	patched, errs := patch((*T)(cur), c.body, k.ro()...)
	if errs != nil {
		return invalid(errs...)
	}
	p := P(patched)
	if rep := k.check(c, p, false); rep != nil {
		return *rep
	}
	if k.keep != nil {
		k.keep(cur, p)
	}
	_, _, updated := p.meta()
	*updated = c.now
	k.tab(c.st).put(p)
	c.st.version++
	return success(map[string]any{k.single: p})
}

func (k kind[T, P]) del(c *call) reply {
	p, rep := k.find(c)
	if rep != nil {
		return *rep
	}
	id, _, _ := p.meta()
	k.tab(c.st).del(*id)
	c.st.version++
	return noContent()
}

var baseReadOnly = []string{"id", "created_at", "updated_at"}

func required(f string) fieldError {
	return fieldError{f, "Mandatory attribute missing", "missing_field"}
}

func refError(f, what string) fieldError {
	return fieldError{f, "There is no " + what + " with this id", "invalid_value"}
}

// ---- agents --------------------------------------------------------------

func agentKind() kind[Agent, *Agent] {
	return kind[Agent, *Agent]{
		single: "agent", plural: "agents",
		tab: func(st *state) *table[Agent, *Agent] { return &st.agents },
		template: func(c *call) *Agent {
			return &Agent{Active: true, TimeZone: "Eastern Time (US & Canada)", TimeFormat: "24h", Language: "en",
				DepartmentIDs: []int64{}, MemberOf: []int64{}, ObserverOf: []int64{}, Roles: []AgentRole{},
				MemberOfPending: []int64{}, ObserverOfPending: []int64{},
				WorkspaceIDs: []int64{c.st.primaryWorkspace()}, CustomFields: map[string]any{}}
		},
		validate: func(c *call, a *Agent, create bool) []fieldError {
			var errs []fieldError
			if a.FirstName == "" {
				errs = append(errs, required("first_name"))
			}
			if a.Email == "" {
				errs = append(errs, required("email"))
			} else if !strings.Contains(a.Email, "@") {
				errs = append(errs, fieldError{"email", "It should be in the 'valid email address' format", "invalid_value"})
			}
			// The documentation marks roles mandatory (#create_an_agent).
			if create && len(a.Roles) == 0 {
				errs = append(errs, required("roles"))
			}
			for _, r := range a.Roles {
				if r.RoleID <= 0 {
					errs = append(errs, fieldError{"roles", "role_id should be a positive integer", "invalid_value"})
					break
				}
			}
			for _, w := range a.WorkspaceIDs {
				if !c.st.workspace(w) {
					errs = append(errs, refError("workspace_ids", "workspace"))
				}
			}
			if len(errs) > 0 {
				return errs
			}
			for _, o := range c.st.agents.all() {
				if o.ID != a.ID && strings.EqualFold(o.Email, a.Email) {
					return []fieldError{{"email", "An agent with this email already exists", "duplicate_value"}}
				}
			}
			return nil
		},
		assign: func(c *call, a *Agent) { a.ID = c.st.userID() },
		keep:   func(old, a *Agent) { a.ReadOnly = old.ReadOnly },
		filter: func(c *call, a *Agent) bool {
			if e := c.q.Get("email"); e != "" && !strings.EqualFold(a.Email, e) {
				return false
			}
			if s := c.q.Get("active"); s != "" && strconv.FormatBool(a.Active) != s {
				return false
			}
			switch c.q.Get("state") {
			case "fulltime":
				return !a.Occasional
			case "occasional":
				return a.Occasional
			}
			return true
		},
		sort: func(a, b *Agent) int {
			return cmp.Or(strings.Compare(strings.ToLower(a.FirstName), strings.ToLower(b.FirstName)), cmp.Compare(a.ID, b.ID))
		},
		readOnly: append([]string{"last_login_at", "has_logged_in", "member_of_pending_approval", "observer_of_pending_approval", "scoreboard_level_id"}, baseReadOnly...),
	}
}

func listAgents(c *call) reply  { return agentKind().list(c) }
func createAgent(c *call) reply { return agentKind().create(c) }
func viewAgent(c *call) reply   { return agentKind().view(c) }
func updateAgent(c *call) reply { return agentKind().update(c) }
func viewMe(c *call) reply {
	a, ok := c.st.agents.get(c.agent.ID)
	if !ok {
		return notFound("agent")
	}
	return success(map[string]any{"agent": a})
}

// ---- requesters ----------------------------------------------------------

func requesterKind() kind[Requester, *Requester] {
	return kind[Requester, *Requester]{
		single: "requester", plural: "requesters",
		tab: func(st *state) *table[Requester, *Requester] { return &st.requesters },
		template: func(c *call) *Requester {
			return &Requester{Active: true, TimeZone: "Eastern Time (US & Canada)", TimeFormat: "12h", Language: "en",
				SecondaryEmails: []string{}, DepartmentIDs: []int64{}, CustomFields: map[string]any{}}
		},
		validate: func(c *call, r *Requester, create bool) []fieldError {
			var errs []fieldError
			if r.FirstName == "" {
				errs = append(errs, required("first_name"))
			}
			if r.PrimaryEmail == "" && r.WorkPhoneNumber == nil && r.MobilePhoneNumber == nil {
				errs = append(errs, fieldError{"primary_email", "Mandatory attribute missing: send primary_email, work_phone_number or mobile_phone_number", "missing_field"})
			}
			if len(errs) > 0 {
				return errs
			}
			if r.PrimaryEmail != "" {
				for _, o := range c.st.requesters.all() {
					if o.ID != r.ID && strings.EqualFold(o.PrimaryEmail, r.PrimaryEmail) {
						return []fieldError{{"primary_email", "A requester with this email already exists", "duplicate_value"}}
					}
				}
			}
			return nil
		},
		assign: func(c *call, r *Requester) { r.ID = c.st.userID() },
		filter: func(c *call, r *Requester) bool {
			e := c.q.Get("email")
			return e == "" || strings.EqualFold(r.PrimaryEmail, e) || slices.ContainsFunc(r.SecondaryEmails, func(s string) bool { return strings.EqualFold(s, e) })
		},
		readOnly: append([]string{"is_agent", "has_logged_in"}, baseReadOnly...),
	}
}

func listRequesters(c *call) reply  { return requesterKind().list(c) }
func createRequester(c *call) reply { return requesterKind().create(c) }
func viewRequester(c *call) reply   { return requesterKind().view(c) }
func updateRequester(c *call) reply { return requesterKind().update(c) }

// ---- groups and departments ----------------------------------------------

func groupKind() kind[Group, *Group] {
	return kind[Group, *Group]{
		single: "group", plural: "groups",
		tab: func(st *state) *table[Group, *Group] { return &st.groups },
		template: func(c *call) *Group {
			return &Group{WorkspaceID: c.st.primaryWorkspace(), Members: []int64{}, Observers: []int64{}, Leaders: []int64{},
				MembersPending: []int64{}, ObserversPending: []int64{}, LeadersPending: []int64{}}
		},
		validate: func(c *call, g *Group, create bool) []fieldError {
			var errs []fieldError
			if g.Name == "" {
				errs = append(errs, required("name"))
			}
			for _, m := range g.Members {
				if !c.st.isAgent(m) {
					errs = append(errs, refError("members", "agent"))
				}
			}
			return errs
		},
		assign: func(c *call, g *Group) { g.ID = nextID(&c.st.next.group) },
		keep:   func(old, g *Group) { g.WorkspaceID = old.WorkspaceID },
		// The pending-approval lists are read-only (#group_attributes).
		readOnly: append([]string{"members_pending_approval", "observers_pending_approval", "leaders_pending_approval"}, baseReadOnly...),
	}
}

func listGroups(c *call) reply  { return groupKind().list(c) }
func createGroup(c *call) reply { return groupKind().create(c) }
func viewGroup(c *call) reply   { return groupKind().view(c) }
func updateGroup(c *call) reply { return groupKind().update(c) }
func deleteGroup(c *call) reply { return groupKind().del(c) }

func departmentKind() kind[Department, *Department] {
	return kind[Department, *Department]{
		single: "department", plural: "departments",
		tab: func(st *state) *table[Department, *Department] { return &st.departments },
		template: func(c *call) *Department {
			return &Department{WorkspaceID: c.st.primaryWorkspace(), Domains: []string{}, CustomFields: map[string]any{}}
		},
		validate: func(c *call, d *Department, create bool) []fieldError {
			if d.Name == "" {
				return []fieldError{required("name")}
			}
			return nil
		},
		assign: func(c *call, d *Department) { d.ID = nextID(&c.st.next.dept) },
	}
}

func listDepartments(c *call) reply  { return departmentKind().list(c) }
func createDepartment(c *call) reply { return departmentKind().create(c) }
func viewDepartment(c *call) reply   { return departmentKind().view(c) }
func updateDepartment(c *call) reply { return departmentKind().update(c) }
func deleteDepartment(c *call) reply { return departmentKind().del(c) }

// ---- assets --------------------------------------------------------------

func assetKind() kind[Asset, *Asset] {
	return kind[Asset, *Asset]{
		single: "asset", plural: "assets",
		tab: func(st *state) *table[Asset, *Asset] { return &st.assets },
		template: func(c *call) *Asset {
			return &Asset{WorkspaceID: c.st.primaryWorkspace(), Impact: "low", UsageType: "permanent", AuthorType: "User", TypeFields: map[string]any{}}
		},
		validate: func(c *call, a *Asset, create bool) []fieldError {
			var errs []fieldError
			if a.Name == "" {
				errs = append(errs, required("name"))
			}
			if a.AssetTypeID == 0 {
				errs = append(errs, required("asset_type_id"))
			}
			if !slices.Contains([]string{"low", "medium", "high"}, a.Impact) {
				errs = append(errs, fieldError{"impact", "It should be one of these values: 'low,medium,high'", "invalid_value"})
			}
			return errs
		},
		assign: func(c *call, a *Asset) {
			a.ID, a.DisplayID = nextID(&c.st.next.asset), nextID(&c.st.next.assetDisplay)
		},
		keep:     func(old, a *Asset) { a.ID, a.DisplayID = old.ID, old.DisplayID },
		readOnly: append([]string{"display_id", "author_type"}, baseReadOnly...),
	}
}

func listAssets(c *call) reply  { return assetKind().list(c) }
func createAsset(c *call) reply { return assetKind().create(c) }
func viewAsset(c *call) reply   { return assetKind().view(c) }
func updateAsset(c *call) reply { return assetKind().update(c) }
func deleteAsset(c *call) reply { return assetKind().del(c) }

// ---- changes, problems, releases -------------------------------------------

func checkRange(errs []fieldError, field string, v, lo, hi int) []fieldError {
	if v < lo || v > hi {
		errs = append(errs, fieldError{field, fmt.Sprintf("It should be a number from %d to %d", lo, hi), "invalid_value"})
	}
	return errs
}

func (st *state) checkRefs(errs []fieldError, agent, group, dept *int64) []fieldError {
	if agent != nil && *agent != 0 && !st.isAgent(*agent) {
		errs = append(errs, refError("agent_id", "agent"))
	}
	if group != nil && *group != 0 {
		if _, ok := st.groups.get(*group); !ok {
			errs = append(errs, refError("group_id", "group"))
		}
	}
	if dept != nil && *dept != 0 {
		if _, ok := st.departments.get(*dept); !ok {
			errs = append(errs, refError("department_id", "department"))
		}
	}
	return errs
}

func changeKind() kind[Change, *Change] {
	return kind[Change, *Change]{
		single: "change", plural: "changes",
		readOnly: append([]string{"description_text"}, baseReadOnly...),
		tab:      func(st *state) *table[Change, *Change] { return &st.changes },
		template: func(c *call) *Change {
			return &Change{WorkspaceID: c.st.primaryWorkspace(), RequesterID: c.agent.ID, Priority: 1, Impact: 1, Status: 1, Risk: 1, ChangeType: 2, CustomFields: map[string]any{}}
		},
		validate: func(c *call, ch *Change, create bool) []fieldError {
			var errs []fieldError
			if ch.Subject == "" {
				errs = append(errs, required("subject"))
			}
			if !c.st.isUser(ch.RequesterID) {
				errs = append(errs, refError("requester_id", "requester"))
			}
			errs = checkRange(errs, "priority", ch.Priority, 1, 4)
			errs = checkRange(errs, "impact", ch.Impact, 1, 3)
			errs = checkRange(errs, "status", ch.Status, 1, 6)
			errs = checkRange(errs, "risk", ch.Risk, 1, 4)
			errs = checkRange(errs, "change_type", ch.ChangeType, 1, 4)
			return c.st.checkRefs(errs, ch.AgentID, ch.GroupID, ch.DepartmentID)
		},
		assign: func(c *call, ch *Change) { ch.ID = nextID(&c.st.next.change) },
		keep:   func(old, ch *Change) { ch.WorkspaceID = old.WorkspaceID },
	}
}

func listChanges(c *call) reply {
	if _, ok := decodeFilterQuery(c.r.URL.RawQuery); ok {
		return filterChanges(c)
	}
	return changeKind().list(c)
}
func createChange(c *call) reply { return changeKind().create(c) }
func viewChange(c *call) reply   { return changeKind().view(c) }
func updateChange(c *call) reply { return changeKind().update(c) }
func deleteChange(c *call) reply { return changeKind().del(c) }

type changeRecord struct{ ch *Change }

func ptrNum(p *int64) []filter.Value {
	if p == nil {
		return nil
	}
	return num(*p)
}

// FilterValues gives a change's values for a filter field.
func (r changeRecord) FilterValues(field string) []filter.Value {
	ch := r.ch
	switch field {
	case "status":
		return num(int64(ch.Status))
	case "priority":
		return num(int64(ch.Priority))
	case "impact":
		return num(int64(ch.Impact))
	case "agent_id":
		return ptrNum(ch.AgentID)
	case "group_id":
		return ptrNum(ch.GroupID)
	case "department_id":
		return ptrNum(ch.DepartmentID)
	case "requester_id":
		return num(ch.RequesterID)
	case "workspace_id":
		return num(ch.WorkspaceID)
	case "created_at":
		return date(ch.CreatedAt)
	case "updated_at":
		return date(ch.UpdatedAt)
	case "due_by":
		if ch.PlannedEndDate != nil {
			return date(*ch.PlannedEndDate)
		}
		return nil
	}
	return customValue(ch.CustomFields[field])
}

// filterChanges: GET /changes/filter (and GET /changes?query=): the ticket
// filter grammar over changes (fields status, priority, impact, agent_id,
// group_id, department_id, requester_id, created_at, updated_at),
// {"changes","total"}, same paging as the ticket filter.
func filterChanges(c *call) reply {
	e, ws, page, rep := c.filterArgs()
	if rep != nil {
		return *rep
	}
	var items []*Change
	for _, ch := range c.st.changes.all() {
		if ch.WorkspaceID == ws && e.Eval(changeRecord{ch}) {
			items = append(items, ch)
		}
	}
	slices.SortStableFunc(items, func(a, b *Change) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return success(map[string]any{"changes": nonNil(filterWindow(c, items, page)), "total": len(items)})
}

func problemKind() kind[Problem, *Problem] {
	return kind[Problem, *Problem]{
		single: "problem", plural: "problems",
		readOnly: append([]string{"description_text"}, baseReadOnly...),
		tab:      func(st *state) *table[Problem, *Problem] { return &st.problems },
		template: func(c *call) *Problem {
			return &Problem{WorkspaceID: c.st.primaryWorkspace(), RequesterID: c.agent.ID, Priority: 1, Impact: 1, Status: 1, CustomFields: map[string]any{}}
		},
		validate: func(c *call, p *Problem, create bool) []fieldError {
			var errs []fieldError
			if p.Subject == "" {
				errs = append(errs, required("subject"))
			}
			if !c.st.isUser(p.RequesterID) {
				errs = append(errs, refError("requester_id", "requester"))
			}
			errs = checkRange(errs, "priority", p.Priority, 1, 4)
			errs = checkRange(errs, "impact", p.Impact, 1, 3)
			errs = checkRange(errs, "status", p.Status, 1, 3)
			return c.st.checkRefs(errs, p.AgentID, p.GroupID, p.DepartmentID)
		},
		assign: func(c *call, p *Problem) { p.ID = nextID(&c.st.next.problem) },
		keep:   func(old, p *Problem) { p.WorkspaceID = old.WorkspaceID },
	}
}

func listProblems(c *call) reply  { return problemKind().list(c) }
func createProblem(c *call) reply { return problemKind().create(c) }
func viewProblem(c *call) reply   { return problemKind().view(c) }
func updateProblem(c *call) reply { return problemKind().update(c) }
func deleteProblem(c *call) reply { return problemKind().del(c) }

func releaseKind() kind[Release, *Release] {
	return kind[Release, *Release]{
		single: "release", plural: "releases",
		readOnly: append([]string{"description_text"}, baseReadOnly...),
		tab:      func(st *state) *table[Release, *Release] { return &st.releases },
		template: func(c *call) *Release {
			return &Release{WorkspaceID: c.st.primaryWorkspace(), Priority: 1, Status: 1, ReleaseType: 2, CustomFields: map[string]any{}}
		},
		validate: func(c *call, r *Release, create bool) []fieldError {
			var errs []fieldError
			if r.Subject == "" {
				errs = append(errs, required("subject"))
			}
			if r.PlannedStartDate == nil {
				errs = append(errs, required("planned_start_date"))
			}
			if r.PlannedEndDate == nil {
				errs = append(errs, required("planned_end_date"))
			}
			errs = checkRange(errs, "priority", r.Priority, 1, 4)
			errs = checkRange(errs, "status", r.Status, 1, 5)
			errs = checkRange(errs, "release_type", r.ReleaseType, 1, 4)
			return c.st.checkRefs(errs, r.AgentID, r.GroupID, r.DepartmentID)
		},
		assign: func(c *call, r *Release) { r.ID = nextID(&c.st.next.release) },
		keep:   func(old, r *Release) { r.WorkspaceID = old.WorkspaceID },
	}
}

func listReleases(c *call) reply  { return releaseKind().list(c) }
func createRelease(c *call) reply { return releaseKind().create(c) }
func viewRelease(c *call) reply   { return releaseKind().view(c) }
func updateRelease(c *call) reply { return releaseKind().update(c) }
func deleteRelease(c *call) reply { return releaseKind().del(c) }

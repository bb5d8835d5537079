package sdsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Generated-desk extras.
const (
	// HRWorkspaceID is the second workspace a generated desk has.
	HRWorkspaceID int64 = 3
	// ReadOnlyAPIKey authenticates as a generated desk's read-only agent
	// (every write is answered 403).
	ReadOnlyAPIKey = "sim-readonly-key"
	// StatusWaitingOnVendor and StatusScheduled are a generated desk's
	// custom (open) statuses.
	StatusWaitingOnVendor = 6
	StatusScheduled       = 7
)

var (
	firstNames = []string{"Alice", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Isabel", "Jonas",
		"Kemi", "Liam", "Maya", "Noah", "Olivia", "Priya", "Quentin", "Rosa", "Samir", "Tara", "Uma", "Victor",
		"Wen", "Ximena", "Yusuf", "Zoe", "Aaron", "Bianca", "Carlos", "Dana", "Emeka", "Fiona", "Gustav", "Hana"}
	lastNames = []string{"Anderson", "Brown", "Chen", "Dubois", "Evans", "Fischer", "Garcia", "Hughes", "Ivanova",
		"Johnson", "Kowalski", "Lopez", "Martin", "Nakamura", "O'Brien", "Patel", "Quinn", "Rossi", "Schmidt",
		"Tanaka", "Usman", "Virtanen", "Walker", "Xu", "Yilmaz", "Zhang", "Okafor", "Larsen", "Moreau", "Silva"}
	departmentNames = []string{"IT", "Finance", "Sales", "Engineering", "Human Resources", "Marketing", "Operations", "Legal"}
	tagPool         = []string{"vip", "outage", "onboarding", "laptop", "vpn", "email", "printer", "access", "security", "follow-up"}
)

type subjectSet struct {
	group    string
	category string
	subjects []string
}

var subjectSets = []subjectSet{
	{"Service Desk", "Software", []string{"Cannot log in to Outlook", "Password reset for %s", "Teams keeps crashing on start",
		"Need Adobe Acrobat licence", "Shared drive not mapping", "Calendar invites not arriving", "Excel add-in missing after update"}},
	{"Network", "Network", []string{"VPN disconnects every few minutes", "Wi-Fi very slow on floor %d", "Cannot reach intranet from office",
		"Switch port dead in meeting room %d", "DNS failures for internal sites", "Firewall rule request for %s"}},
	{"Hardware", "Hardware", []string{"Laptop will not charge", "Monitor flickering", "Docking station not detecting screens",
		"Replacement keyboard needed", "Printer on floor %d shows offline", "New laptop for starter %s"}},
	{"Applications", "Software", []string{"ERP report times out", "CRM sync failing for %s", "Payroll export error",
		"Request access to analytics dashboard", "Expense tool shows blank page"}},
	{"Security", "Access", []string{"Suspicious login alert for %s", "Phishing e-mail reported", "MFA token lost",
		"Access review for %s", "Malware warning on laptop"}},
}

var hrSubjects = []string{"Onboarding for %s", "Update bank details", "Parental leave request", "Payslip missing",
	"Offboarding for %s", "Benefits enrolment question", "Access badge for new starter %s"}

// Generate seeds a realistic desk deterministically from seed: a second
// workspace (HR), the custom statuses 6 "Waiting on vendor" and 7
// "Scheduled", custom fields, departments, agents (one read-only, key
// ReadOnlyAPIKey), groups (Service Desk, Network, Hardware, Applications,
// Security, HR Operations), requesters, assets, problems, changes,
// releases, and `tickets` tickets of varied status, priority, source,
// type, age and due dates (some overdue, some unassigned urgent, some in
// custom statuses), a few with conversations and time entries. Ages are
// relative to now. It is meant to run once, on a fresh desk.
//
// Every phase draws from one random source in a fixed order, so the same
// seed makes the same desk (generate_stable_internal_test.go pins it): a
// change here must keep the order of the draws.
func (d *Desk) Generate(seed int64, tickets int, now time.Time) {
	now = norm(now)
	g := &generator{
		d:     d,
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x5eed5eed)),
		now:   now,
		setup: now.Add(-400 * 24 * time.Hour),
		used:  map[string]bool{"ada.admin": true},
	}
	g.addSettings()
	g.addDepartments()
	g.addAgents()
	g.addGroups()
	g.addRequesters(tickets)
	g.addAssets()
	g.addProblems()
	g.addChanges()
	g.addReleases()
	g.addTickets(tickets)
}

// generator holds what Generate has made so far, for the phases after.
type generator struct {
	d     *Desk
	rng   *rand.Rand
	now   time.Time
	setup time.Time       // when the desk was set up: the records' creation
	used  map[string]bool // e-mail local parts taken

	depts      []Department
	itAgents   []Agent
	hrAgents   []Agent
	teams      []team
	hrGroup    Group
	hrMembers  []int64
	requesters []Requester
	assetIDs   []int64 // display ids
	problemIDs []int64
}

// team is a generated IT group with its members and the subjects of its
// tickets.
type team struct {
	group   Group
	members []int64
	set     subjectSet
}

// pick draws one of s.
func (g *generator) pick(s []string) string { return s[g.rng.IntN(len(s))] }

// past draws a time up to maxAge before now.
func (g *generator) past(maxAge time.Duration) time.Time {
	return g.now.Add(-time.Duration(g.rng.Int64N(int64(maxAge))))
}

// personName draws a first and last name whose e-mail local part is not
// taken yet.
func (g *generator) personName() (string, string, string) {
	for {
		f, l := g.pick(firstNames), g.pick(lastNames)
		local := strings.ToLower(strings.ReplaceAll(f+"."+l, "'", ""))
		if !g.used[local] {
			g.used[local] = true
			return f, l, local
		}
		if len(g.used) > len(firstNames)*len(lastNames)/2 {
			local = fmt.Sprintf("%s%d", local, len(g.used))
			g.used[local] = true
			return f, l, local
		}
	}
}

// addSettings adds the HR workspace, the custom statuses and custom fields.
func (g *generator) addSettings() {
	d := g.d
	d.AddWorkspace(Workspace{ID: HRWorkspaceID, Name: "HR"})
	d.AddStatus(StatusWaitingOnVendor, "Waiting on vendor")
	d.AddStatus(StatusScheduled, "Scheduled")
	d.AddCustomField(CustomField{Name: "environment", Label: "Environment", Kind: FieldString, Choices: []string{"Production", "Staging", "Development"}})
	d.AddCustomField(CustomField{Name: "vip_requester", Label: "VIP requester", Kind: FieldBool})
	d.AddCustomField(CustomField{Name: "affected_users", Label: "Affected users", Kind: FieldNumber})
}

// addDepartments adds a department per name, Human Resources in HR.
func (g *generator) addDepartments() {
	for _, name := range departmentNames {
		ws := DefaultWorkspaceID
		if name == "Human Resources" {
			ws = HRWorkspaceID
		}
		domain := strings.ToLower(strings.ReplaceAll(name, " ", "")) + ".example.com"
		g.depts = append(g.depts, g.d.AddDepartment(Department{Name: name, Description: orNull(name + " department"),
			Domains: []string{domain}, WorkspaceID: ws, CreatedAt: g.setup}))
	}
}

// addAgents adds 14 agents in IT (two also in HR), 3 in HR and one read-only
// auditor with its own key.
func (g *generator) addAgents() {
	d := g.d
	titles := []string{"Service Desk Analyst", "Network Engineer", "Desktop Support Technician", "Application Specialist", "Security Analyst"}
	for i := range 14 {
		f, l, local := g.personName()
		a := d.AddAgent(Agent{FirstName: f, LastName: l, Email: local + "@example.com", JobTitle: orNull(titles[i%len(titles)]),
			WorkspaceIDs: []int64{DefaultWorkspaceID}, DepartmentIDs: []int64{g.depts[0].ID}, CreatedAt: g.setup,
			Roles: []AgentRole{{RoleID: 2, AssignmentScope: "member_groups", Groups: []int64{}}}, HasLoggedIn: true})
		g.itAgents = append(g.itAgents, a)
	}
	for range 3 {
		f, l, local := g.personName()
		g.hrAgents = append(g.hrAgents, d.AddAgent(Agent{FirstName: f, LastName: l, Email: local + "@example.com",
			JobTitle: orNull("HR Partner"), WorkspaceIDs: []int64{HRWorkspaceID}, DepartmentIDs: []int64{g.depts[4].ID},
			Roles:     []AgentRole{{RoleID: 2, AssignmentScope: "member_groups", Groups: []int64{}}},
			CreatedAt: g.setup, HasLoggedIn: true}))
	}
	// Two IT agents also work in HR.
	d.mu.Lock()
	for _, a := range g.itAgents[:2] {
		if p, ok := d.st.agents.get(a.ID); ok {
			p.WorkspaceIDs = []int64{DefaultWorkspaceID, HRWorkspaceID}
		}
	}
	d.mu.Unlock()
	auditor := d.AddAgent(Agent{FirstName: "Riley", LastName: "Auditor", Email: "riley.auditor@example.com",
		JobTitle: orNull("IT Auditor (read-only)"), Occasional: true, Active: true, CreatedAt: g.setup, ReadOnly: true,
		WorkspaceIDs: []int64{DefaultWorkspaceID, HRWorkspaceID},
		Roles:        []AgentRole{{RoleID: 3, AssignmentScope: "entire_helpdesk", Groups: []int64{}}}})
	d.AddAPIKey(ReadOnlyAPIKey, auditor.ID)
}

// addGroups adds a group of four IT agents per subject set, and HR
// Operations of the HR agents.
func (g *generator) addGroups() {
	for i, set := range subjectSets {
		var members []int64
		for j := range 4 {
			members = append(members, g.itAgents[(i*3+j)%len(g.itAgents)].ID)
		}
		grp := g.d.AddGroup(Group{Name: set.group, Description: orNull(set.group + " team"), Members: members,
			Leaders: members[:1], UnassignedFor: orNull("30m"), WorkspaceID: DefaultWorkspaceID, CreatedAt: g.setup})
		g.teams = append(g.teams, team{grp, members, set})
	}
	for _, a := range g.hrAgents {
		g.hrMembers = append(g.hrMembers, a.ID)
	}
	g.hrGroup = g.d.AddGroup(Group{Name: "HR Operations", Description: orNull("HR service team"), Members: g.hrMembers,
		Leaders: g.hrMembers[:1], WorkspaceID: HRWorkspaceID, CreatedAt: g.setup})
}

// addRequesters adds a requester per 20 tickets, 40 to 600.
func (g *generator) addRequesters(tickets int) {
	nReq := min(max(40, tickets/20), 600)
	for range nReq {
		f, l, local := g.personName()
		dep := g.depts[g.rng.IntN(len(g.depts))]
		g.requesters = append(g.requesters, g.d.AddRequester(Requester{FirstName: f, LastName: l, PrimaryEmail: local + "@example.com",
			JobTitle:      orNull(g.pick([]string{"Accountant", "Sales Manager", "Engineer", "Designer", "Recruiter", "Analyst", "Director"})),
			DepartmentIDs: []int64{dep.ID}, CreatedAt: g.past(365 * 24 * time.Hour)}))
	}
}

// addAssets adds 40 assets owned by requesters.
func (g *generator) addAssets() {
	assetNames := []string{"MacBook Pro 14", "ThinkPad X1 Carbon", "Dell U2723QE Monitor", "iPhone 15", "Cisco Meraki MR46"}
	for i := range 40 {
		owner := g.requesters[g.rng.IntN(len(g.requesters))].ID
		a := g.d.AddAsset(Asset{Name: fmt.Sprintf("%s #%03d", assetNames[i%len(assetNames)], i+1), AssetTypeID: 21000000100 + int64(i%len(assetNames)),
			AssetTag: orNull(fmt.Sprintf("ASSET-%04d", i+1)), UserID: &owner, Impact: g.pick([]string{"low", "medium", "high"}), CreatedAt: g.setup})
		g.assetIDs = append(g.assetIDs, a.DisplayID)
	}
}

// addProblems adds five problems.
func (g *generator) addProblems() {
	for i, s := range []string{"Recurring VPN drops for remote staff", "Printer fleet firmware bug", "Intermittent ERP timeouts",
		"Laptop batteries failing early", "Mail delivery delays"} {
		agent := g.itAgents[i].ID
		p := g.d.AddProblem(Problem{Subject: s, Description: "<p>" + s + "</p>", RequesterID: g.itAgents[i].ID, AgentID: &agent,
			Priority: 2 + i%3, Impact: 1 + i%3, Status: 1 + i%3, CreatedAt: g.past(90 * 24 * time.Hour)})
		g.problemIDs = append(g.problemIDs, p.ID)
	}
}

// addChanges adds eight changes planned a week apart around now.
func (g *generator) addChanges() {
	for i, s := range []string{"Upgrade core switches", "Roll out MFA to all staff", "Migrate file shares to cloud", "Patch VPN concentrators",
		"Replace office Wi-Fi access points", "Decommission old mail relay", "Enable disk encryption on laptops", "Renew TLS certificates"} {
		agent := g.itAgents[(i+3)%len(g.itAgents)].ID
		start := g.now.Add(time.Duration(i-3) * 7 * 24 * time.Hour)
		end := start.Add(8 * time.Hour)
		g.d.AddChange(Change{Subject: s, Description: "<p>" + s + "</p>", RequesterID: g.itAgents[i%len(g.itAgents)].ID, AgentID: &agent,
			GroupID: &g.teams[i%len(g.teams)].group.ID, Priority: 1 + i%4, Impact: 1 + i%3, Status: 1 + i%6, Risk: 1 + i%4, ChangeType: 1 + i%4,
			PlannedStartDate: &start, PlannedEndDate: &end, CreatedAt: g.past(60 * 24 * time.Hour)})
	}
}

// addReleases adds four releases planned two weeks apart.
func (g *generator) addReleases() {
	for i, s := range []string{"Q3 desktop image", "ERP 12.4 upgrade", "Mobile device policy v2", "Intranet redesign"} {
		start := g.now.Add(time.Duration(i-1) * 14 * 24 * time.Hour)
		end := start.Add(48 * time.Hour)
		g.d.AddRelease(Release{Subject: s, Description: "<p>" + s + "</p>", Priority: 1 + i%4, Status: 1 + i%5, ReleaseType: 1 + i%4,
			PlannedStartDate: &start, PlannedEndDate: &end, CreatedAt: g.past(60 * 24 * time.Hour)})
	}
}

// sla is the first response and resolution time by priority.
func sla(priority int) [2]time.Duration {
	switch priority {
	case 1:
		return [2]time.Duration{8 * time.Hour, 5 * 24 * time.Hour}
	case 2:
		return [2]time.Duration{4 * time.Hour, 3 * 24 * time.Hour}
	case 3:
		return [2]time.Duration{2 * time.Hour, 24 * time.Hour}
	case 4:
		return [2]time.Duration{30 * time.Minute, 4 * time.Hour}
	}
	return [2]time.Duration{}
}

// addTickets adds n tickets, ages sorted so that ids grow with created_at,
// like a real desk.
func (g *generator) addTickets(n int) {
	rng := g.rng
	ages := make([]time.Duration, n)
	for i := range ages {
		switch r := rng.IntN(100); {
		case r < 25:
			ages[i] = time.Duration(rng.Int64N(int64(48 * time.Hour)))
		case r < 65:
			ages[i] = time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))
		default:
			ages[i] = time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))
		}
	}
	slices.SortFunc(ages, func(a, b time.Duration) int { return int(b - a) })
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	for i, age := range ages {
		g.addTicket(i, age)
	}
}

// addTicket adds the i-th ticket, created age ago, with its conversations and
// time entry.
func (g *generator) addTicket(i int, age time.Duration) {
	rng := g.rng
	st := &g.d.st
	created := norm(g.now.Add(-age))
	t := &Ticket{CreatedAt: created, WorkspaceID: DefaultWorkspaceID}
	req := g.requesters[rng.IntN(len(g.requesters))]
	t.RequesterID = req.ID
	if len(req.DepartmentIDs) > 0 {
		t.DepartmentID = req.DepartmentIDs[0]
	}
	switch r := rng.IntN(100); {
	case r < 35:
		t.Priority = 1
	case r < 70:
		t.Priority = 2
	case r < 90:
		t.Priority = 3
	default:
		t.Priority = 4
	}
	t.Urgency, t.Impact = min(3, t.Priority), 1+rng.IntN(3)
	t.Source = []int{1, 1, 1, 1, 2, 2, 2, 3, 4, 9, 10, 10}[rng.IntN(12)]
	t.Type = "Incident"
	if rng.IntN(100) < 25 {
		t.Type = "Service Request"
	}
	members := g.subject(t, req)
	t.Description = fmt.Sprintf("<div>Hi team,</div><div>%s. Reported by %s.</div>", t.Subject, req.Name())
	times := sla(t.Priority)
	t.FrDueBy, t.DueBy = created.Add(times[0]), created.Add(times[1])
	g.status(t, age)
	g.assignment(t, age, members)
	g.times(t, created, times[0])
	g.tags(t)
	g.fields(t)
	if rng.IntN(100) < 10 {
		t.WatcherIDs = []int64{DefaultAgentID}
	}
	t.Spam = rng.IntN(1000) < 4
	t.Deleted = !t.Spam && rng.IntN(1000) < 4
	st.addTicket(t, g.now)
	if i%5 == 0 {
		g.conversations(t, req, created)
	}
	if (t.Status == 4 || t.Status == 5) && i%7 == 0 && t.ResponderID != 0 {
		st.addTimeEntry(TimeEntry{TicketID: t.ID, AgentID: t.ResponderID, TimeSpent: fmt.Sprintf("%02d:%02d", rng.IntN(3), 15*rng.IntN(4)),
			Note: "Investigation and fix", Billable: rng.IntN(2) == 0, CreatedAt: t.UpdatedAt}, g.now)
	}
}

// subject places the ticket in HR (an eighth of them) or with an IT team,
// and draws its subject and category; it returns the agents who may take
// it.
func (g *generator) subject(t *Ticket, req Requester) []int64 {
	rng := g.rng
	if rng.IntN(100) < 12 {
		t.WorkspaceID = HRWorkspaceID
		t.GroupID = g.hrGroup.ID
		t.Type = "Service Request"
		subj := g.pick(hrSubjects)
		if strings.Contains(subj, "%s") {
			subj = fmt.Sprintf(subj, req.Name())
		}
		t.Subject, t.Category = subj, "HR"
		return g.hrMembers
	}
	tm := g.teams[rng.IntN(len(g.teams))]
	set := tm.set
	subj := g.pick(set.subjects)
	switch {
	case strings.Contains(subj, "%s"):
		subj = fmt.Sprintf(subj, req.Name())
	case strings.Contains(subj, "%d"):
		subj = fmt.Sprintf(subj, 1+rng.IntN(6))
	}
	t.Subject, t.Category, t.GroupID = subj, set.category, tm.group.ID
	if tm.group.Name == "Network" && rng.IntN(100) < 20 {
		t.Type, t.Source = "Alert", 7
		t.Subject = "Monitoring: " + strings.ToLower(subj[:1]) + subj[1:]
	}
	return tm.members
}

// status draws the status, which depends on age: old tickets are mostly
// done.
func (g *generator) status(t *Ticket, age time.Duration) {
	closedShare := 15
	if age > 30*24*time.Hour {
		closedShare = 85
	} else if age > 3*24*time.Hour {
		closedShare = 55
	}
	switch r := g.rng.IntN(100); {
	case r < closedShare:
		t.Status = 4 + g.rng.IntN(2)
	case r < closedShare+8:
		t.Status = StatusWaitingOnVendor
	case r < closedShare+14:
		t.Status = StatusScheduled
	case r < closedShare+26:
		t.Status = 3
	default:
		t.Status = 2
	}
	if t.WorkspaceID == HRWorkspaceID && t.Status > 5 {
		t.Status = 3
	}
}

// assignment draws the responder among members: most are assigned; new
// urgent ones are often not.
func (g *generator) assignment(t *Ticket, age time.Duration, members []int64) {
	rng := g.rng
	if rng.IntN(100) < 82 || t.Status == 4 || t.Status == 5 {
		t.ResponderID = members[rng.IntN(len(members))]
	}
	if t.Priority == 4 && age < 6*time.Hour && rng.IntN(100) < 50 && t.Status != 4 && t.Status != 5 {
		t.ResponderID = 0
	}
}

// times draws when the ticket was last updated and first responded to
// (within twice its first-response time), and sets when it was resolved
// or closed.
func (g *generator) times(t *Ticket, created time.Time, firstResponse time.Duration) {
	rng := g.rng
	span := g.now.Sub(created)
	updated := created
	if span > 0 {
		updated = created.Add(time.Duration(rng.Int64N(int64(span))))
	}
	t.UpdatedAt = norm(updated)
	if t.ResponderID != 0 && rng.IntN(100) < 85 {
		t.FirstRespondedAt = norm(created.Add(time.Duration(rng.Int64N(int64(firstResponse*2) + 1))))
		if t.FirstRespondedAt.After(t.UpdatedAt) {
			t.FirstRespondedAt = t.UpdatedAt
		}
	}
	if t.Status == 4 || t.Status == 5 {
		t.ResolvedAt = t.UpdatedAt
		if t.Status == 5 {
			t.ClosedAt = t.UpdatedAt
		}
	}
}

// tags draws up to two tags.
func (g *generator) tags(t *Ticket) {
	for range g.rng.IntN(3) {
		if tag := g.pick(tagPool); !slices.Contains(t.Tags, tag) {
			t.Tags = append(t.Tags, tag)
		}
	}
}

// fields draws the custom fields and, in IT, the linked asset and
// problem.
func (g *generator) fields(t *Ticket) {
	rng := g.rng
	if t.WorkspaceID != DefaultWorkspaceID {
		t.CustomFields = map[string]any{"environment": nil, "vip_requester": false, "affected_users": nil}
		return
	}
	t.CustomFields = map[string]any{
		"environment":    []any{"Production", "Production", "Staging", "Development", nil}[rng.IntN(5)],
		"vip_requester":  rng.IntN(100) < 8,
		"affected_users": float64(1 + rng.IntN(40)),
	}
	if t.Priority == 4 {
		t.CustomFields["affected_users"] = float64(50 + rng.IntN(500))
	}
	if rng.IntN(100) < 15 {
		t.AssetDisplayIDs = []int64{g.assetIDs[rng.IntN(len(g.assetIDs))]}
	}
	if t.Category == "Network" && rng.IntN(100) < 10 {
		t.ProblemID = g.problemIDs[0]
	}
}

// conversations adds one to three conversations: replies from the
// responder and the requester, and private notes.
func (g *generator) conversations(t *Ticket, req Requester, created time.Time) {
	rng := g.rng
	n := 1 + rng.IntN(3)
	at := created
	for k := range n {
		at = at.Add(time.Duration(1+rng.IntN(180)) * time.Minute)
		if at.After(t.UpdatedAt) {
			at = t.UpdatedAt
		}
		c := Conversation{TicketID: t.ID, CreatedAt: at}
		uid := t.ResponderID
		if uid == 0 {
			uid = DefaultAgentID
		}
		switch {
		case k%2 == 0 && t.ResponderID != 0:
			c.UserID, c.Source, c.Body = uid, ConversationSourceReply, "<div>Thanks for reporting this, we are looking into it.</div>"
			c.SupportEmail, c.FromEmail = SupportEmail, `"Service Desk" <`+SupportEmail+">"
			c.ToEmails, c.BCCEmails = []string{req.PrimaryEmail}, []string{}
		case k%2 == 1:
			c.UserID, c.Source, c.Incoming, c.Body = req.ID, ConversationSourceReply, true, "<div>Any update on this?</div>"
			c.FromEmail, c.ToEmails = req.PrimaryEmail, []string{SupportEmail}
		default:
			c.UserID, c.Source, c.Private, c.Body = uid, ConversationSourceNote, true, "<div>Checked the logs; escalating to the vendor if it recurs.</div>"
		}
		g.d.st.addConversation(c, g.now)
	}
}

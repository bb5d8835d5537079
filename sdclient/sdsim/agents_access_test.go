package sdsim_test

import (
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestGeneratedAgentsLikeFreshservice: every generated agent has a role
// with an assignment scope, the default admin is an entire_helpdesk account
// admin in every workspace (so that whoever acts as it may act on every
// generated ticket), and group members list their groups in member_of.
func TestGeneratedAgentsLikeFreshservice(t *testing.T) {
	d := sdsim.New(sdsim.WithClock(func() time.Time { return genNow }), sdsim.WithGenerated(1, 60))
	workspaces := map[int64]bool{}
	for _, id := range d.TicketIDs() {
		tk, _ := d.Ticket(id)
		workspaces[tk.WorkspaceID] = true
	}
	if !workspaces[sdsim.HRWorkspaceID] || !workspaces[sdsim.DefaultWorkspaceID] {
		t.Fatalf("generated tickets are in workspaces %v, want IT and HR", workspaces)
	}
	admin, _ := d.Agent(sdsim.DefaultAgentID)
	for _, w := range d.Workspaces() {
		if !slices.Contains(admin.WorkspaceIDs, w.ID) {
			t.Errorf("the default admin is not in workspace %d (%s): %v", w.ID, w.Name, admin.WorkspaceIDs)
		}
	}
	if len(admin.Roles) != 1 || admin.Roles[0].AssignmentScope != "entire_helpdesk" {
		t.Errorf("admin roles %+v", admin.Roles)
	}
	for _, a := range d.Agents() {
		if len(a.Roles) == 0 || a.Roles[0].AssignmentScope == "" {
			t.Errorf("agent %s has no role with a scope: %+v", a.Email, a.Roles)
		}
	}
	for _, g := range d.Groups() {
		for _, m := range g.Members {
			a, _ := d.Agent(m)
			if !slices.Contains(a.MemberOf, g.ID) {
				t.Errorf("agent %s is a member of %s but member_of is %v", a.Email, g.Name, a.MemberOf)
			}
		}
	}
}

// TestAddedAgentKeepsWhatTheTestGave: an agent added without roles or
// workspaces gets none and the primary workspace; the default admin joins
// a workspace added later, other agents do not.
func TestAddedAgentKeepsWhatTheTestGave(t *testing.T) {
	d := sdsim.New()
	a := d.AddAgent(sdsim.Agent{FirstName: "Zed", Email: "zed@example.com"})
	ws := d.AddWorkspace(sdsim.Workspace{Name: "Facilities"})
	a, _ = d.Agent(a.ID)
	if len(a.Roles) != 0 || !slices.Equal(a.WorkspaceIDs, []int64{sdsim.DefaultWorkspaceID}) {
		t.Fatalf("zed: roles %+v workspaces %v", a.Roles, a.WorkspaceIDs)
	}
	admin, _ := d.Agent(sdsim.DefaultAgentID)
	if !slices.Equal(admin.WorkspaceIDs, []int64{sdsim.DefaultWorkspaceID, ws.ID}) {
		t.Fatalf("admin workspaces %v", admin.WorkspaceIDs)
	}
}

package oncall_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/oncall"
)

func TestPolicyInvolves(t *testing.T) {
	cfg := mustParse(t, fixture(t, "involves.yaml"))
	for _, tc := range []struct {
		name, policy, email, slackID string
		want                         bool
	}{
		{"schedule member by e-mail", "it-urgent", "alice@example.com", "UALICE", true},
		{"e-mail matches whatever the case", "it-urgent", "ALICE@example.COM", "", true},
		{"e-mail with stray spaces", "it-urgent", " alice@example.com ", "", true},
		{"schedule member by Slack id", "it-urgent", "someone@example.com", "U0123ABC", true},
		{"Slack id alone", "it-urgent", "", "U0123ABC", true},
		{"Slack ids match exactly", "it-urgent", "", "u0123abc", false},
		{"override member", "it-urgent", "carol@example.com", "UCAROL", true},
		{"user: level by e-mail", "it-urgent", "boss@example.com", "", true},
		{"user: level by Slack id", "it-urgent", "", "U0BOSS", true},
		{"member of a schedule the policy does not name", "it-urgent", "nina@example.com", "UNINA", false},
		{"outsider", "it-urgent", "mallory@example.com", "UMALLORY", false},
		{"a Slack id is not an e-mail", "it-urgent", "U0123ABC", "", false},
		{"an e-mail is not a Slack id", "it-urgent", "", "alice@example.com", false},
		{"nobody", "it-urgent", "", "", false},
		{"group levels involve nobody", "groups-only", "alice@example.com", "U0123ABC", false},
		{"unknown policy", "gone", "alice@example.com", "U0123ABC", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cfg.Policy(tc.policy).Involves(tc.email, tc.slackID); got != tc.want {
				t.Errorf("policy %s Involves(%q, %q) = %v, want %v", tc.policy, tc.email, tc.slackID, got, tc.want)
			}
		})
	}
}

// mapGroups resolves groups from a map and counts the lookups.
type mapGroups struct {
	members map[string][]string
	calls   int
}

func (m *mapGroups) GroupMembers(_ context.Context, group string) ([]string, error) {
	m.calls++
	ids, ok := m.members[group]
	if !ok {
		return nil, errors.New("no_such_subteam")
	}
	return ids, nil
}

// The people of a group: level may act on the policy's pages: they were
// paged through the group.
func TestPolicyInvolvesWithGroups(t *testing.T) {
	cfg := mustParse(t, fixture(t, "involves.yaml"))
	g := &mapGroups{members: map[string][]string{"S0GROUP": {"UGRACE"}, "@it-oncall": {"UHANDLE"}}}
	for _, tc := range []struct {
		name, policy, email, slackID string
		want, wantErr                bool
	}{
		{"member of the group level by Slack id", "it-urgent", "grace@example.com", "UGRACE", true, false},
		{"member of a group given by @handle", "groups-only", "", "UHANDLE", true, false},
		{"a group member of another policy", "groups-only", "", "UGRACE", false, false},
		{"schedule member without asking Slack", "it-urgent", "alice@example.com", "", true, false},
		{"outsider", "it-urgent", "mallory@example.com", "UMALLORY", false, false},
		{"no Slack id: groups cannot tell", "it-urgent", "grace@example.com", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cfg.Policy(tc.policy).InvolvesWithGroups(t.Context(), tc.email, tc.slackID, g)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("policy %s InvolvesWithGroups(%q, %q) = %v, %v; want %v (error %v)", tc.policy, tc.email, tc.slackID, got, err, tc.want, tc.wantErr)
			}
		})
	}
	// Involves alone still counts no group member.
	if cfg.Policy("it-urgent").Involves("grace@example.com", "UGRACE") {
		t.Error("Involves counts a group member")
	}
	// A person the rota names is found without a lookup.
	g.calls = 0
	if ok, _ := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "U0BOSS", g); !ok || g.calls != 0 {
		t.Errorf("user level: ok %v after %d group lookups, want true after none", ok, g.calls)
	}
	// A group that cannot be resolved counts nobody and says so.
	broken := &mapGroups{}
	ok, err := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "UGRACE", broken)
	if ok || err == nil || !strings.Contains(err.Error(), "S0GROUP") {
		t.Errorf("unresolvable group: %v, %v; want false and an error naming S0GROUP", ok, err)
	}
	// nil resolver: Involves.
	if ok, err := cfg.Policy("it-urgent").InvolvesWithGroups(t.Context(), "", "UGRACE", nil); ok || err != nil {
		t.Errorf("nil resolver: %v, %v", ok, err)
	}
	if got := cfg.Policy("it-urgent").Groups(); len(got) != 1 || got[0] != "S0GROUP" {
		t.Errorf("Groups = %q", got)
	}
	var none *oncall.Policy
	if ok, err := none.InvolvesWithGroups(t.Context(), "", "UGRACE", g); ok || err != nil || none.Groups() != nil {
		t.Errorf("nil policy: %v, %v", ok, err)
	}
}

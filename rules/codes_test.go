package rules

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient"
)

// Issue 23, 10: a query that asks for a status, priority or source no
// ticket can have is a load error at its position, with the valid values;
// the desk's own codes (custom statuses) replace the built-in ones.
func TestQueryCodesAreChecked(t *testing.T) {
	desk := []Option{WithFieldChoices("status", append(BuiltinChoices("status"), sdclient.FieldChoice{ID: 6, Value: "Awaiting vendor"}))}
	tests := []struct {
		query string
		opts  []Option
		want  string // "" loads
	}{
		{"status:open AND priority:4", nil, ""},
		{"priority:3 OR priority:'2'", nil, ""},
		{"source:10 AND status:5", nil, ""},
		{"priority:>3", nil, ""}, // comparisons are the desk's business
		{"priority:9 AND status:2", nil, `rules.yaml:4:13: rule "r": query: priority:9: no ticket has priority 9; the known priorities are 1 (Low), 2 (Medium), 3 (High), 4 (Urgent)`},
		{"priority:'9'", nil, "priority:9: no ticket has priority 9"},
		{"status:2 AND status:99", nil, `rules.yaml:4:26: rule "r": query: status:99: no ticket has status 99; the known statuses are 2 (Open), 3 (Pending), 4 (Resolved), 5 (Closed); a custom status of your desk: rules check --status 99:NAME (deskbot reads them from the desk)`},
		{"source:42", nil, "source:42: no ticket has source 42; the known sources are 1 (Email), 2 (Portal), 3 (Phone), 4 (Chat), 5 (Feedback widget), 6 (Yammer), 7 (AWS Cloudwatch), 8 (Pagerduty), 9 (Walkup), 10 (Slack)"},
		{"status:6", desk, ""},
		{"status:7", desk, "status:7: no ticket has status 7; the desk's statuses are 2 (Open), 3 (Pending), 4 (Resolved), 5 (Closed), 6 (Awaiting vendor)"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			src := "version: 1\nrules:\n  - name: r\n    query: \"" + tc.query + "\"\n    actions: [{note: n}]\n"
			_, err := Load("rules.yaml", []byte(src), tc.opts...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("load: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("load: %v\nwant an error with %q", err, tc.want)
			}
			if tc.want != "" && strings.Contains(tc.want, "desk's") && strings.Contains(err.Error(), "--status") {
				t.Errorf("the desk's codes need no --status: %v", err)
			}
		})
	}
}

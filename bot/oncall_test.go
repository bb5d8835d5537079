package bot

import "testing"

func TestAlertPageKey(t *testing.T) {
	for in, want := range map[string]string{
		"deskbot:f=page-urgent/42/3.1/0":  "page-urgent/42/3",
		"deskbot:f=page-urgent/42/3.12/7": "page-urgent/42/3",
		"page-urgent/42/1":                "",
		"deskbot:f=x":                     "",
	} {
		got, ok := alertPageKey(in)
		if got != want || ok != (want != "") {
			t.Errorf("alertPageKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestAlertKeyPermit(t *testing.T) {
	for _, tt := range []struct {
		id       int64
		rule     string
		key      string
		accepted bool
	}{
		{2, "watch", "deskbot:f=watch/2/1.1/0", true},
		{2, "a/b", "deskbot:f=a/b/2/3.4/1", true},
		{2, "page-urgent", "deskbot:f=page-urgent/1/1.1/0", false}, // another ticket's firing
		{2, "watch", "deskbot:f=page-urgent/2/1.1/0", false},       // another rule's
		{2, "watch", "deskbot:f=watch/x/1.1/0", false},
		{2, "watch", "watch/2/1", false},
	} {
		if err := alertKeyPermit(tt.id, tt.rule, tt.key); (err == nil) != tt.accepted {
			t.Errorf("alertKeyPermit(%d, %q, %q) = %v, want accepted %v", tt.id, tt.rule, tt.key, err, tt.accepted)
		}
	}
}

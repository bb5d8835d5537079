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

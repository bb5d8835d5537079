package console_test

import (
	"context"
	"strings"
	"testing"
)

// TestConsoleHome: /home prints the person's home as text, with the
// commands that do what the Home tab's buttons do.
func TestConsoleHome(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader("/home\n"))
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Your deskbot home", "Assigned to you: 1", "• #43 Waiting on vendor · High — VPN down", "Your requests: 0", "(new ticket: /ticket new <subject> · your queue: /ticket mine)"} {
		if !strings.Contains(got, want) {
			t.Errorf("/home lacks %q:\n%s", want, got)
		}
	}
}

package console

import (
	"context"

	"github.com/deskbot/deskbot/bot/chat"
)

// HomeRouter is implemented by a Router that builds homes (*bot.Router
// does): /home then prints the person's home, as Slack's Home tab shows it.
type HomeRouter interface {
	// Home is what the caller's home shows.
	Home(ctx context.Context, caller chat.Caller) chat.Home
}

// home prints the home of the person at the console (/home); its quick
// actions are the commands that do the same.
func (c *Console) home(ctx context.Context, a *answer) {
	hr, ok := c.router.(HomeRouter)
	if !ok {
		a.printf("this deskbot has no home; try /ticket mine\n")
		return
	}
	h := hr.Home(ctx, c.caller())
	a.printf("%s\n  (new ticket: /ticket new <subject> · your queue: /ticket mine)\n", h.Text())
}

package chat

import (
	"fmt"
	"strings"
	"time"
)

// Home is what a person's home shows (Slack's App Home tab, the console's
// /home): their open tickets as agent and as requester, who is on call
// now, and the quick actions. The router builds it (bot.Router.Home), the
// transports render it.
type Home struct {
	// NoAccount, when set, is why the viewer has no tickets to show (no
	// e-mail, no desk account); the lists are empty then.
	NoAccount string
	// Assigned are the open tickets assigned to the viewer (Agent only).
	Assigned HomeList
	Agent    bool // the viewer is an agent of the desk
	// Requested are the open tickets the viewer asked for.
	Requested HomeList
	// OnCall is who is on call now, per schedule, in words; OnCallMarkup
	// the same as chat markup (mentions) for transports that render it.
	OnCall       string
	OnCallMarkup string
	Actions      []Button
	BuiltAt      time.Time // when the router built it (the rebuild bound)
	// Fresh: built for this call; false when it is the home built for an
	// earlier one within the router's interval, which a transport that
	// showed it need not show again.
	Fresh bool
}

// HomeList is one list of a Home: the first tickets and how many there are.
type HomeList struct {
	Tickets []HomeTicket
	Total   int
	// Source says where the list was read (the mirror and how fresh, or
	// the desk and why); "" when not said.
	Source string
	// Error, when set, says the list could not be read.
	Error string
}

// More is how many tickets the list does not show.
func (l HomeList) More() int { return max(l.Total-len(l.Tickets), 0) }

// HomeTicket is one ticket of a HomeList.
type HomeTicket struct {
	ID       int64
	Subject  string
	Status   string
	Priority string
	URL      string // "" when no desk URL is configured
}

// Quick actions of a Home.
const (
	ActionHomeNewTicket = "deskbot_home_new_ticket"
	ActionHomeMyQueue   = "deskbot_home_my_queue"
)

// IsHomeAction reports whether a button belongs to a Home.
func IsHomeAction(id string) bool { return id == ActionHomeNewTicket || id == ActionHomeMyQueue }

// Line is the ticket in one line of text.
func (t HomeTicket) Line() string {
	return fmt.Sprintf("#%d %s · %s — %s", t.ID, t.Status, t.Priority, t.Subject)
}

// Text renders the home as plain text (console).
func (h Home) Text() string {
	var b strings.Builder
	b.WriteString("Your deskbot home\n")
	if h.NoAccount != "" {
		b.WriteString("  " + h.NoAccount + "\n")
	} else {
		if h.Agent {
			writeHomeList(&b, "Assigned to you", h.Assigned)
		}
		writeHomeList(&b, "Your requests", h.Requested)
	}
	if h.OnCall != "" {
		b.WriteString("On call now\n")
		for _, l := range strings.Split(h.OnCall, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func writeHomeList(b *strings.Builder, title string, l HomeList) {
	fmt.Fprintf(b, "%s: %d\n", title, l.Total)
	if l.Error != "" {
		b.WriteString("  (" + l.Error + ")\n")
		return
	}
	for _, t := range l.Tickets {
		b.WriteString("  • " + t.Line() + "\n")
	}
	if n := l.More(); n > 0 {
		fmt.Fprintf(b, "  … and %d more\n", n)
	}
	if l.Total == 0 {
		b.WriteString("  nothing open\n")
	}
	if l.Source != "" {
		b.WriteString("  (" + l.Source + ")\n")
	}
}

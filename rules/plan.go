package rules

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Plan is what `deskbot rules test` shows: every decision the set takes on
// tickets at now, grouped by ticket in input order. It changes nothing.
func Plan(set *Set, tickets []*sdclient.Ticket, now time.Time) []Decision {
	return set.Evaluate(tickets, now)
}

// WritePlan prints decisions for a person: per ticket, each rule that fires
// and the actions it would take, with rendered texts.
func WritePlan(w io.Writer, decisions []Decision) error {
	bw := bufio.NewWriter(w)
	var last int64
	tickets := 0
	for i, d := range decisions {
		if i == 0 || d.TicketID != last {
			if i > 0 {
				bw.WriteString("\n")
			}
			tickets++
			last = d.TicketID
			subject := ""
			if d.Ticket != nil {
				subject = " " + strconv.Quote(d.Ticket.Subject)
			}
			fmt.Fprintf(bw, "ticket #%d%s\n", d.TicketID, subject)
		}
		if d.Err != nil {
			fmt.Fprintf(bw, "  %s: ERROR: %v\n", d.Rule, d.Err)
			continue
		}
		fmt.Fprintf(bw, "  %s fires (once: %s)\n", d.Rule, onceString(d.Once))
		for _, a := range d.Actions {
			fmt.Fprintf(bw, "    %s\n", describeAction(a))
		}
	}
	if len(decisions) == 0 {
		bw.WriteString("no rule fires\n")
	} else {
		fmt.Fprintf(bw, "\n%d decision(s) on %d ticket(s)\n", len(decisions), tickets)
	}
	return bw.Flush()
}

func onceString(o Once) string {
	switch o.Mode {
	case OnceTicket:
		return "ticket"
	case OnceEvery:
		return "every " + shortDuration(o.Period)
	}
	return "episode"
}

// shortDuration prints d as a rules file would write it: 30m, 1h30m, 2h,
// 45s (Go's String adds the zero units: 30m0s, 2h0m0s).
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// describeAction renders one action on one line.
func describeAction(a Action) string {
	switch a.Kind {
	case ActionNote:
		return "note: " + oneLine(a.Text)
	case ActionReply:
		return "reply: " + oneLine(a.Text)
	case ActionAlert:
		s := "alert " + a.Channel
		if a.Mention != "" {
			s += " " + a.Mention
		}
		return s + ": " + oneLine(a.Text)
	case ActionUpdate:
		return "update: " + describeUpdate(a.Update, a.AssignEmail)
	case ActionPage:
		return "page " + a.Policy + " in " + a.Channel + ": " + oneLine(a.Text)
	}
	return string(a.Kind)
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", `\n`)
}

func describeUpdate(u *sdclient.TicketUpdate, email string) string {
	var parts []string
	if u != nil {
		b, err := json.Marshal(u)
		if err == nil && string(b) != "{}" {
			parts = append(parts, string(b))
		}
	}
	if email != "" {
		parts = append(parts, "assign to "+email)
	}
	return strings.Join(parts, " ")
}

// ReadTickets reads tickets for `deskbot rules test`: a JSON array of
// tickets, or the API's envelope {"tickets": [...]}.
func ReadTickets(r io.Reader) ([]*sdclient.Ticket, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read tickets: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("read tickets: empty input: want a JSON array of tickets or {\"tickets\": [...]}")
	}
	var tickets []*sdclient.Ticket
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &tickets); err != nil {
			return nil, fmt.Errorf("read tickets: %w", err)
		}
	case '{':
		var env struct {
			Tickets *[]*sdclient.Ticket `json:"tickets"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			return nil, fmt.Errorf("read tickets: %w", err)
		}
		if env.Tickets == nil {
			return nil, errors.New(`read tickets: object without "tickets": want a JSON array of tickets or {"tickets": [...]}`)
		}
		tickets = *env.Tickets
	default:
		return nil, errors.New("read tickets: want a JSON array of tickets or {\"tickets\": [...]}")
	}
	for i, t := range tickets {
		if t == nil {
			return nil, fmt.Errorf("read tickets: ticket %d is null", i)
		}
	}
	return tickets, nil
}

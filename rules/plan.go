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

// onceString prints a once: setting as the rules file writes it.
func onceString(o Once) string {
	switch o.Mode {
	case OnceTicket:
		return "ticket"
	case OnceEvery:
		return "every " + ShortDuration(o.Period)
	}
	return "episode"
}

// ShortDuration prints d as a rules file would write it: 30m, 1h30m, 2h,
// 45s (Go's String adds the zero units: 30m0s, 2h0m0s). The plan, the
// dry run and the CLI print durations with it.
func ShortDuration(d time.Duration) string {
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
	case ActionDM:
		return "dm " + a.To + " (else " + a.Channel + "): " + oneLine(a.Text)
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

// RequiredTicketFields are the fields every ticket of a `rules test`
// fixture must have (not null): the desk always sends them, and a fixture
// without them would test rules on tickets no desk has (status 0, created
// at the zero time), where a forgotten field passes for a rule that holds.
var RequiredTicketFields = []string{"id", "subject", "status", "priority", "requester_id", "created_at", "updated_at"}

// maxTicketProblems caps the problems ReadTickets lists.
const maxTicketProblems = 10

// ReadTickets reads tickets for `deskbot rules test`: a JSON array of
// tickets, or the API's envelope {"tickets": [...]}. Each ticket must have
// the RequiredTicketFields; the error names every ticket that does not, by
// its index in the list (from 0) and its id, one per line.
func ReadTickets(r io.Reader) ([]*sdclient.Ticket, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read tickets: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("read tickets: empty input: want a JSON array of tickets or {\"tickets\": [...]}")
	}
	var raw []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("read tickets: %w", err)
		}
	case '{':
		var env struct {
			Tickets *[]json.RawMessage `json:"tickets"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			return nil, fmt.Errorf("read tickets: %w", err)
		}
		if env.Tickets == nil {
			return nil, errors.New(`read tickets: object without "tickets": want a JSON array of tickets or {"tickets": [...]}`)
		}
		raw = *env.Tickets
	default:
		return nil, errors.New("read tickets: want a JSON array of tickets or {\"tickets\": [...]}")
	}
	tickets := make([]*sdclient.Ticket, len(raw))
	var problems []string
	for i, m := range raw {
		p := checkTicket(i, m, &tickets[i])
		if p == "" {
			continue
		}
		if len(problems) == maxTicketProblems {
			problems = append(problems, "read tickets: and more")
			break
		}
		problems = append(problems, "read tickets: "+p)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return tickets, nil
}

// checkTicket decodes ticket i of a fixture into *dst, or says what is
// wrong with it.
func checkTicket(i int, m json.RawMessage, dst **sdclient.Ticket) string {
	if string(m) == "null" {
		return fmt.Sprintf("ticket [%d] is null", i)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(m, &fields); err != nil {
		return fmt.Sprintf("ticket [%d]: want an object, got %s", i, jsonKind(m))
	}
	who := fmt.Sprintf("ticket [%d]", i)
	if id, ok := fields["id"]; ok && string(id) != "null" {
		who += " (id " + string(id) + ")"
	}
	var missing []string
	for _, f := range RequiredTicketFields {
		if v, ok := fields[f]; !ok || string(v) == "null" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		s := "field"
		if len(missing) > 1 {
			s = "fields"
		}
		return fmt.Sprintf("%s: missing required %s %s (every ticket needs %s, as the desk sends them)",
			who, s, strings.Join(missing, ", "), strings.Join(RequiredTicketFields, ", "))
	}
	t := new(sdclient.Ticket)
	if err := json.Unmarshal(m, t); err != nil {
		return fmt.Sprintf("%s: %v", who, err)
	}
	*dst = t
	return ""
}

// jsonKind names the JSON type of a value for messages.
func jsonKind(m json.RawMessage) string {
	switch m[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

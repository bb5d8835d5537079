package bot

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
)

// openClause is (status:2 OR status:3 OR ...) over every open status.
func openClause(choices []sdclient.FieldChoice) string {
	var terms []string
	for _, ch := range choices {
		if sdclient.IsOpenStatus(int(ch.ID)) {
			terms = append(terms, fmt.Sprintf("status:%d", ch.ID))
		}
	}
	if len(terms) == 0 {
		terms = []string{"status:2", "status:3"}
	}
	return "(" + strings.Join(terms, " OR ") + ")"
}

// resolveStatus reads open|pending|resolved|closed, a status name or an id.
func resolveStatus(v string, choices []sdclient.FieldChoice) (int, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil {
		for _, ch := range choices {
			if int(ch.ID) == n {
				return n, nil
			}
		}
		return 0, refuse("status %d does not exist; statuses are %s", n, statusList(choices))
	}
	for _, ch := range choices {
		if strings.EqualFold(ch.Value, v) {
			return int(ch.ID), nil
		}
	}
	fixed := map[string]int{"open": sdclient.StatusOpen, "pending": sdclient.StatusPending, "resolved": sdclient.StatusResolved, "closed": sdclient.StatusClosed}
	if n, ok := fixed[strings.ToLower(v)]; ok {
		return n, nil
	}
	return 0, refuse("unknown status %q; statuses are %s", v, statusList(choices))
}

func statusList(choices []sdclient.FieldChoice) string {
	var s []string
	for _, ch := range choices {
		s = append(s, fmt.Sprintf("%s (%d)", ch.Value, ch.ID))
	}
	return strings.Join(s, ", ")
}

func statusName(choices []sdclient.FieldChoice, id int) string {
	for _, ch := range choices {
		if int(ch.ID) == id {
			return ch.Value
		}
	}
	for _, ch := range defaultStatuses() {
		if int(ch.ID) == id {
			return ch.Value
		}
	}
	return fmt.Sprintf("status %d", id)
}

func parsePriority(s string) (int, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "1":
		return sdclient.PriorityLow, true
	case "medium", "2":
		return sdclient.PriorityMedium, true
	case "high", "3":
		return sdclient.PriorityHigh, true
	case "urgent", "4":
		return sdclient.PriorityUrgent, true
	}
	return 0, false
}

func priorityName(p int) string {
	switch p {
	case sdclient.PriorityLow:
		return "Low"
	case sdclient.PriorityMedium:
		return "Medium"
	case sdclient.PriorityHigh:
		return "High"
	case sdclient.PriorityUrgent:
		return "Urgent"
	}
	return fmt.Sprintf("priority %d", p)
}

// htmlText turns typed text into the desk's HTML body.
func htmlText(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
}

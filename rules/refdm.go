package rules

import (
	"fmt"
	"strings"
)

// dmDigestExample is the reference's example of a dm: and a digest rule;
// a test loads it.
const dmDigestExample = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: nudge-before-breach
    query: status:open
    if: 'has_due(ticket) && ticket.due_by - now() < duration("30m")'
    actions:
      - dm: {to: assignee, text: "#{{ ticket.id }} {{ ticket.subject }} breaches at {{ ticket.due_by }}"}
  - name: morning-digest
    cron: "0 8 * * 1-5"
    digest: {channel: desk, breaching_within: 4h, list: 5}
`

// dmKeyDocs and digestKeyDocs say what each key means (a test keeps them
// in step with dmKeys and digestKeys).
var (
	dmKeyDocs = map[string]string{
		"to":      "`assignee` (the ticket's agent), `requester`, an e-mail or a Slack user id (`U...`); required",
		"text":    "the message, a template; required",
		"channel": "where it goes when the person has no Slack account (or the ticket no assignee), saying why: an alias or `#name`; default the channel of the rule's first alert, else the `desk` alias (`rules check` refuses a rule with neither)",
	}
	digestKeyDocs = map[string]string{
		"channel":          "where the digest goes: an alias or `#name`; default the `desk` alias",
		"breaching_within": fmt.Sprintf("list the tickets due (`due_by`) within this duration, overdue ones included; default %s", strings.TrimSuffix(strings.TrimSuffix(DefaultDigestWithin.String(), "0s"), "0m")),
		"list":             fmt.Sprintf("how many tickets each list shows, 1 to %d; default %d", maxDigestList, DefaultDigestList),
	}
)

// writeDMDigestReference writes the reference's sections on dm: and on
// digest rules.
func writeDMDigestReference(p func(format string, args ...any)) {
	p("\n## `dm:`\n\n")
	p("A direct message to one person. deskbot looks their e-mail up in Slack (`users.lookupByEmail`, cached an hour, a miss five minutes) and writes to them; sent once per firing like every action.\n\n")
	p("| key | meaning |\n|---|---|\n")
	for _, k := range dmKeys {
		p("| `%s` | %s |\n", k, dmKeyDocs[k])
	}
	p("\n## Digest rules\n\n")
	p("A rule with `digest:` instead of `actions:` posts one summary of the open tickets (those of its optional `query:`) on its `cron:` or `every:`: counts by status, priority and group, what breaches next and the oldest unassigned, with links. It reads deskbot's mirror (no desk request); later runs of the same day (UTC) update the day's message; a digest with no ticket posts nothing. It takes no `if:`, `once:` or `actions:`.\n\n")
	p("| key of `digest:` | meaning |\n|---|---|\n")
	for _, k := range digestKeys {
		p("| `%s` | %s |\n", k, digestKeyDocs[k])
	}
	p("\n```yaml\n%s```\n", dmDigestExample)
}

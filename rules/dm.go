package rules

import (
	"net/mail"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

// ActionDM is a direct message to a person: the ticket's assignee, its
// requester, or a named user (dm:).
const ActionDM ActionKind = "dm"

// The people a dm: names by role; any other to: is an e-mail or a Slack
// user id.
const (
	// DMAssignee is the ticket's assigned agent (responder_id).
	DMAssignee = "assignee"
	// DMRequester is the ticket's requester.
	DMRequester = "requester"
)

// DeskAlias is the channels: alias where a dm: goes when the person has
// no chat account (or the ticket has no assignee) and neither the dm:
// nor an alert of its rule names a channel.
const DeskAlias = "desk"

// dmKeys are the keys of dm:.
var dmKeys = []string{"to", "text", "channel"}

// slackUserRE matches a Slack user id (U... or W...).
var slackUserRE = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// dm loads dm: {to: assignee|requester|E-MAIL|USER_ID, text: TEMPLATE,
// channel: ALIAS|#chan}. A dm: without channel: falls back to the channel
// of its rule's first alert, else the desk alias (see dmChannels).
func (l *loader) dm(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionDM, node: n}
	if n.Kind == yaml.ScalarNode {
		l.rep.Node(n, "dm: want a mapping such as {to: assignee, text: \"...\"}, got %s", yamlpos.Describe(n))
		return a, false
	}
	pairs, ok := l.mapping(n, "dm", dmKeys)
	if !ok {
		return a, false
	}
	has, fieldsOK := actionFields(pairs, map[string]func(*yaml.Node) bool{
		"to":      func(v *yaml.Node) bool { return l.dmTo(v, &a.to) },
		"text":    func(v *yaml.Node) bool { return l.actionText(v, "dm text", textChat, &a.text) },
		"channel": func(v *yaml.Node) bool { return l.actionChannel(v, "dm", &a.channel) },
	})
	ok = yamlpos.Strict(n, pairs) && fieldsOK
	if !l.required(n, "dm", has, [2]string{"to", "to: (assignee, requester, an e-mail or a Slack user id)"}, [2]string{"text", "text"}) {
		ok = false
	}
	return a, ok
}

// dmTo reads the to: of a dm: into *dst.
func (l *loader) dmTo(n *yaml.Node, dst *string) bool {
	s, ok := l.nonBlank(n, "dm to", "empty: want assignee, requester, an e-mail or a Slack user id")
	if !ok {
		return false
	}
	s = strings.TrimSpace(s)
	switch {
	case s == DMAssignee || s == DMRequester, slackUserRE.MatchString(s):
	case strings.Contains(s, "@"):
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			l.rep.Node(n, "dm: to: %q is not a plain e-mail address such as alice@example.com", s)
			return false
		}
	default:
		l.rep.Node(n, "dm: to: %q: want assignee, requester, an e-mail or a Slack user id (U...)", s)
		return false
	}
	*dst = s
	return true
}

// dmChannels gives every dm: of r without channel: its fallback: the
// channel of r's first alert, else the desk alias; a rule with neither is
// a load error at the dm:.
func (l *loader) dmChannels(r *Rule) bool {
	fallback := ""
	for _, a := range r.actions {
		if a.kind == ActionAlert {
			fallback = a.channel
			break
		}
	}
	if fallback == "" {
		fallback, _ = l.channelAlias(DeskAlias)
	}
	ok := true
	for i := range r.actions {
		a := &r.actions[i]
		if a.kind != ActionDM || a.channel != "" {
			continue
		}
		if fallback == "" {
			l.rep.Node(a.node, "dm: missing channel: name one, add an alert to the rule, or define the %s alias under channels: (where the message goes when the person has no chat account or the ticket no assignee)", DeskAlias)
			ok = false
			continue
		}
		a.channel = fallback
	}
	return ok
}

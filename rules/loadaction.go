package rules

import (
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

func (l *loader) loadActions(n *yaml.Node, r *Rule) bool {
	if n.Kind != yaml.SequenceNode {
		l.rep.Node(n, "actions: want a list of note, reply, set, assign, alert or page, got %s", yamlpos.Describe(n))
		return false
	}
	if len(n.Content) == 0 {
		l.rep.Node(n, "actions: empty: a rule needs at least one note, reply, set, assign, alert or page")
		return false
	}
	ok := true
	m := &updateMerger{l: l, at: map[string]setAt{}}
	updateAt := -1
	for _, item := range n.Content {
		item = yamlpos.Resolve(item)
		if item.Kind != yaml.MappingNode {
			l.rep.Node(item, "action: want a mapping such as note: TEXT, got %s", yamlpos.Describe(item))
			ok = false
			continue
		}
		pairs, _ := l.mapping(item, "action", nil)
		if len(pairs) == 0 {
			l.rep.Node(item, "action: empty: want one of %s", strings.Join(actKeys, ", "))
			ok = false
			continue
		}
		if len(pairs) > 1 {
			l.rep.Node(pairs[1].Key, "action: one kind per list item, found %s and %s (start a new item with -)", pairs[0].Key.Value, pairs[1].Key.Value)
			ok = false
			continue
		}
		k, v := pairs[0].Key, pairs[0].Val
		switch k.Value {
		case "note", "reply":
			t, good := l.text(v, k.Value, textHTML)
			if !good {
				ok = false
				continue
			}
			kind := ActionNote
			if k.Value == "reply" {
				kind = ActionReply
			}
			r.actions = append(r.actions, actionSpec{kind: kind, text: t})
		case "set", "assign":
			var good bool
			if k.Value == "set" {
				good = m.set(v)
			} else {
				good = m.assign(v)
			}
			if !good {
				ok = false
				continue
			}
			if updateAt < 0 {
				updateAt = len(r.actions)
				r.actions = append(r.actions, actionSpec{kind: ActionUpdate})
			}
		case "alert":
			a, good := l.alert(v)
			if !good {
				ok = false
				continue
			}
			r.actions = append(r.actions, a)
		case "page":
			a, good := l.page(v)
			if !good {
				ok = false
				continue
			}
			r.actions = append(r.actions, a)
		default:
			l.rep.Node(k, "unknown action %q (want one of %s)", k.Value, strings.Join(actKeys, ", "))
			ok = false
		}
	}
	if updateAt >= 0 {
		r.actions[updateAt].update = &m.upd
		r.actions[updateAt].assignEmail = m.email
		r.actions[updateAt].setTemplates = m.tmpls
	}
	return ok
}

// text compiles a template scalar whose values are written as kind says.
func (l *loader) text(n *yaml.Node, what string, kind textKind) (*template, bool) {
	s, ok := l.str(n, what)
	if !ok {
		return nil, false
	}
	if strings.TrimSpace(s) == "" {
		l.rep.Node(n, "%s: empty text", what)
		return nil, false
	}
	return l.compileText(n, s, what, kind)
}

// compileText compiles template s, the value of scalar n.
func (l *loader) compileText(n *yaml.Node, s, what string, kind textKind) (*template, bool) {
	t, errs := parseTemplate(s)
	for _, e := range errs {
		l.errIn(n, e.Off, "%s: %s", what, e.Msg)
	}
	if t != nil {
		t.kind = kind
		for _, p := range t.parts {
			if p.expr != nil {
				p.expr.at = l.at(n, p.off)
			}
		}
	}
	return t, t != nil
}

func (l *loader) alert(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionAlert}
	pairs, ok := l.mapping(n, "alert", alertKeys)
	if !ok {
		return a, false
	}
	var hasChannel, hasText bool
	for _, p := range pairs {
		switch p.Key.Value {
		case "channel":
			hasChannel = true
			if c, good := l.actionChannel(p.Val, "alert"); good {
				a.channel = c
			} else {
				ok = false
			}
		case "text":
			hasText = true
			t, good := l.text(p.Val, "alert text", textChat)
			ok = ok && good
			a.text = t
		case "mention":
			t, good := l.text(p.Val, "alert mention", textMention)
			ok = ok && good
			a.mention = t
		}
	}
	if !hasChannel {
		l.rep.Node(n, "alert: missing channel")
		ok = false
	}
	if !hasText {
		l.rep.Node(n, "alert: missing text")
		ok = false
	}
	return a, ok
}

// defaultPageText is what a page says when the rule gives no text:.
const defaultPageText = "Ticket #{{ ticket.id }} needs the on-call: {{ ticket.subject }}"

// page loads page: {policy: NAME, channel: ALIAS|#chan, text: TEMPLATE}.
// The channel defaults to the oncall alias; the policy must be one of the
// oncall: section's.
func (l *loader) page(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionPage}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		l.rep.Node(n, "page: want a mapping such as {policy: %s}, got %s", n.Value, yamlpos.Describe(n))
		return a, false
	}
	pairs, ok := l.mapping(n, "page", pageKeys)
	if !ok {
		return a, false
	}
	ok = len(pairs)*2 == len(n.Content)
	var hasPolicy, hasChannel bool
	for _, p := range pairs {
		switch p.Key.Value {
		case "policy":
			hasPolicy = true
			name, good := l.str(p.Val, "page policy")
			if !good {
				ok = false
				continue
			}
			a.policy = name
			switch {
			case l.oncallBad:
				// The oncall: section has errors of its own: reported there.
			case l.oncall == nil:
				l.rep.Node(p.Val, "page: unknown escalation policy %q: the file has no oncall: section defining policies", name)
				ok = false
			case l.oncall.Policy(name) == nil:
				var names []string
				for _, po := range l.oncall.Policies {
					names = append(names, po.Name)
				}
				sort.Strings(names)
				known := "none are defined"
				if len(names) > 0 {
					known = "known: " + strings.Join(names, ", ")
				}
				l.rep.Node(p.Val, "page: unknown escalation policy %q (%s)", name, known)
				ok = false
			}
		case "channel":
			hasChannel = true
			if c, good := l.actionChannel(p.Val, "page"); good {
				a.channel = c
			} else {
				ok = false
			}
		case "text":
			t, good := l.text(p.Val, "page text", textChat)
			ok = ok && good
			a.text = t
		}
	}
	if !hasPolicy {
		l.rep.Node(n, "page: missing policy (the name of an escalation policy under oncall: policies:)")
		ok = false
	}
	if !hasChannel {
		if v, alias := l.channelAlias("oncall"); alias {
			a.channel = v
		} else {
			l.rep.Node(n, "page: missing channel: name one, or define the oncall alias under channels: (where the page card goes)")
			ok = false
		}
	}
	if a.text == nil {
		t, errs := parseTemplate(defaultPageText)
		if len(errs) > 0 || t == nil {
			l.rep.Node(n, "page: default text does not compile")
			return a, false
		}
		a.text = t
	}
	return a, ok
}

// actionChannel reads the channel: of an action (what is "alert" or "page"):
// an alias under channels: or a channel literal (#name or a channel id).
func (l *loader) actionChannel(n *yaml.Node, what string) (string, bool) {
	c, ok := l.str(n, what+" channel")
	if !ok {
		return "", false
	}
	if v, alias := l.channelAlias(c); alias {
		return v, true
	}
	if isChannelLiteral(c) {
		return c, true
	}
	l.rep.Node(n, "%s: unknown channel %q: not an alias under channels: and not #name or a channel id", what, c)
	return "", false
}

// channelAlias resolves an alias of the file's channels: section.
func (l *loader) channelAlias(name string) (string, bool) {
	v, ok := l.chans[name]
	return v, ok
}

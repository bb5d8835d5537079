package rules

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

// loadActions loads the actions: list of rule n into r. Every set: and
// assign: of the rule merge into one update, placed where the first is.
func (l *loader) loadActions(n *yaml.Node, r *Rule) bool {
	if n.Kind != yaml.SequenceNode {
		l.rep.Node(n, "actions: want a list of note, reply, set, assign, alert, page or dm, got %s", yamlpos.Describe(n))
		return false
	}
	if len(n.Content) == 0 {
		l.rep.Node(n, "actions: empty: a rule needs at least one note, reply, set, assign, alert, page or dm")
		return false
	}
	ok := true
	m := &updateMerger{l: l, at: map[string]setAt{}}
	updateAt := -1
	for _, item := range n.Content {
		k, v, good := l.actionItem(yamlpos.Resolve(item))
		if good {
			good = l.loadAction(k, v, r, m, &updateAt)
		}
		ok = ok && good
	}
	ok = l.dmChannels(r) && ok
	if updateAt >= 0 {
		r.actions[updateAt].update = &m.upd
		r.actions[updateAt].assignEmail = m.email
		r.actions[updateAt].setTemplates = m.tmpls
	}
	return ok
}

// actionItem checks that an item of actions: is a mapping of one kind of
// action, and returns its key and value.
func (l *loader) actionItem(item *yaml.Node) (k, v *yaml.Node, ok bool) {
	if item.Kind != yaml.MappingNode {
		l.rep.Node(item, "action: want a mapping such as note: TEXT, got %s", yamlpos.Describe(item))
		return nil, nil, false
	}
	pairs, _ := l.mapping(item, "action", nil)
	switch {
	case len(pairs) == 0:
		l.rep.Node(item, "action: empty: want one of %s", strings.Join(actKeys, ", "))
		return nil, nil, false
	case len(pairs) > 1:
		l.rep.Node(pairs[1].Key, "action: one kind per list item, found %s and %s (start a new item with -)", pairs[0].Key.Value, pairs[1].Key.Value)
		return nil, nil, false
	}
	return pairs[0].Key, pairs[0].Val, true
}

// loadAction loads action k: v into r; set: and assign: merge into m,
// whose action is at *updateAt (-1 before the first).
func (l *loader) loadAction(k, v *yaml.Node, r *Rule, m *updateMerger, updateAt *int) bool {
	var a actionSpec
	var ok bool
	switch k.Value {
	case "note", "reply":
		a.kind = ActionNote
		if k.Value == "reply" {
			a.kind = ActionReply
		}
		a.text, ok = l.text(v, k.Value, textHTML)
	case "set", "assign":
		if k.Value == "set" {
			ok = m.set(v)
		} else {
			ok = m.assign(v)
		}
		if !ok || *updateAt >= 0 {
			return ok
		}
		*updateAt = len(r.actions)
		a.kind = ActionUpdate
	case "alert":
		a, ok = l.alert(v)
	case "page":
		a, ok = l.page(v)
	case "dm":
		a, ok = l.dm(v)
	default:
		l.rep.Node(k, "unknown action %q (want one of %s)", k.Value, strings.Join(actKeys, ", "))
		return false
	}
	if ok {
		r.actions = append(r.actions, a)
	}
	return ok
}

// text compiles a template scalar whose values are written as kind says.
func (l *loader) text(n *yaml.Node, what string, kind textKind) (*template, bool) {
	s, ok := l.nonBlank(n, what, "empty text")
	if !ok {
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

// actionFields loads the keys of an action's mapping in file order, each
// with its function; it reports which keys it found, and false when one
// did not load.
func actionFields(pairs []yamlpos.Pair, load map[string]func(v *yaml.Node) bool) (has map[string]bool, ok bool) {
	has, ok = map[string]bool{}, true
	for _, p := range pairs {
		has[p.Key.Value] = true
		if f := load[p.Key.Value]; f != nil && !f(p.Val) {
			ok = false
		}
	}
	return has, ok
}

// alert loads alert: {channel: ALIAS|#chan, text: TEMPLATE, mention:
// TEMPLATE}.
func (l *loader) alert(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionAlert}
	pairs, ok := l.mapping(n, "alert", alertKeys)
	if !ok {
		return a, false
	}
	has, ok := actionFields(pairs, map[string]func(*yaml.Node) bool{
		"channel": func(v *yaml.Node) bool { return l.actionChannel(v, "alert", &a.channel) },
		"text":    func(v *yaml.Node) bool { return l.actionText(v, "alert text", textChat, &a.text) },
		"mention": func(v *yaml.Node) bool { return l.actionText(v, "alert mention", textMention, &a.mention) },
	})
	if !l.required(n, "alert", has, [2]string{"channel", "channel"}, [2]string{"text", "text"}) {
		ok = false
	}
	return a, ok
}

// required reports at n, in order, each field that has lacks, as what
// (the action: "alert", "dm") is "missing" it; a field is its key and
// how the problem names it. It returns false when one is missing.
func (l *loader) required(n *yaml.Node, what string, has map[string]bool, fields ...[2]string) bool {
	ok := true
	for _, f := range fields {
		if !has[f[0]] {
			l.rep.Node(n, "%s: missing %s", what, f[1])
			ok = false
		}
	}
	return ok
}

// actionText compiles the template of an action's text into *dst (nil
// when it does not compile).
func (l *loader) actionText(n *yaml.Node, what string, kind textKind, dst **template) bool {
	t, ok := l.text(n, what, kind)
	*dst = t
	return ok
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
	has, fieldsOK := actionFields(pairs, map[string]func(*yaml.Node) bool{
		"policy":  func(v *yaml.Node) bool { return l.pagePolicy(v, &a.policy) },
		"channel": func(v *yaml.Node) bool { return l.actionChannel(v, "page", &a.channel) },
		"text":    func(v *yaml.Node) bool { return l.actionText(v, "page text", textChat, &a.text) },
	})
	ok = yamlpos.Strict(n, pairs) && fieldsOK
	if !has["policy"] {
		l.rep.Node(n, "page: missing policy (the name of an escalation policy under oncall: policies:)")
		ok = false
	}
	if !has["channel"] {
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

// pagePolicy reads the policy of a page into *dst: one of the oncall:
// section's (unless that section has errors of its own, reported there).
func (l *loader) pagePolicy(n *yaml.Node, dst *string) bool {
	name, ok := l.str(n, "page policy")
	if !ok {
		return false
	}
	*dst = name
	switch {
	case l.oncallBad:
		// The oncall: section has errors of its own: reported there.
	case l.oncall == nil:
		l.rep.Node(n, "page: unknown escalation policy %q: the file has no oncall: section defining policies", name)
		return false
	case l.oncall.Policy(name) == nil:
		var names []string
		for _, po := range l.oncall.Policies {
			names = append(names, po.Name)
		}
		l.rep.Node(n, "page: unknown escalation policy %q (%s)", name, yamlpos.KnownNames(names))
		return false
	}
	return true
}

// actionChannel reads the channel: of an action (what is "alert" or
// "page") into *dst: an alias under channels: or a channel literal (#name
// or a channel id).
func (l *loader) actionChannel(n *yaml.Node, what string, dst *string) bool {
	c, ok := l.str(n, what+" channel")
	if !ok {
		return false
	}
	if v, alias := l.channelAlias(c); alias {
		*dst = v
		return true
	}
	if isChannelLiteral(c) {
		*dst = c
		return true
	}
	l.rep.Node(n, "%s: unknown channel %q: not an alias under channels: and not #name or a channel id", what, c)
	return false
}

// channelAlias resolves an alias of the file's channels: section.
func (l *loader) channelAlias(name string) (string, bool) {
	v, ok := l.chans[name]
	return v, ok
}

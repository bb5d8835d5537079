package rules

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// Digest defaults.
const (
	// DefaultDigestWithin is how far ahead a digest looks for tickets whose
	// due_by comes (breaching_within:).
	DefaultDigestWithin = 4 * time.Hour
	// DefaultDigestList is how many tickets a digest lists under the
	// oldest unassigned and under what breaches next (list:).
	DefaultDigestList = 5
	// maxDigestList bounds list:.
	maxDigestList = 50
)

// Digest is a digest rule: one summary of the open tickets (those its
// optional query matches) posted to a channel on a schedule, and updated
// in place for the rest of the day. It has no if:, once: or actions:.
type Digest struct {
	// Name is unique among the file's rules.
	Name string
	// Query is the filter expression as written; "" for every open ticket.
	Query string
	// Cron is a standard 5-field cron spec; "" when Every is used.
	Cron string
	// Every is the interval; zero when Cron is set.
	Every time.Duration
	// Channel is where the digest goes (alias resolved).
	Channel string
	// Within is how far ahead the digest lists what breaches (due_by).
	Within time.Duration
	// List is how many tickets each list shows.
	List int
	// Line is the rule's line in the file.
	Line int

	local filter.Expr // nil: every ticket
}

// digestKeys are the keys of digest:.
var digestKeys = []string{"channel", "breaching_within", "list"}

// digestRuleKeys are the keys a digest rule may have.
var digestRuleKeys = map[string]bool{"name": true, "query": true, "cron": true, "every": true, "digest": true}

// Digests returns the digest rules in file order.
func (s *Set) Digests() []*Digest { return append([]*Digest(nil), s.digests...) }

// Matches reports whether t is one of the digest's tickets: its query
// holds on t (every ticket when it has none).
func (d *Digest) Matches(t *sdclient.Ticket) bool {
	if d.local == nil {
		return true
	}
	rec := &ticketRecord{}
	rec.reset(t)
	return d.local.Eval(rec)
}

// loadDigestRule loads rule n, which has a digest: key, into l.digests.
func (l *loader) loadDigestRule(n *yaml.Node, pairs []yamlpos.Pair, byKey map[string]yamlpos.Pair, name string, nameOK bool) {
	d := &Digest{Name: name, Line: n.Line, Every: DefaultEvery, Within: DefaultDigestWithin, List: DefaultDigestList}
	ok := nameOK
	for _, p := range pairs {
		if !digestRuleKeys[p.Key.Value] && contains(ruleKeys, p.Key.Value) {
			l.rep.Node(p.Key, "%s: a digest rule takes only name, query, cron or every, and digest:", p.Key.Value)
			ok = false
		}
	}
	r := &Rule{Every: DefaultEvery}
	if p, has := byKey["query"]; has && l.loadQuery(p.Val, r) {
		d.Query, d.local = r.Query, r.local
	} else if has {
		ok = false
	}
	if p, has := byKey["every"]; has {
		ok = l.loadEvery(p.Val, r) && ok
	}
	if p, has := byKey["cron"]; has {
		if _, every := byKey["every"]; every {
			l.rep.Node(p.Key, "every and cron are mutually exclusive: use one")
			ok = false
		} else {
			ok = l.loadCron(p.Val, r) && ok
		}
	}
	d.Every, d.Cron = r.Every, r.Cron
	ok = l.digestSpec(byKey["digest"].Val, d) && ok
	if ok && yamlpos.Strict(n, pairs) {
		l.digests = append(l.digests, d)
	}
}

// digestSpec loads digest: {channel: ALIAS|#chan, breaching_within:
// DURATION, list: N} into d.
func (l *loader) digestSpec(n *yaml.Node, d *Digest) bool {
	pairs, ok := l.mapping(n, "digest", digestKeys)
	if !ok {
		return false
	}
	has, fieldsOK := actionFields(pairs, map[string]func(*yaml.Node) bool{
		"channel": func(v *yaml.Node) bool { return l.actionChannel(v, "digest", &d.Channel) },
		"breaching_within": func(v *yaml.Node) bool {
			w, ok := l.duration(v, "digest breaching_within")
			if ok && w <= 0 {
				l.rep.Node(v, "digest: breaching_within: %s: want a positive duration such as 4h", v.Value)
				return false
			}
			d.Within = w
			return ok
		},
		"list": func(v *yaml.Node) bool {
			ok := l.positive(v, "digest list", "how many tickets each list of the digest shows", &d.List)
			if ok && d.List > maxDigestList {
				l.rep.Node(v, "digest: list: %d: want at most %d", d.List, maxDigestList)
				return false
			}
			return ok
		},
	})
	ok = yamlpos.Strict(n, pairs) && fieldsOK
	if !has["channel"] {
		if c, alias := l.channelAlias(DeskAlias); alias {
			d.Channel = c
		} else {
			l.rep.Node(n, "digest: missing channel: name one, or define the %s alias under channels:", DeskAlias)
			ok = false
		}
	}
	return ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

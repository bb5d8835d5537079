package rules

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// loadRule loads rule n; firstAt holds the name node of every rule loaded
// so far, merrs the problems of the rule's merge keys.
func (l *loader) loadRule(n *yaml.Node, firstAt map[string]*yaml.Node, merrs []mergeErr) *Rule {
	l.setRule("")
	defer l.setRule("")
	if n.Kind != yaml.MappingNode {
		l.mergeErrs(merrs)
		l.rep.Node(n, "rule: want a mapping with name, query and actions, got %s", yamlpos.Describe(n))
		return nil
	}
	r := &Rule{Line: n.Line, Every: DefaultEvery, GroupOver: DefaultGroupOver, MaxFiringsPerCycle: DefaultMaxFiringsPerCycle}
	nameOK := l.ruleName(n, r, firstAt)
	l.mergeErrs(merrs)
	pairs, _ := l.mapping(n, "rule", ruleKeys)
	byKey := yamlpos.ByKey(pairs)
	if _, ok := byKey["name"]; !ok {
		l.rep.Node(n, "rule without a name")
	}
	if _, ok := byKey["digest"]; ok {
		l.loadDigestRule(n, pairs, byKey, r.Name, nameOK)
		return nil
	}
	ok := l.loadRuleKeys(n, byKey, r) && nameOK
	if !ok || !yamlpos.Strict(n, pairs) {
		return nil
	}
	return r
}

// ruleName reads the name of rule n into r first, so that every other
// message can carry it. It reports whether the name is valid and new.
func (l *loader) ruleName(n *yaml.Node, r *Rule, firstAt map[string]*yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := yamlpos.Resolve(n.Content[i]), yamlpos.Resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "name" {
			continue
		}
		name, ok := l.str(v, "name")
		if !ok {
			return false
		}
		r.Name = name
		return l.newRuleName(n, v, name, firstAt)
	}
	return false
}

// newRuleName checks name, the value of node v of rule n: well formed,
// and the name of no rule before.
func (l *loader) newRuleName(n, v *yaml.Node, name string, firstAt map[string]*yaml.Node) bool {
	if !ruleNameRE.MatchString(name) {
		l.rep.Node(v, "name %q: want lower-case letters, digits and '-' only", name)
		return false
	}
	l.setRule(name)
	switch {
	case firstAt[name] == v:
		// The name itself came with a merge key (<<: *other-rule).
		l.rep.Node(n, "duplicate rule name %q: the rule merges the name: of line %d; give it a name of its own", name, v.Line)
		return false
	case firstAt[name] != nil:
		l.rep.Node(v, "duplicate rule name %q (first defined at line %d)", name, firstAt[name].Line)
		return false
	}
	firstAt[name] = v
	return true
}

// loadRuleKeys loads every key of rule n but its name into r, in a fixed
// order, and reports the required ones missing.
func (l *loader) loadRuleKeys(n *yaml.Node, byKey map[string]yamlpos.Pair, r *Rule) bool {
	_, hasEvery := byKey["every"]
	fields := []struct {
		key     string
		missing string // the problem when the key is absent; "" when optional
		load    func(*yaml.Node, *Rule) bool
	}{
		{"query", "missing query: (a filter expression such as status:open AND priority:4)", l.loadQuery},
		{"if", "", l.loadIf},
		{"every", "", l.loadEvery},
		{"cron", "", func(v *yaml.Node, r *Rule) bool {
			if hasEvery {
				l.rep.Node(byKey["cron"].Key, "every and cron are mutually exclusive: use one")
				return false
			}
			return l.loadCron(v, r)
		}},
		{"catch_up", "", func(v *yaml.Node, r *Rule) bool {
			if _, hasCron := byKey["cron"]; !hasCron {
				l.rep.Node(byKey["catch_up"].Key, "catch_up is for cron rules (an every rule that missed its time runs at once): remove it or use cron")
				return false
			}
			return l.loadCatchUp(v, r)
		}},
		{"once", "", l.loadOnce},
		{"group_over", "", func(v *yaml.Node, r *Rule) bool {
			return l.positive(v, "group_over", "alerts of more tickets than this in one poll are posted as one message", &r.GroupOver)
		}},
		{"max_firings_per_cycle", "", func(v *yaml.Node, r *Rule) bool {
			return l.positive(v, "max_firings_per_cycle", "the rule fires on at most this many tickets a poll; the rest wait for later polls", &r.MaxFiringsPerCycle)
		}},
		{"priority", "", l.loadPriority},
		{"actions", "missing actions: (a list of note, reply, set, assign, alert, page or dm)", l.loadActions},
	}
	ok := true
	for _, f := range fields {
		p, has := byKey[f.key]
		switch {
		case has:
			ok = f.load(p.Val, r) && ok
		case f.missing != "":
			l.rep.Node(n, "%s", f.missing)
			ok = false
		}
	}
	return ok
}

func (l *loader) loadQuery(n *yaml.Node, r *Rule) bool {
	src, ok := l.nonBlank(n, "query", "empty filter expression")
	if !ok {
		return false
	}
	e, err := filter.Parse(src)
	if err != nil {
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			l.errIn(n, yamlpos.RuneOffset(src, se.Pos), "query: %s", se.Msg)
		} else {
			l.rep.Node(n, "query: %v", err)
		}
		return false
	}
	ok = true
	for _, t := range filter.Terms(e) {
		if isStatusOpen(t) && t.Op != filter.OpEq {
			l.errIn(n, yamlpos.RuneOffset(src, t.Pos), "query: status%sopen: the status:open macro takes no comparison", t.Op)
			ok = false
		}
	}
	// status:open is a deskbot macro; check the rest against the desk's schema.
	probe := filter.Rewrite(e, func(t *filter.Term) (filter.Expr, bool) {
		if isStatusOpen(t) {
			return &filter.Term{Field: "status", Op: filter.OpEq, Value: filter.Number(sdclient.StatusOpen), Pos: t.Pos}, true
		}
		return nil, false
	})
	if err := filter.TicketSchema(l.cfg.custom).Validate(probe); err != nil {
		for _, e := range unjoin(err) {
			var fe *filter.FieldError
			if errors.As(e, &fe) {
				l.errIn(n, yamlpos.RuneOffset(src, fe.Pos), "query: %s", l.queryHint(probe, fe))
			} else {
				l.rep.Node(n, "query: %v", e)
			}
		}
		return false
	}
	for _, ce := range l.cfg.checkCodes(probe) {
		l.errIn(n, yamlpos.RuneOffset(src, ce.pos), "query: %s", ce.msg)
		ok = false
	}
	if !ok {
		return false
	}
	r.Query = src
	r.query = e
	r.local = localQuery(e)
	return true
}

// queryHint returns the message of a query's field error, with what to
// write instead where the filter language's own message cannot know it:
// a status or priority by name, or a custom field the loader was not told
// about (see WithCustomFields).
func (l *loader) queryHint(q filter.Expr, fe *filter.FieldError) string {
	if fe.Field == "responder_id" && strings.HasPrefix(fe.Msg, "unknown field ") {
		return `unknown field "responder_id": in queries the assigned agent is agent_id (agent_id:0 or agent_id:null when unassigned); responder_id is its name in expressions (ticket.responder_id) and in set: {responder_id: ID}`
	}
	if strings.HasPrefix(fe.Msg, "unknown field ") && !strings.Contains(fe.Msg, "did you mean") && len(l.cfg.custom) == 0 {
		return fe.Msg + " (a custom field? deskbot reads them from the desk; rules check and test need --custom-field " +
			fe.Field + ":KIND; or test it in if: with ticket.custom_fields." + fe.Field + ")"
	}
	if fe.Field != "status" && fe.Field != "priority" {
		return fe.Msg
	}
	for _, t := range filter.Terms(q) {
		if t.Pos != fe.Pos || t.Value.Kind != filter.KindWord {
			continue
		}
		for name, code := range namedCodes {
			isStatus := name == "Open" || name == "Pending" || name == "Resolved" || name == "Closed"
			if strings.EqualFold(name, t.Value.Str) && isStatus == (fe.Field == "status") {
				return fmt.Sprintf("%s:%s: write %s:%d (%s); of the names only status:open is understood, as every open status", fe.Field, t.Value.Str, fe.Field, code, name)
			}
		}
	}
	return fe.Msg
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (l *loader) loadIf(n *yaml.Node, r *Rule) bool {
	src, ok := l.nonBlank(n, "if", "empty expression")
	if !ok {
		return false
	}
	c, errs := compileExpr(src, true)
	for _, e := range errs {
		l.errIn(n, e.Off, "if: %s", e.Msg)
	}
	if c == nil {
		return false
	}
	c.at = l.at(n, 0)
	r.If = src
	r.cond = c
	return true
}

// duration parses a duration scalar (a string such as 90s, 15m, 2h30m).
func (l *loader) duration(n *yaml.Node, what string) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		l.rep.Node(n, "%s: want a duration such as 30s, 5m or 1h, got %s", what, yamlpos.Describe(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		l.rep.Node(n, "%s: invalid duration %q: want e.g. 30s, 5m or 1h", what, n.Value)
		return 0, false
	}
	return d, true
}

func (l *loader) loadEvery(n *yaml.Node, r *Rule) bool {
	d, ok := l.duration(n, "every")
	if !ok {
		return false
	}
	if d < time.Second {
		l.rep.Node(n, "every: %s is too short: want at least 1s", n.Value)
		return false
	}
	r.Every = d
	return true
}

func (l *loader) loadCron(n *yaml.Node, r *Rule) bool {
	spec, ok := l.str(n, "cron")
	if !ok {
		return false
	}
	if _, err := cron.ParseStandard(spec); err != nil {
		l.rep.Node(n, "cron: invalid spec %q: %v (want 5 fields: minute hour day-of-month month day-of-week)", spec, err)
		return false
	}
	r.Cron = spec
	r.Every = 0
	r.CatchUp = DefaultCatchUp
	return true
}

// loadCatchUp reads how late a missed cron run may still run (0: never).
func (l *loader) loadCatchUp(n *yaml.Node, r *Rule) bool {
	d, ok := l.duration(n, "catch_up")
	if !ok {
		return false
	}
	if d < 0 {
		l.rep.Node(n, "catch_up: %s is negative: want a duration such as 1h (0: a missed run never runs late)", n.Value)
		return false
	}
	r.CatchUp = d
	return true
}

// positive reads a whole number of at least 1 into dst; meaning says
// what the setting does, for the error.
func (l *loader) positive(n *yaml.Node, what, meaning string, dst *int) bool {
	v, ok := l.rep.Int(n, what)
	if !ok {
		return false
	}
	if v < 1 || v > maxCount {
		l.rep.Node(n, "%s: %d: want a whole number from 1 to %d (%s)", what, v, maxCount, meaning)
		return false
	}
	*dst = int(v)
	return true
}

// maxCount bounds group_over and max_firings_per_cycle.
const maxCount = 100000

func (l *loader) loadOnce(n *yaml.Node, r *Rule) bool {
	const want = "want episode, ticket or every <duration> (e.g. every 4h)"
	s, ok := l.str(n, "once")
	if !ok {
		return false
	}
	switch f := strings.Fields(s); {
	case len(f) == 1 && f[0] == "episode":
		r.Once = Once{Mode: OnceEpisode}
	case len(f) == 1 && f[0] == "ticket":
		r.Once = Once{Mode: OnceTicket}
	case len(f) == 2 && f[0] == "every":
		d, err := time.ParseDuration(f[1])
		if err != nil {
			l.rep.Node(n, "once: invalid duration %q: %s", f[1], want)
			return false
		}
		if d < time.Second {
			l.rep.Node(n, "once: every %s is too short: want at least 1s", f[1])
			return false
		}
		r.Once = Once{Mode: OnceEvery, Period: d}
	default:
		l.rep.Node(n, "once: %q: %s", s, want)
		return false
	}
	return true
}

package oncall

import (
	"fmt"
	"regexp"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9-]+$`)
	slackUser  = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	slackGroup = regexp.MustCompile(`^(S[A-Z0-9]{2,}|@[a-z0-9._-]+)$`)
	rotationRE = regexp.MustCompile(`^([0-9]{1,5}[hdw])+$`)
	rotPartRE  = regexp.MustCompile(`([0-9]{1,5})([hdw])`)
)

var (
	sectionKeys  = []string{"schedules", "policies"}
	scheduleKeys = []string{"name", "time_zone", "rotation", "handoff", "start", "members", "overrides"}
	overrideKeys = []string{"member", "from", "to"}
	policyKeys   = []string{"name", "repeat", "levels"}
	levelKeys    = []string{"schedule", "user", "group", "after"}
)

// ParseConfig loads the value of the oncall: key of the rules file named
// file (used in messages only). n may be nil or null (no on-call). On any
// problem the Config is nil and the errors, in file order, say what was
// expected and where.
func ParseConfig(file string, n *yaml.Node) (*Config, []PosError) {
	p := &parser{rep: &yamlpos.Reporter{File: file, TagValues: true}}
	cfg := p.section(n)
	if p.rep.Len() > 0 {
		errs := p.rep.Errors()
		for i := range errs {
			errs[i] = errs[i].Unscoped() // Msg names the schedule or policy
		}
		return nil, errs
	}
	return cfg, nil
}

// parser reads the oncall: section. Its reporter's Scope names the part
// being read: oncall, oncall schedule "x" and the like.
type parser struct {
	rep *yamlpos.Reporter
}

// mapping checks that n is a mapping of distinct keys among allowed; ok
// is false when any key was refused.
func (p *parser) mapping(n *yaml.Node, what string, allowed []string) (m map[string]yamlpos.Pair, ok bool) {
	pairs, isMapping := p.rep.Mapping(n, what, yamlpos.Keys{Allowed: allowed, ScopeDuplicates: true, UnknownTwice: true})
	if !isMapping {
		return nil, false
	}
	return yamlpos.ByKey(pairs), yamlpos.Strict(n, pairs)
}

// list checks that n is a list (null counts as empty).
func (p *parser) list(n *yaml.Node, what, want string) ([]*yaml.Node, bool) {
	if yamlpos.IsNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		p.rep.Node(n, "%s: want a list of %s, got %s", what, want, yamlpos.DescribeValue(n))
		return nil, false
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = yamlpos.Resolve(c)
	}
	return out, true
}

func (p *parser) section(n *yaml.Node) *Config {
	cfg := &Config{}
	n = yamlpos.Resolve(n)
	if yamlpos.IsNull(n) {
		return cfg
	}
	p.rep.Scope = "oncall"
	m, _ := p.mapping(n, "the oncall section", sectionKeys)
	if m == nil {
		return cfg
	}
	if s, has := m["schedules"]; has {
		items, _ := p.list(s.Val, "schedules", "schedules")
		seen := map[string]int{}
		for _, it := range items {
			if sc := p.schedule(it, seen); sc != nil {
				cfg.Schedules = append(cfg.Schedules, sc)
			}
		}
		// A schedule with errors is still known by name, so that policies
		// naming it are not reported as well.
		for name := range seen {
			if cfg.Schedule(name) == nil {
				cfg.Schedules = append(cfg.Schedules, &Schedule{Name: name})
			}
		}
	}
	if pol, has := m["policies"]; has {
		p.rep.Scope = "oncall"
		items, _ := p.list(pol.Val, "policies", "escalation policies")
		seen := map[string]int{}
		for _, it := range items {
			if po := p.policy(it, cfg, seen); po != nil {
				cfg.Policies = append(cfg.Policies, po)
			}
		}
	}
	return cfg
}

// named reads the name of a schedule or policy first, so that every other
// message can carry it; it sets the reporter's Scope.
func (p *parser) named(n *yaml.Node, kind string, seen map[string]int) (string, bool) {
	p.rep.Scope = "oncall " + kind
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := yamlpos.Resolve(n.Content[i]), yamlpos.Resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "name" {
			continue
		}
		name, ok := p.rep.Str(v, "name")
		if !ok {
			return "", false
		}
		if !nameRE.MatchString(name) {
			p.rep.Node(v, "name %q: want lower-case letters, digits and '-' only", name)
			return "", false
		}
		p.rep.Scope = fmt.Sprintf("oncall %s %q", kind, name)
		if line, dup := seen[name]; dup {
			p.rep.Node(v, "duplicate %s name (first defined at line %d)", kind, line)
			return name, false
		}
		seen[name] = v.Line
		return name, true
	}
	p.rep.Node(n, "missing name")
	return "", false
}

// entry starts reading a schedule or a policy (kind): a mapping (want
// names its keys) of keys, its name read first. m is nil when n is not a
// mapping.
func (p *parser) entry(n *yaml.Node, kind, want string, keys []string, seen map[string]int) (name string, m map[string]yamlpos.Pair, ok bool) {
	p.rep.Scope = "oncall " + kind
	if n.Kind != yaml.MappingNode {
		p.rep.Node(n, "want a mapping with %s, got %s", want, yamlpos.DescribeValue(n))
		return "", nil, false
	}
	name, ok = p.named(n, kind, seen)
	m, good := p.mapping(n, kind, keys)
	return name, m, ok && good
}

// policy reads one escalation policy, whose levels may name the
// schedules of cfg; seen holds the line of each name so far.
func (p *parser) policy(n *yaml.Node, cfg *Config, seen map[string]int) *Policy {
	name, m, ok := p.entry(n, "policy", "name and levels", policyKeys, seen)
	if m == nil {
		return nil
	}
	pol := &Policy{Name: name, Line: n.Line}
	if v, has := m["repeat"]; has {
		var r int64
		if v.Val.Kind != yaml.ScalarNode || v.Val.Tag != "!!int" || v.Val.Decode(&r) != nil || r < 0 || r > MaxRepeat {
			p.rep.Node(v.Val, "repeat: want a whole number from 0 to %d, got %s", MaxRepeat, yamlpos.DescribeValue(v.Val))
			ok = false
		}
		pol.Repeat = int(r)
	}
	v, has := m["levels"]
	if !has {
		p.rep.Node(n, "missing levels: (a list of {schedule|user|group: ..., after: DURATION})")
		return nil
	}
	items, good := p.list(v.Val, "levels", "{schedule|user|group: ..., after: DURATION}")
	ok = ok && good
	if good && len(items) == 0 {
		p.rep.Node(v.Val, "levels: empty: want at least one level")
		ok = false
	}
	if len(items) > MaxLevels {
		p.rep.Node(v.Val, "levels: %d levels: want at most %d", len(items), MaxLevels)
		ok = false
	}
	for i, it := range items {
		lv, good := p.level(it, i+1, cfg)
		ok = ok && good
		pol.Levels = append(pol.Levels, lv)
	}
	if !ok {
		return nil
	}
	return pol
}

func (p *parser) level(n *yaml.Node, num int, cfg *Config) (Level, bool) {
	what := fmt.Sprintf("level %d", num)
	lv := Level{Line: n.Line}
	m, ok := p.mapping(n, what, levelKeys)
	if m == nil {
		return lv, false
	}
	target := p.levelTarget(n, m, what, &ok)
	if target != nil {
		good := p.target(&lv, *target, what, cfg)
		ok = ok && good
	}
	d, good := p.after(n, m, what)
	if !good {
		return lv, false
	}
	lv.After = d
	return lv, ok
}

// levelTarget is the one target key of a level (schedule, user or
// group); nil, reported, when there is none. A second one is reported and
// clears *ok.
func (p *parser) levelTarget(n *yaml.Node, m map[string]yamlpos.Pair, what string, ok *bool) *yamlpos.Pair {
	var target *yamlpos.Pair
	for _, k := range levelKeys[:3] {
		v, has := m[k]
		if !has {
			continue
		}
		if target != nil {
			p.rep.Node(v.Key, "%s: %s and %s are mutually exclusive: one target per level", what, target.Key.Value, k)
			*ok = false
			continue
		}
		target = &v
	}
	if target == nil {
		p.rep.Node(n, "%s: missing schedule, user or group (whom to page)", what)
		*ok = false
	}
	return target
}

// target reads whom a level pages into lv.
func (p *parser) target(lv *Level, target yamlpos.Pair, what string, cfg *Config) bool {
	switch target.Key.Value {
	case "schedule":
		lv.Kind = TargetSchedule
		name, good := p.rep.Str(target.Val, what+" schedule")
		if good {
			if lv.Schedule = cfg.Schedule(name); lv.Schedule == nil {
				var names []string
				for _, s := range cfg.Schedules {
					names = append(names, s.Name)
				}
				p.rep.Node(target.Val, "%s: unknown schedule %q (%s)", what, name, yamlpos.KnownNames(names))
				good = false
			}
		}
		lv.Name = name
		return good
	case "user":
		lv.Kind = TargetPerson
		mem, good := p.member(target.Val, what+" user")
		lv.Name = mem
		return good
	case "group":
		lv.Kind = TargetGroup
		g, good := p.rep.Str(target.Val, what+" group")
		if good && !slackGroup.MatchString(g) {
			p.rep.Node(target.Val, "%s group: %q is not a Slack user group: want an id such as S0123ABC or a @handle", what, g)
			good = false
		}
		lv.Name = g
		return good
	}
	return true
}

// after reads a level's after: (how long to wait for an acknowledgement).
func (p *parser) after(n *yaml.Node, m map[string]yamlpos.Pair, what string) (time.Duration, bool) {
	v, has := m["after"]
	if !has {
		p.rep.Node(n, "%s: missing after: (how long to wait for an acknowledgement, such as 10m)", what)
		return 0, false
	}
	const want = "want a duration such as 10m or 1h"
	if v.Val.Kind != yaml.ScalarNode || v.Val.Tag != "!!str" {
		p.rep.Node(v.Val, "%s after: %s, got %s", what, want, yamlpos.DescribeValue(v.Val))
		return 0, false
	}
	d, err := time.ParseDuration(v.Val.Value)
	switch {
	case err != nil:
		p.rep.Node(v.Val, "%s after: invalid duration %q: %s", what, v.Val.Value, want)
		return 0, false
	case d < MinAfter:
		p.rep.Node(v.Val, "%s after: %s is too short: want at least 1m", what, v.Val.Value)
		return 0, false
	case d > MaxAfter:
		p.rep.Node(v.Val, "%s after: %s is too long: want at most 24h", what, v.Val.Value)
		return 0, false
	}
	return d, true
}

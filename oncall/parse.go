package oncall

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
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

// schedule reads one schedule; seen holds the line of each name so far.
func (p *parser) schedule(n *yaml.Node, seen map[string]int) *Schedule {
	name, m, ok := p.entry(n, "schedule", "name, time_zone, rotation, start and members", scheduleKeys, seen)
	if m == nil {
		return nil
	}
	s := &Schedule{Name: name, Line: n.Line}
	need := func(key, what string) (yamlpos.Pair, bool) {
		v, has := m[key]
		if !has {
			p.rep.Node(n, "missing %s: (%s)", key, what)
			ok = false
		}
		return v, has
	}
	if v, has := need("time_zone", "an IANA time zone such as Europe/Zurich or UTC"); has {
		if z, good := p.rep.Str(v.Val, "time_zone"); !good {
			ok = false
		} else if loc, err := loadZone(z); err != nil {
			p.rep.Node(v.Val, "time_zone: unknown time zone %q: want an IANA name such as Europe/Zurich or UTC", z)
			ok = false
		} else {
			s.Location = loc
		}
	}
	if v, has := need("rotation", "the length of one shift, such as 12h, 1d or 1w"); has {
		d, good := p.rotation(v.Val)
		ok = ok && good
		s.Rotation = d
	}
	if v, has := m["handoff"]; has {
		d, good := p.clock(v.Val)
		ok = ok && good
		s.Handoff = d
	}
	var startDate time.Time
	if v, has := need("start", "the date of the first shift, such as 2026-01-05"); has {
		d, good := p.date(v.Val)
		ok = ok && good
		startDate = d
	}
	if v, has := need("members", "a list of e-mail addresses or Slack user ids"); has {
		items, good := p.list(v.Val, "members", "e-mail addresses or Slack user ids")
		ok = ok && good
		if good && len(items) == 0 {
			p.rep.Node(v.Val, "members: empty: want at least one e-mail address or Slack user id")
			ok = false
		}
		for _, it := range items {
			mem, good := p.member(it, "member")
			ok = ok && good
			s.Members = append(s.Members, mem)
		}
	}
	if !ok {
		return nil
	}
	s.anchor = startDate.Add(s.Handoff)
	s.Start = s.instant(s.anchor)
	if v, has := m["overrides"]; has {
		if !p.overrides(v.Val, s) {
			return nil
		}
	}
	return s
}

// loadZone loads an IANA time zone; "Local" is refused because it depends
// on the host.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return time.LoadLocation(name)
}

func (p *parser) rotation(n *yaml.Node) (time.Duration, bool) {
	const want = "want a length such as 12h, 1d, 1w or 1d12h (units h, d, w)"
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		p.rep.Node(n, "rotation: %s, got %s", want, yamlpos.DescribeValue(n))
		return 0, false
	}
	if !rotationRE.MatchString(n.Value) {
		p.rep.Node(n, "rotation: invalid length %q: %s", n.Value, want)
		return 0, false
	}
	var d time.Duration
	for _, m := range rotPartRE.FindAllStringSubmatch(n.Value, -1) {
		x, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		d += time.Duration(x) * unit
		if d > MaxRotation {
			p.rep.Node(n, "rotation: %s is too long: want at most 52w", n.Value)
			return 0, false
		}
	}
	if d <= 0 {
		p.rep.Node(n, "rotation: %s is zero: want a positive length such as 12h, 1d or 1w", n.Value)
		return 0, false
	}
	return d, true
}

// clock parses a local time of day "HH:MM".
func (p *parser) clock(n *yaml.Node) (time.Duration, bool) {
	t, err := time.Parse("15:04", n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || err != nil || len(n.Value) != 5 {
		p.rep.Node(n, "handoff: want a local time of day such as \"09:00\", got %s", yamlpos.DescribeValue(n))
		return 0, false
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, true
}

// The years a schedule may start in (see date).
const (
	minStartYear = 1970
	maxStartYear = 2199
)

// date parses a calendar date (yaml.v3 tags an unquoted one !!timestamp).
func (p *parser) date(n *yaml.Node) (time.Time, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "!!timestamp") {
		if d, err := time.Parse("2006-01-02", n.Value); err == nil {
			// Shifts are counted in time.Duration, which spans ±292
			// years: a start far off would wrap the rotation arithmetic.
			if d.Year() < minStartYear || d.Year() > maxStartYear {
				p.rep.Node(n, "start: %s is out of range: want a date from %d to %d", n.Value, minStartYear, maxStartYear)
				return time.Time{}, false
			}
			return d, true
		}
	}
	p.rep.Node(n, "start: want a date such as 2026-01-05, got %s", yamlpos.DescribeValue(n))
	return time.Time{}, false
}

// member checks an e-mail address or a Slack user id.
func (p *parser) member(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		p.rep.Node(n, "%s: want an e-mail address or a Slack user id such as U0123ABC, got %s", what, yamlpos.DescribeValue(n))
		return "", false
	}
	v := n.Value
	if !isPerson(v) {
		p.rep.Node(n, "%s: %q is neither an e-mail address nor a Slack user id such as U0123ABC", what, v)
		return "", false
	}
	return v, true
}

func isPerson(v string) bool {
	if slackUser.MatchString(v) {
		return true
	}
	at := strings.IndexByte(v, '@')
	return at > 0 && at < len(v)-1 && strings.Count(v, "@") == 1 && !strings.ContainsAny(v, " \t\n,;<>\"")
}

// localTimeLayouts are the forms of an override's from and to.
var localTimeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"}

// localTime parses a wall-clock time in the schedule's zone (or an RFC 3339
// time with an explicit offset).
func (p *parser) localTime(n *yaml.Node, what string, loc *time.Location) (time.Time, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "!!timestamp") {
		for _, layout := range localTimeLayouts {
			if t, err := time.ParseInLocation(layout, n.Value, loc); err == nil {
				return t, true
			}
		}
		if t, err := time.Parse(time.RFC3339, n.Value); err == nil {
			return t, true
		}
	}
	p.rep.Node(n, "%s: want a local time such as \"2026-03-28T18:00\", got %s", what, yamlpos.DescribeValue(n))
	return time.Time{}, false
}

func (p *parser) overrides(n *yaml.Node, s *Schedule) bool {
	items, ok := p.list(n, "overrides", "overrides")
	var nums []int // the 1-based number of each valid override in the file
	for i, it := range items {
		what := fmt.Sprintf("override %d", i+1)
		m, good := p.mapping(it, what, overrideKeys)
		if m == nil {
			ok = false
			continue
		}
		o := Override{Line: it.Line}
		for _, k := range overrideKeys {
			if _, has := m[k]; !has {
				p.rep.Node(it, "%s: missing %s", what, k)
				good = false
			}
		}
		if v, has := m["member"]; has {
			mem, g := p.member(v.Val, what+" member")
			good = good && g
			o.Member = mem
		}
		var fromOK, toOK bool
		if v, has := m["from"]; has {
			o.From, fromOK = p.localTime(v.Val, what+" from", s.Location)
		}
		if v, has := m["to"]; has {
			o.To, toOK = p.localTime(v.Val, what+" to", s.Location)
		}
		good = good && fromOK && toOK
		if fromOK && toOK && !o.To.After(o.From) {
			p.rep.Node(m["to"].Val, "%s: to %s is not after from %s", what, m["to"].Val.Value, m["from"].Val.Value)
			good = false
		}
		if !good {
			ok = false
			continue
		}
		s.Overrides = append(s.Overrides, o)
		nums = append(nums, i+1)
	}
	// Overlaps (among the overrides that are valid by themselves) are
	// reported at the override that comes later in the file.
	for i, a := range s.Overrides {
		for _, b := range s.Overrides[:i] {
			if a.From.Before(b.To) && b.From.Before(a.To) {
				p.rep.Node(items[nums[i]-1], "override %d (%s, %s to %s) overlaps the override at line %d (%s, %s to %s)",
					nums[i], a.Member, s.fmtLocal(a.From), s.fmtLocal(a.To), b.Line, b.Member, s.fmtLocal(b.From), s.fmtLocal(b.To))
				ok = false
				break
			}
		}
	}
	sort.Slice(s.Overrides, func(i, j int) bool { return s.Overrides[i].From.Before(s.Overrides[j].From) })
	return ok
}

func (s *Schedule) fmtLocal(t time.Time) string { return t.In(s.Location).Format("2006-01-02T15:04") }

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
	var target *yamlpos.Pair
	for _, k := range levelKeys[:3] {
		v, has := m[k]
		if !has {
			continue
		}
		if target != nil {
			p.rep.Node(v.Key, "%s: %s and %s are mutually exclusive: one target per level", what, target.Key.Value, k)
			ok = false
			continue
		}
		target = &v
	}
	if target == nil {
		p.rep.Node(n, "%s: missing schedule, user or group (whom to page)", what)
		ok = false
	} else {
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
			ok = ok && good
			lv.Name = name
		case "user":
			lv.Kind = TargetPerson
			mem, good := p.member(target.Val, what+" user")
			ok = ok && good
			lv.Name = mem
		case "group":
			lv.Kind = TargetGroup
			g, good := p.rep.Str(target.Val, what+" group")
			if good && !slackGroup.MatchString(g) {
				p.rep.Node(target.Val, "%s group: %q is not a Slack user group: want an id such as S0123ABC or a @handle", what, g)
				good = false
			}
			ok = ok && good
			lv.Name = g
		}
	}
	v, has := m["after"]
	if !has {
		p.rep.Node(n, "%s: missing after: (how long to wait for an acknowledgement, such as 10m)", what)
		return lv, false
	}
	const want = "want a duration such as 10m or 1h"
	if v.Val.Kind != yaml.ScalarNode || v.Val.Tag != "!!str" {
		p.rep.Node(v.Val, "%s after: %s, got %s", what, want, yamlpos.DescribeValue(v.Val))
		return lv, false
	}
	d, err := time.ParseDuration(v.Val.Value)
	switch {
	case err != nil:
		p.rep.Node(v.Val, "%s after: invalid duration %q: %s", what, v.Val.Value, want)
		return lv, false
	case d < MinAfter:
		p.rep.Node(v.Val, "%s after: %s is too short: want at least 1m", what, v.Val.Value)
		return lv, false
	case d > MaxAfter:
		p.rep.Node(v.Val, "%s after: %s is too long: want at most 24h", what, v.Val.Value)
		return lv, false
	}
	lv.After = d
	return lv, ok
}

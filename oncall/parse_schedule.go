package oncall

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

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
		loc, good := p.zone(v.Val)
		ok = ok && good
		s.Location = loc
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
		members, good := p.members(v.Val)
		ok = ok && good
		s.Members = members
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

// zone reads a schedule's time_zone.
func (p *parser) zone(n *yaml.Node) (*time.Location, bool) {
	z, good := p.rep.Str(n, "time_zone")
	if !good {
		return nil, false
	}
	loc, err := loadZone(z)
	if err != nil {
		p.rep.Node(n, "time_zone: unknown time zone %q: want an IANA name such as Europe/Zurich or UTC", z)
		return nil, false
	}
	return loc, true
}

// members reads a schedule's members: at least one.
func (p *parser) members(n *yaml.Node) ([]string, bool) {
	items, ok := p.list(n, "members", "e-mail addresses or Slack user ids")
	if ok && len(items) == 0 {
		p.rep.Node(n, "members: empty: want at least one e-mail address or Slack user id")
		ok = false
	}
	var members []string
	for _, it := range items {
		mem, good := p.member(it, "member")
		ok = ok && good
		members = append(members, mem)
	}
	return members, ok
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

package oncall

import (
	"time"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

// PosError is one problem of the oncall: section, positioned in the rules
// file. Msg already names the schedule or policy, so Error reads
// FILE:LINE:COL: oncall schedule "NAME": message.
type PosError = yamlpos.Error

// Config is the loaded oncall: section: schedules and escalation policies,
// every reference between them resolved.
type Config struct {
	Schedules []*Schedule
	Policies  []*Policy
}

// Schedule returns the schedule called name, or nil.
func (c *Config) Schedule(name string) *Schedule {
	if c == nil {
		return nil
	}
	return byName(c.Schedules, name, func(s *Schedule) string { return s.Name })
}

// Policy returns the escalation policy called name, or nil. The rules
// loader uses it to check page: {policy: NAME} actions.
func (c *Config) Policy(name string) *Policy {
	if c == nil {
		return nil
	}
	return byName(c.Policies, name, func(p *Policy) string { return p.Name })
}

// byName returns the item of items called name (nameOf says an item's
// name), or nil.
func byName[T any](items []*T, name string, nameOf func(*T) string) *T {
	for _, it := range items {
		if nameOf(it) == name {
			return it
		}
	}
	return nil
}

// Schedule is a rotation of members with optional overrides.
type Schedule struct {
	Name     string
	Location *time.Location
	// Rotation is the length of one shift on the schedule's wall clock.
	Rotation time.Duration
	// Handoff is the local time of day of the handoff, as an offset from
	// midnight.
	Handoff time.Duration
	// Start is the instant the first member's first shift starts
	// (start date + handoff, local time).
	Start     time.Time
	Members   []string // e-mail addresses or Slack user ids, in turn
	Overrides []Override
	Line      int // where the schedule is defined in the rules file

	anchor time.Time // Start on the wall clock, as a UTC time
}

// Override puts Member on call for [From, To), whatever the rotation says.
type Override struct {
	Member string
	From   time.Time
	To     time.Time
	Line   int
}

// Policy is an escalation policy: levels paged in order until someone
// acknowledges, run through Repeat more times after the last.
type Policy struct {
	Name   string
	Repeat int
	Levels []Level
	Line   int
}

// TargetKind says what a level or a page target names.
type TargetKind string

// The kinds of targets.
const (
	// TargetSchedule: whoever is on call in a schedule (levels only; a page
	// target is always resolved to the person).
	TargetSchedule TargetKind = "schedule"
	// TargetPerson: one person, by e-mail or Slack user id.
	TargetPerson TargetKind = "user"
	// TargetGroup: a Slack user group, by id (S...) or @handle.
	TargetGroup TargetKind = "group"
)

// Level is one level of a policy: whom to page, and how long to wait for
// an acknowledgement before paging the next level.
type Level struct {
	Kind     TargetKind
	Name     string    // schedule name, person or group
	Schedule *Schedule // set when Kind is TargetSchedule
	After    time.Duration
	Line     int
}

// Limits of the oncall: section.
const (
	MaxRotation = 52 * 7 * 24 * time.Hour // a shift of at most 52 weeks
	MinAfter    = time.Minute             // shortest wait before the next level
	MaxAfter    = 24 * time.Hour          // longest wait before the next level
	MaxRepeat   = 10                      // most extra rounds of a policy
	MaxLevels   = 20                      // most levels of a policy
)

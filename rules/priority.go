package rules

import (
	"gopkg.in/yaml.v3"
)

// Priority is a rule's own priority: priority: high, normal or low. It
// overrides the class the scheduler gives the rule's firings from their
// actions (pages first, then alerts and direct messages, then updates and
// notes, then public replies, then digests), which decides who goes first
// when the per-cycle caps or the request budget bind.
type Priority string

// The priorities of a rule; PriorityDefault (unset) takes the class from
// the actions.
const (
	PriorityDefault Priority = ""
	PriorityHigh    Priority = "high"   // with pages: first
	PriorityNormal  Priority = "normal" // with updates and notes
	PriorityLow     Priority = "low"    // with digests: last
)

// loadPriority reads priority: into r.
func (l *loader) loadPriority(n *yaml.Node, r *Rule) bool {
	v, ok := l.str(n, "priority")
	if !ok {
		return false
	}
	switch p := Priority(v); p {
	case PriorityHigh, PriorityNormal, PriorityLow:
		r.Priority = p
		return true
	}
	l.rep.Node(n, "priority %q: want high, normal or low (unset: from the actions, pages first and e-mails last)", v)
	return false
}

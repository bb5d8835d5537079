package rules

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// DefaultEvery is the poll interval of a rule that sets neither every: nor
// cron:.
const DefaultEvery = time.Minute

// DefaultCatchUp is how late a cron rule's missed run may still run once
// (catch_up:): a restart at 09:20 still sends the 09:00 reminders, one at
// 15:00 does not.
const DefaultCatchUp = time.Hour

// Storm control defaults: a first run on a busy desk stays calm.
const (
	// DefaultGroupOver is a rule's group_over: when one poll would alert
	// about more tickets than this, each alert action of the rule posts one
	// message naming them all instead of a card each.
	DefaultGroupOver = 5
	// DefaultMaxFiringsPerCycle is a rule's max_firings_per_cycle: the
	// rule fires on at most this many tickets a poll, the rest in later
	// polls.
	DefaultMaxFiringsPerCycle = 20
)

// Set is a loaded rules file. It is immutable and safe for concurrent use.
type Set struct {
	file     string
	channels map[string]string
	rules    []*Rule
	byName   map[string]*Rule
	terms    termTable // distinct query terms of all rules
	oncall   *oncall.Config
	digests  []*Digest // the digest rules
	vms      sync.Pool // *vm.VM
	// needsPeople is set when an expression reads ticket.requester,
	// agent or group; people is what fills them (UsePeople).
	needsPeople bool
	people      atomic.Pointer[peopleBox]
}

// Rule is one rule of a rules file.
type Rule struct {
	// Name is unique in the file, made of [a-z0-9-].
	Name string
	// Query is the filter expression as written (status:open unexpanded).
	Query string
	// If is the condition's source, empty when the rule has none.
	If string
	// Every is the poll interval; zero when Cron is set.
	Every time.Duration
	// Cron is a standard 5-field cron spec; empty when Every is used.
	Cron string
	// CatchUp is how long after its time a cron run missed while no
	// deskbot led still runs, once (catch_up:, default DefaultCatchUp;
	// 0: never late). Zero for every rules.
	CatchUp time.Duration
	// Once says how often the rule may act on one ticket.
	Once Once
	// GroupOver: when one poll would alert about more tickets than this,
	// each alert action posts one message naming them all (group_over:,
	// default DefaultGroupOver).
	GroupOver int
	// MaxFiringsPerCycle bounds the rule's firings in one poll; the rest
	// wait for later polls (max_firings_per_cycle:, default
	// DefaultMaxFiringsPerCycle).
	MaxFiringsPerCycle int
	// Priority is the rule's own priority (priority:), PriorityDefault
	// when its actions decide.
	Priority Priority
	// Line is the line of the rule in the file.
	Line int

	query   filter.Expr // parsed; status:open still a word
	local   filter.Expr // for local evaluation: status:open rewritten
	plan    qnode       // local over the term table of set
	set     *Set
	place   int       // in the file, from 0
	cond    *compiled // nil when there is no if:
	actions []actionSpec
}

// actionSpec is an action before rendering.
type actionSpec struct {
	kind        ActionKind
	text        *template
	channel     string // resolved
	mention     *template
	update      *sdclient.TicketUpdate
	assignEmail string
	policy      string // page
	// setTemplates are the values of set: that are templates, rendered
	// into update per ticket.
	setTemplates []setTemplate
	to           string     // dm: assignee, requester, an e-mail or a user id
	node         *yaml.Node // dm: where it is, for the fallback channel's error
}

// Option configures Load.
type Option func(*config)

// config holds what the options of Load set.
type config struct {
	custom map[string]filter.Kind
	// choices are the desk's codes of coded fields (see WithFieldChoices).
	choices map[string][]sdclient.FieldChoice
}

// WithCustomFields declares the desk's custom ticket fields (name and kind)
// that queries may filter on; without it a query term on a custom field is
// a load error, like any field the filter schema does not know.
func WithCustomFields(fields map[string]filter.Kind) Option {
	return func(c *config) { c.custom = fields }
}

// LoadFile reads and loads the rules file at path.
func LoadFile(path string, opts ...Option) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	return Load(path, data, opts...)
}

// File is the name the set was loaded from.
func (s *Set) File() string { return s.file }

// Rules returns the rules in file order.
func (s *Set) Rules() []*Rule { return append([]*Rule(nil), s.rules...) }

// Place is the rule's place in its file, from 0: the order in which the
// rules of a cycle run.
func (r *Rule) Place() int { return r.place }

// Rule returns the rule named name, or nil.
func (s *Set) Rule(name string) *Rule { return s.byName[name] }

// Channels returns a copy of the file's channel aliases (alias -> channel).
func (s *Set) Channels() map[string]string {
	m := make(map[string]string, len(s.channels))
	for k, v := range s.channels {
		m[k] = v
	}
	return m
}

// OnCall returns the schedules and escalation policies of the file's
// oncall: section, nil when the file has none: the escalator pages with
// them and the bot answers /oncall from them.
func (s *Set) OnCall() *oncall.Config { return s.oncall }

// ActionKinds lists the kinds of the rule's actions in order, so that a
// consumer can check before running that it can perform them (a page
// needs an escalator).
func (r *Rule) ActionKinds() []ActionKind {
	out := make([]ActionKind, len(r.actions))
	for i, a := range r.actions {
		out[i] = a.kind
	}
	return out
}

func (s *Set) getVM() *vm.VM {
	if m, ok := s.vms.Get().(*vm.VM); ok {
		return m
	}
	return &vm.VM{}
}

func (s *Set) putVM(m *vm.VM) { s.vms.Put(m) }

// ReadsNow reports whether the rule's if calls now(): its verdict on an
// unchanged ticket may change with time alone.
func (r *Rule) ReadsNow() bool { return r.cond != nil && r.cond.usesNow }

// QueryExpr returns the rule's parsed query with the status:open macro
// unexpanded.
func (r *Rule) QueryExpr() filter.Expr { return r.query }

// ExpandQuery returns the query to send to the desk: every status:open term
// replaced by the desk's open statuses (OR-ed). It fails when openStatuses
// is empty but needed, or when the expanded text exceeds filter.MaxLen.
func (r *Rule) ExpandQuery(openStatuses []int) (filter.Expr, error) {
	var missing bool
	e := filter.Rewrite(r.query, func(t *filter.Term) (filter.Expr, bool) {
		if !isStatusOpen(t) {
			return nil, false
		}
		if len(openStatuses) == 0 {
			missing = true
			return nil, false
		}
		or := &filter.Or{}
		for _, s := range openStatuses {
			or.Exprs = append(or.Exprs, &filter.Term{Field: "status", Op: t.Op, Value: filter.Number(int64(s)), Pos: t.Pos})
		}
		if len(or.Exprs) == 1 {
			return or.Exprs[0], true
		}
		return or, true
	})
	if missing {
		return nil, fmt.Errorf("rule %q: expand query: status:open needs the desk's open statuses, got none", r.Name)
	}
	if text := e.String(); len(text) > filter.MaxLen {
		return nil, fmt.Errorf("rule %q: expanded query is %d characters, more than the desk's limit of %d: %s",
			r.Name, len(text), filter.MaxLen, shorten(text, 80))
	}
	return e, nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n]) + "..."
}

// isStatusOpen reports whether t is the deskbot macro status:open.
func isStatusOpen(t *filter.Term) bool {
	return t.Field == "status" && t.Value.Kind == filter.KindWord && strings.EqualFold(t.Value.Str, "open")
}

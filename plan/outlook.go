package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Outlook is what one cycle would do with its decisions: per rule of the
// cycle, in file order, the firings it would start now and the ones its
// caps would leave to later cycles.
type Outlook struct {
	At time.Time // the cycle's time
	// Tick is the time between two cycles: a capped backlog drains one
	// wave a tick.
	Tick time.Duration
	// CycleCap is the bound across rules (WithMaxFiringsPerCycle; 0: none).
	CycleCap int
	Rules    []RuleOutlook // the cycle's rules, in file order
}

// RuleOutlook is one rule's part of an Outlook.
type RuleOutlook struct {
	Rule *rules.Rule // the rule
	// Fires are the decisions that would fire (not failed, not fired
	// already per the ledger), in the queue's order (Order: class,
	// ticket priority, age); the first Waves[0] fire in
	// this cycle, the next Waves[1] in the next one, and so on.
	Fires []rules.Decision
	// Next is when the rule runs first: the Outlook's At when it runs
	// now; later for a rule not due yet in a plan (RunCycle), whose Fires
	// are then its decisions at that time (NextRun).
	Next         time.Time
	Waves        []int // how many of Fires each cycle from this one starts
	AlreadyFired int   // decisions the ledger (or an earlier dry-run cycle) shows as fired
	Failed       int   // decisions whose if or templates failed
}

// Now is the decisions that fire in this cycle.
func (ro RuleOutlook) Now() []rules.Decision {
	if len(ro.Waves) == 0 {
		return nil
	}
	return ro.Fires[:ro.Waves[0]]
}

// Grouped reports whether this cycle would post the rule's alerts as one
// message per alert action (more firings than its group_over).
func (ro RuleOutlook) Grouped() bool {
	return len(ro.Waves) > 0 && ro.Waves[0] > GroupOver(ro.Rule) && slices.Contains(ro.Rule.ActionKinds(), rules.ActionAlert)
}

// GroupedIn reports whether wave i would be grouped.
func (ro RuleOutlook) GroupedIn(i int) bool {
	return i < len(ro.Waves) && ro.Waves[i] > GroupOver(ro.Rule) && slices.Contains(ro.Rule.ActionKinds(), rules.ActionAlert)
}

// Drain is how long the rule's capped backlog takes to fire: the cycles
// after this one, a tick apart (0 when everything fires now).
func (ro RuleOutlook) Drain(tick time.Duration) time.Duration {
	if len(ro.Waves) <= 1 {
		return 0
	}
	return time.Duration(len(ro.Waves)-1) * tick
}

// RuleCap is the rule's max_firings_per_cycle.
func (ro RuleOutlook) RuleCap() int { return RuleCap(ro.Rule) }

// GroupOver is the rule's group_over.
func (ro RuleOutlook) GroupOver() int { return GroupOver(ro.Rule) }

// Waves splits the firings of every rule into cycles by the caps, as admit
// would over successive cycles, assuming every ticket keeps matching: in
// the queue's order (see Order), at most each rule's cap and at most
// cycleCap (0: none) in all per cycle.
func Waves(fires []rules.Decision, set *rules.Set, cycleCap int) map[string][]int {
	out := map[string][]int{}
	// The rules' names stand for their decisions: a plan of thousands of
	// firings (the status page's /plan) copies 16 bytes a decision a
	// cycle, not the decision.
	caps := map[string]int{}
	left := make([]string, len(fires))
	for i, d := range fires {
		left[i] = d.Rule
		if _, ok := caps[d.Rule]; !ok {
			caps[d.Rule] = RuleCap(set.Rule(d.Rule))
		}
	}
	spare := make([]string, 0, len(left))
	for cycle := 0; len(left) > 0; cycle++ {
		perRule := map[string]int{}
		total := 0
		rest := spare[:0] // the two buffers take turns
		for i, name := range left {
			if cycleCap > 0 && total >= cycleCap {
				rest = append(rest, left[i:]...) // the cycle is full
				break
			}
			if perRule[name] >= caps[name] {
				rest = append(rest, name)
				continue
			}
			perRule[name]++
			total++
		}
		for name, n := range perRule {
			w := out[name]
			for len(w) < cycle {
				w = append(w, 0)
			}
			out[name] = append(w, n)
		}
		left, spare = rest, left
	}
	return out
}

// NewOutlook is what a cycle at now of the rules due (in file order) of
// set would do with decisions (in the queue's order): tick apart, at most
// cycleCap firings a cycle across rules (0: none). next is when each rule
// first runs (absent: now); fired says whether the ledger (or a dry run's
// memory) shows a decision as fired.
func NewOutlook(now time.Time, tick time.Duration, cycleCap int, set *rules.Set, due []*rules.Rule, decisions []rules.Decision, next map[string]time.Time, fired func(rules.Decision) bool) Outlook {
	o := Outlook{At: now, Tick: tick, CycleCap: cycleCap}
	idx := map[string]int{}
	for _, r := range due {
		idx[r.Name] = len(o.Rules)
		o.Rules = append(o.Rules, RuleOutlook{Rule: r})
	}
	var fires []rules.Decision
	seen := map[rules.FiringKey]bool{}
	for _, d := range decisions {
		i, ok := idx[d.Rule]
		key := rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}
		switch {
		case !ok || seen[key]:
			continue
		case d.Err != nil:
			o.Rules[i].Failed++
			continue
		case fired(d):
			o.Rules[i].AlreadyFired++
			continue
		}
		seen[key] = true
		fires = append(fires, d)
		o.Rules[i].Fires = append(o.Rules[i].Fires, d)
	}
	// Rules first run at different times share no cycle, nor its caps.
	byTime := map[time.Time][]rules.Decision{}
	for _, d := range fires {
		at := cmp.Or(next[d.Rule], now)
		byTime[at] = append(byTime[at], d)
	}
	w := map[string][]int{}
	for _, ds := range byTime {
		maps.Copy(w, Waves(ds, set, cycleCap))
	}
	for i := range o.Rules {
		o.Rules[i].Waves = w[o.Rules[i].Rule.Name]
		o.Rules[i].Next = cmp.Or(next[o.Rules[i].Rule.Name], now)
	}
	return o
}

// ChatSummary is a dry-run cycle's message for chat and its channel: the
// channel of the first alert or page it would have sent, else the rules
// file's "desk" alias; "" when the cycle would have done nothing or there
// is no channel.
func (o Outlook) ChatSummary(set *rules.Set, max int) (channel, text string) {
	lines := o.Lines()
	if len(lines) == 0 {
		return "", ""
	}
	for _, ro := range o.Rules {
		for _, d := range ro.Now() {
			for _, a := range d.Actions {
				if channel == "" && (a.Kind == rules.ActionAlert || a.Kind == rules.ActionPage) {
					channel = a.Channel
				}
			}
		}
	}
	if channel == "" && set != nil {
		channel = set.Channels()["desk"]
	}
	if channel == "" {
		return "", ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deskbot dry run (DESKBOT_DRY_RUN): this cycle changed nothing, but would have:")
	for i, l := range lines {
		if i == max {
			fmt.Fprintf(&b, "\n… and %d more (see the log)", len(lines)-max)
			break
		}
		b.WriteString("\n• " + strings.TrimPrefix(l.Text, "dry run: would have "))
	}
	return channel, b.String()
}

// LogLine is one "would have" line of a dry run: a message for a person
// and the attributes for a machine.
type LogLine struct {
	Text  string // for a person
	Attrs []any  // slog attributes, for a machine
}

// groupedLines says, for each action of kind of a rule's firings now, the
// one grouped message (or direct message) it would have sent: line gives
// its text and the attribute naming where it goes.
func groupedLines(ro RuleOutlook, now []rules.Decision, kind rules.ActionKind, line func(rules.Action) (string, slog.Attr)) []LogLine {
	ids := make([]int64, len(now))
	for j, d := range now {
		ids[j] = d.TicketID
	}
	var out []LogLine
	for i, a := range now[0].Actions {
		if a.Kind != kind {
			continue
		}
		text, where := line(a)
		out = append(out, LogLine{Text: text,
			Attrs: []any{slog.String("rule", ro.Rule.Name), slog.Int("action", i), where, slog.Any("tickets", ids)}})
	}
	return out
}

// Lines says what the cycle would have done, one line per decision that
// fires now, one per grouped message and one per rule whose caps hold
// firings back, in file order then ticket order.
func (o Outlook) Lines() []LogLine {
	var out []LogLine
	for _, ro := range o.Rules {
		now := ro.Now()
		if len(now) == 0 {
			continue
		}
		grouped := ro.Grouped()
		for _, d := range now {
			out = append(out, LogLine{
				Text: fmt.Sprintf("dry run: would have fired %s on #%d: %s", d.Rule, d.TicketID, WouldHave(d.Actions, grouped)),
				Attrs: []any{slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID),
					slog.String("actions", DescribeActions(d.Actions))},
			})
		}
		if grouped {
			out = append(out, groupedLines(ro, now, rules.ActionAlert, func(a rules.Action) (string, slog.Attr) {
				return fmt.Sprintf("dry run: would have posted one grouped message in %s naming %d tickets (rule %s, over its group_over %d)",
					a.Channel, len(now), ro.Rule.Name, ro.GroupOver()), slog.String("channel", a.Channel)
			})...)
		}
		if len(now) > ro.GroupOver() {
			out = append(out, groupedLines(ro, now, rules.ActionPage, func(a rules.Action) (string, slog.Attr) {
				return fmt.Sprintf("dry run: would have paged %s for %d tickets with one direct message to the person paged, each ticket its own page and card (rule %s, over its group_over %d)",
					a.Policy, len(now), ro.Rule.Name, ro.GroupOver()), slog.String("policy", a.Policy)
			})...)
		}
		if held := len(ro.Fires) - len(now); held > 0 {
			out = append(out, LogLine{
				Text: fmt.Sprintf("dry run: would have held %d firings of %s back for later cycles (%s); %s",
					held, ro.Rule.Name, ro.capsText(o.CycleCap), ro.drainText(o.Tick)),
				Attrs: []any{slog.String("rule", ro.Rule.Name), slog.Int("firing", len(now)), slog.Int("held_back", held),
					slog.Int("rule_cap", ro.RuleCap()), slog.Int("cycle_cap", o.CycleCap)},
			})
		}
	}
	return out
}

func (ro RuleOutlook) capsText(cycleCap int) string {
	s := fmt.Sprintf("max_firings_per_cycle %d", ro.RuleCap())
	if cycleCap > 0 {
		s += fmt.Sprintf(", %d per cycle across rules", cycleCap)
	}
	return s
}

// drainText says how the backlog drains: "13 in the next cycle", or "20,
// 20 and 5 in the next 3 cycles (2m)".
func (ro RuleOutlook) drainText(tick time.Duration) string {
	rest := ro.Waves[1:]
	if len(rest) == 1 {
		return fmt.Sprintf("%d in the next cycle, %s from now", rest[0], rules.ShortDuration(tick))
	}
	parts := make([]string, len(rest))
	for i, n := range rest {
		parts[i] = fmt.Sprint(n)
	}
	list := strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	return fmt.Sprintf("%s in the next %d cycles, drained in %s", list, len(rest), rules.ShortDuration(ro.Drain(tick)))
}

// WouldHave renders a firing's actions as people read them: `alert
// #it-desk "Urgent #12 unassigned"; note "..."`; with grouped, the alerts
// go in the grouped message.
func WouldHave(as []rules.Action, grouped bool) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		switch {
		case a.Kind == rules.ActionAlert && grouped:
			parts = append(parts, fmt.Sprintf("name it in the grouped message in %s", a.Channel))
		case a.Kind == rules.ActionAlert:
			s := fmt.Sprintf("alert %s", a.Channel)
			if a.Mention != "" {
				s += " " + a.Mention
			}
			parts = append(parts, fmt.Sprintf("%s %q", s, a.Text))
		case a.Kind == rules.ActionNote:
			parts = append(parts, fmt.Sprintf("add the note %q", a.Text))
		case a.Kind == rules.ActionReply:
			parts = append(parts, fmt.Sprintf("reply %q", a.Text))
		case a.Kind == rules.ActionPage:
			parts = append(parts, fmt.Sprintf("page %s in %s %q", a.Policy, a.Channel, a.Text))
		case a.Kind == rules.ActionDM:
			parts = append(parts, fmt.Sprintf("send %s the direct message %q (else to %s)", a.To, a.Text, a.Channel))
		case a.Kind == rules.ActionUpdate:
			parts = append(parts, "set "+describeSet(a))
		}
	}
	return strings.Join(parts, ", then ")
}

// describeSet renders an update's fields as the API gets them:
// {"priority":4,"tags":["x"]}, and the agent it assigns by e-mail.
func describeSet(a rules.Action) string {
	var parts []string
	if a.Update != nil {
		if b, err := json.Marshal(a.Update); err == nil && string(b) != "{}" {
			parts = append(parts, string(b))
		}
	}
	if a.AssignEmail != "" {
		parts = append(parts, "assign to "+a.AssignEmail)
	}
	if len(parts) == 0 {
		return "fields"
	}
	return strings.Join(parts, " ")
}

// FiringRequests is what one firing of r costs at the desk: the re-read
// before acting and one request per note, reply or update (alerts, pages
// and direct messages go to chat).
func FiringRequests(r *rules.Rule) int {
	n := 1
	for _, k := range r.ActionKinds() {
		switch k {
		case rules.ActionNote, rules.ActionReply, rules.ActionUpdate:
			n++
		}
	}
	return n
}

// DescribeActions lists a firing's actions for the log: alert #x "text"; note "text"; ...
func DescribeActions(as []rules.Action) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		switch a.Kind {
		case rules.ActionAlert:
			parts = append(parts, fmt.Sprintf("alert %s %q", a.Channel, a.Text))
		case rules.ActionNote, rules.ActionReply:
			parts = append(parts, fmt.Sprintf("%s %q", a.Kind, a.Text))
		case rules.ActionPage:
			parts = append(parts, fmt.Sprintf("page %s in %s %q", a.Policy, a.Channel, a.Text))
		case rules.ActionDM:
			parts = append(parts, fmt.Sprintf("dm %s (else %s) %q", a.To, a.Channel, a.Text))
		case rules.ActionUpdate:
			s := "update"
			if a.AssignEmail != "" {
				s += " assign " + a.AssignEmail
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

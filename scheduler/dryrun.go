package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Dry runs and plans: what a cycle would do with its decisions, told the
// way people read it in chat ("would have ..."), with the same storm
// control as a real cycle (the per-rule and per-cycle caps, grouped
// alerts).
//
// A dry run changes nothing on the desk and writes nothing to the ledger,
// so without a memory every cycle would report the same firings again and
// a capped backlog would never seem to drain. The scheduler therefore
// remembers, in memory only, what each dry-run cycle would have fired, and
// treats it as fired in later dry-run cycles (per the rule's once:), until
// a complete cycle shows the ticket no longer matching the rule. What a
// firing's own actions would have changed on the ticket (a rule raising
// the priority another rule watches) is not simulated.

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
	// already per the ledger), in the queue's order (queue.go: class,
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
	return len(ro.Waves) > 0 && ro.Waves[0] > groupOver(ro.Rule) && slices.Contains(ro.Rule.ActionKinds(), rules.ActionAlert)
}

// GroupedIn reports whether wave i would be grouped.
func (ro RuleOutlook) GroupedIn(i int) bool {
	return i < len(ro.Waves) && ro.Waves[i] > groupOver(ro.Rule) && slices.Contains(ro.Rule.ActionKinds(), rules.ActionAlert)
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
func (ro RuleOutlook) RuleCap() int { return ruleCap(ro.Rule) }

// GroupOver is the rule's group_over.
func (ro RuleOutlook) GroupOver() int { return groupOver(ro.Rule) }

// WithOutlook makes every dry-run cycle hand its Outlook to f (deskbot
// rules plan). It is called on the cycle's goroutine.
func WithOutlook(f func(Outlook)) Option { return func(cfg *config) { cfg.outlook = f } }

// dryMemory is what earlier dry-run cycles would have fired.
type dryMemory struct {
	mu    sync.Mutex
	fired map[rules.FiringKey]time.Time
}

// waves splits the firings of every rule into cycles by the caps, as admit
// would over successive cycles, assuming every ticket keeps matching: in
// the queue's order (see order), at most each rule's cap and at most
// cycleCap (0: none) in all per cycle.
func waves(fires []rules.Decision, set *rules.Set, cycleCap int) map[string][]int {
	out := map[string][]int{}
	// The rules' names stand for their decisions: a plan of thousands of
	// firings (the status page's /plan) copies 16 bytes a decision a
	// cycle, not the decision.
	caps := map[string]int{}
	left := make([]string, len(fires))
	for i, d := range fires {
		left[i] = d.Rule
		if _, ok := caps[d.Rule]; !ok {
			caps[d.Rule] = ruleCap(set.Rule(d.Rule))
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

// outlook is what cy would do with decisions (in the queue's order);
// fired says whether the ledger or memory shows a decision as
// fired.
func (s *Scheduler) outlook(cy *cycle, decisions []rules.Decision, next map[string]time.Time, fired func(rules.Decision) bool) Outlook {
	o := Outlook{At: cy.now, Tick: s.tickEvery(), CycleCap: s.cfg.maxFirings}
	idx := map[string]int{}
	for _, r := range cy.rules {
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
		at := cmp.Or(next[d.Rule], cy.now)
		byTime[at] = append(byTime[at], d)
	}
	w := map[string][]int{}
	for _, ds := range byTime {
		maps.Copy(w, waves(ds, cy.set, s.cfg.maxFirings))
	}
	for i := range o.Rules {
		o.Rules[i].Waves = w[o.Rules[i].Rule.Name]
		o.Rules[i].Next = cmp.Or(next[o.Rules[i].Rule.Name], cy.now)
	}
	return o
}

// nextRuns is when each rule of a plan's cycle (RunCycle) first runs, by
// NextRun over the rules' last runs; nil in other cycles, whose rules
// all run now.
func (s *Scheduler) nextRuns(ctx context.Context, cy *cycle) map[string]time.Time {
	if !cy.once {
		return nil
	}
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		cy.log.Warn("cannot read when the rules last ran: the plan takes every rule as new", slog.Any("error", err))
	}
	out := map[string]time.Time{}
	for _, r := range cy.rules {
		rec, ok := runs[r.Name]
		out[r.Name] = later(NextRun(r, rec, ok, cy.now), cy.now)
	}
	return out
}

// atNextRuns replaces the decisions of the rules that run later than the
// cycle by their decisions at their next run, over the mirror as it is.
func (s *Scheduler) atNextRuns(ctx context.Context, cy *cycle, decisions []rules.Decision, next map[string]time.Time) ([]rules.Decision, error) {
	laterRules := map[string]bool{}
	out := decisions[:0:0]
	for _, r := range cy.rules {
		if at := next[r.Name]; at.After(cy.now) {
			laterRules[r.Name] = true
			ds, err := evaluate(ctx, cy.set, []*rules.Rule{r}, s.mirrorSnapshot(), at)
			if err != nil {
				return decisions, err
			}
			out = append(out, ds...)
		}
	}
	if len(laterRules) == 0 {
		return decisions, nil
	}
	for _, d := range decisions {
		if !laterRules[d.Rule] {
			out = append(out, d)
		}
	}
	sortDecisions(cy.set, out)
	return out, nil
}

// dryRun is admit's dry-run branch: it logs, one line per decision, what
// the cycle would have done ("would have ..."), as a real cycle would do
// it (caps, grouped alerts), remembers it for the next dry-run cycles and
// executes nothing.
func (s *Scheduler) dryRun(ctx context.Context, cy *cycle, decisions []rules.Decision) {
	s.dry.mu.Lock()
	defer s.dry.mu.Unlock()
	if s.dry.fired == nil {
		s.dry.fired = map[rules.FiringKey]time.Time{}
	}
	for _, d := range decisions {
		if d.Err != nil {
			s.noteFailed(cy, d)
		}
	}
	if cy.inMirror != nil && s.syncComplete(cy) {
		s.dry.endEpisodes(cy, decisions)
	}
	// A plan shows each rule at its first run (NextRun).
	next := s.nextRuns(ctx, cy)
	if ds, err := s.atNextRuns(ctx, cy, decisions, next); err != nil {
		cy.log.Info("plan stopped while evaluating the rules at their next runs", slog.Any("error", err))
	} else {
		decisions = ds
	}
	o := s.outlook(cy, decisions, next, func(d rules.Decision) bool {
		if at, ok := s.dry.fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}]; ok {
			// What an earlier dry-run cycle would have fired, as the
			// ledger would record it.
			return !d.Once.MayFire(rules.FiringRecord{Open: true, FiringID: 1, State: rules.FiringDone, FiredAt: at}, cy.now)
		}
		log := cy.log.With(slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID))
		return s.alreadyFired(ctx, cy, d, log)
	})
	for _, line := range o.Lines() {
		cy.log.Info(line.Text, line.Attrs...)
	}
	s.dryRemember(cy, o)
	if s.cfg.outlook != nil {
		s.cfg.outlook(o)
	}
	s.postDryRun(ctx, cy, o)
}

// noteFailed counts and logs a decision that failed.
func (s *Scheduler) noteFailed(cy *cycle, d rules.Decision) {
	s.m.decisions.WithLabelValues(d.Rule, "error").Inc()
	if !errors.Is(d.Err, rules.ErrBudget) { // those are logged once a rule and cycle (noteBudgets)
		cy.log.Error("rule failed on ticket", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", d.Err))
	}
}

// endEpisodes ends, in memory, the episodes of the cycle's rules that a
// complete cycle no longer decides (caller holds mu).
func (dm *dryMemory) endEpisodes(cy *cycle, decisions []rules.Decision) {
	decided := map[rules.FiringKey]bool{}
	for _, d := range decisions {
		decided[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] = true
	}
	inCycle := map[string]bool{}
	for _, r := range cy.rules {
		inCycle[r.Name] = true
	}
	for k := range dm.fired {
		if r := cy.set.Rule(k.Rule); inCycle[k.Rule] && !decided[k] && r != nil && r.Once.Mode != rules.OnceTicket {
			delete(dm.fired, k)
		}
	}
}

// dryRemember notes what the dry-run cycle would have fired now, and
// holds the rest back as a real cycle's caps would (caller holds s.dry.mu).
func (s *Scheduler) dryRemember(cy *cycle, o Outlook) {
	for _, ro := range o.Rules {
		if ro.Next.After(o.At) {
			continue // not run yet
		}
		for _, d := range ro.Now() {
			s.m.decisions.WithLabelValues(d.Rule, "dry_run").Inc()
			s.dry.fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] = cy.now
		}
		for _, d := range ro.Fires[len(ro.Now()):] {
			// As in a real cycle, a rule with firings held back is due
			// again at the next tick (finishJob), so the dry run drains.
			s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
			if cy.held[d.Rule] == nil {
				cy.held[d.Rule] = map[int64]Held{}
			}
			cy.held[d.Rule][d.TicketID] = Held{At: cy.now, Cap: capRule, Limit: ro.RuleCap()}
		}
	}
}

// postDryRun posts what the cycle would have done to chat, when the
// notifier can (DryRunPoster).
func (s *Scheduler) postDryRun(ctx context.Context, cy *cycle, o Outlook) {
	p, ok := s.notifier.(DryRunPoster)
	if !ok {
		return
	}
	ch, text := o.ChatSummary(cy.set, dryRunChatLines)
	if text == "" {
		return
	}
	actx, cancel := s.actionContext(ctx)
	defer cancel()
	if err := p.PostDryRun(actx, ch, text); err != nil {
		cy.log.Warn("dry run: cannot post what the cycle would have done to chat", slog.String("channel", ch), slog.Any("error", err))
	}
}

// DryRunPoster is optionally implemented by a Notifier that posts plain
// text to a channel. In a dry run, each cycle that would have done
// something posts one message there saying what ("would have ..."), at
// most dryRunChatLines lines and "and N more".
type DryRunPoster interface {
	// PostDryRun posts text to channel.
	PostDryRun(ctx context.Context, channel, text string) error
}

// dryRunChatLines bounds a dry run's chat message.
const dryRunChatLines = 10

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

// syncComplete reports whether the cycle's mirror holds every open ticket
// (a ticket's absence from the decisions then means it no longer matches).
func (s *Scheduler) syncComplete(cy *cycle) bool {
	for _, m := range s.mirrors {
		m.mu.Lock()
		ok := m.state.Complete
		m.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
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
					slog.String("actions", describeActions(d.Actions))},
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

// Drain is how the firings of a plan that run now drain under the caps
// and the request budget (Outlook.Drain).
type Drain struct {
	Cycles   int           // cycles that start firings
	Requests int           // the requests of those cycles: firings, feed, first sync
	Last     time.Duration // from the first cycle's start until the last firing's last request
	// Every is the average time from one of those cycles to the next:
	// the tick, stretched by waits for the budget and by the planner.
	Every time.Duration
	// Rules is, per rule, when its last firing's requests have gone out.
	Rules map[string]time.Duration
}

// drainHistory is how many recent cycles the simulated planner averages
// (the planner's historyLen).
const drainHistory = historyLen

// Drain simulates how the firings that run now (not the rules whose first
// run is later) drain. It depends on totals only, not on the order in
// which a cycle admits its firings: each cycle starts the firings its caps
// admit (Waves), each costing FiringRequests; a cycle also sends feed
// requests (the change feed) and the first one first more (the sync and
// the statuses). Requests go out at most budget per sliding minute (a
// fresh window's at once), as the client's limiter grants them; a cycle
// lasts until its last request goes out, and the next starts at the first
// tick after it ends and after the planner's stretch (recent cycles'
// requests a minute over the budget). budget 0: no budget.
func (o Outlook) Drain(budget, feed, first int) Drain {
	tick := cmp.Or(o.Tick, rules.DefaultEvery)
	var perCycle []int
	lastCycle := map[string]int{}
	for _, ro := range o.Rules {
		if ro.Next.After(o.At) {
			continue
		}
		cost := FiringRequests(ro.Rule)
		for i, n := range ro.Waves {
			for len(perCycle) <= i {
				perCycle = append(perCycle, 0)
			}
			perCycle[i] += n * cost
			if n > 0 {
				lastCycle[ro.Rule.Name] = i
			}
		}
	}
	out := Drain{Cycles: len(perCycle), Rules: map[string]time.Duration{}}
	if len(perCycle) == 0 {
		return out
	}
	var (
		grants  []time.Duration // when each request went out, in order
		ends    []time.Duration // when each cycle's last request went out
		history []int
		start   time.Duration
	)
	for i, n := range perCycle {
		n += feed
		if i == 0 {
			n += first
		}
		end := start
		for range n {
			g := start
			if budget > 0 && len(grants) >= budget {
				g = max(g, grants[len(grants)-budget]+time.Minute)
			}
			grants = append(grants, g)
			end = g
		}
		out.Requests += n
		ends = append(ends, end)
		history = append(history, n)
		if len(history) > drainHistory {
			history = history[1:]
		}
		if i == len(perCycle)-1 {
			break
		}
		// The next tick: after the cycle ended (ticks while it runs are
		// skipped), and not before the planner's stretched interval.
		stretch := 1.0
		if budget > 0 {
			sum := 0
			for _, h := range history {
				sum += h
			}
			rpm := float64(sum) / float64(len(history)) * float64(time.Minute) / float64(tick)
			stretch = max(1, rpm/float64(budget))
		}
		next := start + tick
		for next <= end && end > start {
			next += tick
		}
		for next < start+time.Duration(float64(tick)*stretch)-min(tick/100, time.Second) {
			next += tick
		}
		start = next
	}
	out.Last = ends[len(ends)-1]
	if out.Cycles > 1 {
		out.Every = start / time.Duration(out.Cycles-1)
	}
	for name, i := range lastCycle {
		out.Rules[name] = ends[i]
	}
	return out
}

// PlanDrain is Outlook.Drain for the outlook o of a plan's cycle c (a
// dry-run RunCycle, `deskbot rules plan`) polling workspaces: a change
// feed request per workspace a cycle, and in the first cycle the read of
// the open statuses and the full sync c made.
func PlanDrain(o Outlook, c Cycle, budget, workspaces int) Drain {
	first := 1
	if c.Sync != nil {
		first += c.Sync.FullSyncRequests
	}
	return o.Drain(budget, max(1, workspaces), first)
}

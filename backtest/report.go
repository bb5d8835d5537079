package backtest

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"sort"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Report is what a rules file would have done over the history. Its JSON
// field names are stable (`deskbot rules backtest --format json`).
type Report struct {
	File         string       `json:"file"`
	HistoryStart time.Time    `json:"history_start"` // the history's first record
	From         time.Time    `json:"from"`          // the replay's start: --since ago, the history's start at the earliest
	To           time.Time    `json:"to"`
	Records      int          `json:"records"` // changes replayed between From and To
	Tickets      int          `json:"tickets"` // tickets the history holds
	Cycles       int          `json:"cycles"`
	Totals       Totals       `json:"totals"`
	Rules        []RuleReport `json:"rules"`
	Firings      []Firing     `json:"firings"` // by time, then rule (file order), then ticket
	Limits       []string     `json:"limits"`  // what the replay cannot know
	Against      *Diff        `json:"against,omitempty"`
}

// Firing is one firing the replay made.
type Firing struct {
	Rule          string    `json:"rule"`
	TicketID      int64     `json:"ticket"`
	At            time.Time `json:"at"`
	MatchingSince time.Time `json:"matching_since"` // when the ticket began to match the rule
	Episode       int64     `json:"episode"`        // 1 for the ticket's first episode of the rule
}

// Totals are what firings sent.
type Totals struct {
	Firings  int `json:"firings"`
	Messages int `json:"messages"` // chat messages: alerts (a grouped alert is one) and direct messages
	Pages    int `json:"pages"`    // on-call pages
	Replies  int `json:"replies"`  // public replies, each an e-mail to the requester
	Notes    int `json:"notes"`    // private notes
	Updates  int `json:"updates"`  // ticket updates (set:, assign:)
}

func (t *Totals) add(o Totals) {
	t.Firings += o.Firings
	t.Messages += o.Messages
	t.Pages += o.Pages
	t.Replies += o.Replies
	t.Notes += o.Notes
	t.Updates += o.Updates
}

// RuleReport is one rule's share of the report.
type RuleReport struct {
	Name     string `json:"name"`
	Schedule string `json:"schedule"` // "every 5m", "cron 0 9 * * 1-5"
	Class    string `json:"class"`    // who goes first (pages, alerts and direct messages, ...)
	// Approximate: the rule's if reads data the history does not keep
	// (Unrecorded), so its figures are approximate.
	Approximate bool     `json:"approximate"`
	Unrecorded  []string `json:"unrecorded_fields,omitempty"`
	Totals
	Tickets     int         `json:"tickets"`                     // distinct tickets fired on
	HeldBack    int         `json:"held_back"`                   // times a cap held a decision back for a later cycle
	Waiting     int         `json:"still_waiting"`               // tickets held back and not fired when the replay ended, still matching
	Dropped     int         `json:"stopped_matching_while_held"` // tickets held back that stopped matching before they fired
	BusiestHour *Hour       `json:"busiest_hour,omitempty"`
	HourOfDay   [24]int     `json:"firings_by_hour_of_day"` // UTC
	TimeToFire  Latency     `json:"time_to_fire"`           // from a ticket beginning to match to its firing
	Days        []Day       `json:"days"`                   // days with firings, oldest first
	Supervisor  *Supervisor `json:"supervisor,omitempty"`
}

// Hour is an hour of the replay and its firings.
type Hour struct {
	Start   time.Time `json:"start"`
	Firings int       `json:"firings"`
}

// Day is a day (UTC) of a rule's firings.
type Day struct {
	Date string `json:"date"` // 2006-01-02
	Totals
}

// Latency is a distribution of durations, in seconds.
type Latency struct {
	N             int     `json:"n"`
	MedianSeconds float64 `json:"median_seconds"`
	P90Seconds    float64 `json:"p90_seconds"`
}

// Median and P90 as durations.
func (l Latency) Median() time.Duration { return seconds(l.MedianSeconds) }

// P90 is the 90th percentile.
func (l Latency) P90() time.Duration { return seconds(l.P90Seconds) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// latency is the median and p90 of ds (nearest rank).
func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(ds))+0.999999) - 1
		return ds[min(max(i, 0), len(ds)-1)]
	}
	return Latency{N: len(ds), MedianSeconds: rank(0.5).Seconds(), P90Seconds: rank(0.9).Seconds()}
}

// Supervisor is the rule replayed as the desk's hourly supervisor would
// run it (every hour, over the tickets updated in the last 30 days).
type Supervisor struct {
	Firings  int `json:"firings"`
	Compared int `json:"compared"` // deskbot's firings the supervisor also made, later or at once
	// Missed are deskbot's firings the supervisor never made: the ticket
	// stopped matching before its hourly run came.
	Missed int `json:"missed"`
	// Unreached are deskbot's firings after the supervisor's last hourly
	// run in the replay: it ended before the supervisor would run again.
	Unreached int     `json:"unreached"`
	Later     Latency `json:"later"` // how much later the supervisor's firings came (those at the same time count 0)
	// SameTime are the compared firings the supervisor made at the same
	// time as deskbot (its hourly run came as the ticket began to match).
	SameTime int `json:"same_time"`
	// Earlier are deskbot's firings the supervisor made before deskbot,
	// and by how much: a rule whose schedule waits longer than an hour
	// (a weekday cron) between its runs.
	Earlier Latency `json:"earlier"`
}

// unrecorded are the ticket fields an if may read that the history does
// not keep.
var unrecorded = []string{"description_text", "requester", "agent", "group"}

// report builds the report from the replay's firings and sends.
func (r *replay) report(start, to time.Time) *Report {
	sortFirings(r.set, r.firings)
	rep := &Report{File: r.set.File(), HistoryStart: start, From: r.from, To: to, Cycles: r.cycles, Firings: r.firings}
	if rep.Firings == nil {
		rep.Firings = []Firing{}
	}
	byRule := map[string][]int32{} // indexes into r.firings: 2 million firings are not copied
	for i, f := range r.firings {
		byRule[f.Rule] = append(byRule[f.Rule], int32(i))
	}
	sends := map[string][]send{}
	for _, s := range r.sends {
		sends[s.rule] = append(sends[s.rule], s)
	}
	approx := false
	for _, rule := range r.rules {
		rr := ruleReport(rule, func(yield func(Firing) bool) {
			for _, i := range byRule[rule.Name] {
				if !yield(r.firings[i]) {
					return
				}
			}
		}, sends[rule.Name])
		rr.HeldBack = r.held[rule.Name]
		rr.Waiting, rr.Dropped = r.stillHeld[rule.Name][0], r.stillHeld[rule.Name][1]
		approx = approx || rr.Approximate
		rep.Totals.add(rr.Totals)
		rep.Rules = append(rep.Rules, rr)
	}
	rep.Limits = []string{
		fmt.Sprintf("history exists from %s: nothing before it can be replayed", plan.Stamp(start)),
		"changes made between two reads of the desk's change feed were recorded as one, and are replayed as one",
		"firings finish in their cycle: the re-read before acting, a crash or a desk error are not replayed",
		budgetLimit,
	}
	if approx {
		rep.Limits = append(rep.Limits, "rules marked approximate read data the history does not keep (the description, people's names): it is empty in the replay")
	}
	return rep
}

// budgetLimit is the limit of every report: the replay fires what the
// caps admit, as if the desk's request budget never made a firing wait.
// NoteBudget replaces it with what the firings' requests come to.
const budgetLimit = "the desk's request budget (DESKBOT_DESK_RATE_PER_MIN) is not replayed: live, each firing waits for its desk requests (its re-read, and one per note, public reply or update), so a backlog larger than the budget drains slower than the caps alone allow, and its firings come later than here"

// NoteBudget says, in rep's limits, how the desk's request budget would
// have slowed the replay's firings: their requests per minute (a re-read
// each, and one per note, public reply or update) against background,
// the requests a minute the scheduler may spend (DESKBOT_DESK_RATE_PER_MIN
// less the fifth kept for people), besides the change feed's reads. It
// reads the per-firing list: call it before the list is dropped. Without
// firings the report's general line stays.
func NoteBudget(rep *Report, background int) {
	if len(rep.Firings) == 0 {
		return
	}
	cost := map[string]int{}
	for _, r := range rep.Rules {
		if r.Firings > 0 {
			cost[r.Name] = 1 + (r.Notes+r.Replies+r.Updates)/r.Firings
		}
	}
	perMinute := map[time.Time]int{}
	for _, f := range rep.Firings {
		perMinute[f.At.UTC().Truncate(time.Minute)] += cost[f.Rule]
	}
	over, peak := 0, 0
	for _, n := range perMinute {
		peak = max(peak, n)
		if n > background {
			over++
		}
	}
	line := fmt.Sprintf("the desk's request budget is not replayed; here the firings needed at most %s in a minute (a re-read each, and one per note, public reply or update), within the %d a minute the scheduler may spend (DESKBOT_DESK_RATE_PER_MIN less a fifth for people), besides the change feed's reads",
		count(peak, "desk request"), background)
	if over > 0 {
		line = fmt.Sprintf("the desk's request budget is not replayed: in %s the firings needed more desk requests (at most %d: a re-read each, and one per note, public reply or update) than the %d a minute the scheduler may spend (DESKBOT_DESK_RATE_PER_MIN less a fifth for people); live, firings wait for the budget, so such a backlog drains slower than the caps alone allow and its firings come later than here",
			count(over, "minute"), peak, background)
	}
	if i := slices.Index(rep.Limits, budgetLimit); i >= 0 {
		rep.Limits[i] = line
		return
	}
	rep.Limits = append(rep.Limits, line)
}

// ruleReport sums a rule's firings and what they sent.
func ruleReport(rule *rules.Rule, fs iter.Seq[Firing], sends []send) RuleReport {
	rr := RuleReport{Name: rule.Name, Schedule: schedule(rule), Class: plan.ClassOf(rule).String(), Days: []Day{}}
	for _, f := range rule.IfFields() {
		if slices.Contains(unrecorded, f) {
			rr.Unrecorded = append(rr.Unrecorded, f)
		}
	}
	rr.Approximate = len(rr.Unrecorded) > 0
	days := map[string]*Day{}
	var dayOrder []string
	for _, s := range sends {
		rr.Totals.add(s.Totals)
		key := s.at.UTC().Format(time.DateOnly)
		d := days[key]
		if d == nil {
			d = &Day{Date: key}
			days[key] = d
			dayOrder = append(dayOrder, key)
		}
		d.add(s.Totals)
	}
	sort.Strings(dayOrder)
	for _, k := range dayOrder {
		rr.Days = append(rr.Days, *days[k])
	}
	tickets := map[int64]bool{}
	hours := map[time.Time]int{}
	var waits []time.Duration
	for f := range fs {
		tickets[f.TicketID] = true
		hours[f.At.UTC().Truncate(time.Hour)]++
		rr.HourOfDay[f.At.UTC().Hour()]++
		waits = append(waits, f.At.Sub(f.MatchingSince))
	}
	rr.Tickets = len(tickets)
	for h, n := range hours {
		if rr.BusiestHour == nil || n > rr.BusiestHour.Firings || (n == rr.BusiestHour.Firings && h.Before(rr.BusiestHour.Start)) {
			rr.BusiestHour = &Hour{Start: h, Firings: n}
		}
	}
	rr.TimeToFire = latency(waits)
	return rr
}

// Diff is what a new rules file adds and removes compared with an old one
// over the same history.
type Diff struct {
	OldFile      string     `json:"old_file"`
	OldTotals    Totals     `json:"old_totals"`
	AddedRules   []string   `json:"added_rules"`
	RemovedRules []string   `json:"removed_rules"`
	Rules        []RuleDiff `json:"rules"` // rules whose firings differ, in the new file's order, then the removed ones
}

// RuleDiff is how one rule's firings differ.
type RuleDiff struct {
	Name           string  `json:"name"`
	Change         string  `json:"change"` // added, removed, changed
	OldFirings     int     `json:"old_firings"`
	NewFirings     int     `json:"new_firings"`
	AddedTickets   []int64 `json:"added_tickets"`   // fired on only with the new file
	RemovedTickets []int64 `json:"removed_tickets"` // fired on only with the old file
	Moved          []Moved `json:"moved"`           // fired on with both, first at another time
}

// Moved is a ticket a rule fires on first at another time with the new file.
type Moved struct {
	TicketID int64     `json:"ticket"`
	Old      time.Time `json:"old"`
	New      time.Time `json:"new"`
}

// Compare says what newRep adds and removes compared with oldRep (both
// over the same history) and sets it as newRep.Against.
func Compare(oldRep, newRep *Report) *Diff {
	d := &Diff{OldFile: oldRep.File, OldTotals: oldRep.Totals, AddedRules: []string{}, RemovedRules: []string{}, Rules: []RuleDiff{}}
	first := func(rep *Report) map[string]map[int64]time.Time {
		out := map[string]map[int64]time.Time{}
		for _, f := range rep.Firings { // by time: the first one wins
			if out[f.Rule] == nil {
				out[f.Rule] = map[int64]time.Time{}
			}
			if _, ok := out[f.Rule][f.TicketID]; !ok {
				out[f.Rule][f.TicketID] = f.At
			}
		}
		return out
	}
	oldF, newF := first(oldRep), first(newRep)
	oldRules := map[string]RuleReport{}
	for _, r := range oldRep.Rules {
		oldRules[r.Name] = r
	}
	newRules := map[string]bool{}
	for _, r := range newRep.Rules {
		newRules[r.Name] = true
		o, had := oldRules[r.Name]
		rd := diffRule(r.Name, oldF[r.Name], newF[r.Name])
		rd.OldFirings, rd.NewFirings = o.Firings, r.Firings
		switch {
		case !had:
			d.AddedRules = append(d.AddedRules, r.Name)
			rd.Change = "added"
		case len(rd.AddedTickets)+len(rd.RemovedTickets)+len(rd.Moved) > 0 || rd.OldFirings != rd.NewFirings:
			rd.Change = "changed"
		default:
			continue
		}
		d.Rules = append(d.Rules, rd)
	}
	for _, r := range oldRep.Rules {
		if newRules[r.Name] {
			continue
		}
		d.RemovedRules = append(d.RemovedRules, r.Name)
		rd := diffRule(r.Name, oldF[r.Name], nil)
		rd.Change, rd.OldFirings = "removed", r.Firings
		d.Rules = append(d.Rules, rd)
	}
	newRep.Against = d
	return d
}

// diffRule compares a rule's first firing per ticket.
func diffRule(name string, old, cur map[int64]time.Time) RuleDiff {
	rd := RuleDiff{Name: name, AddedTickets: []int64{}, RemovedTickets: []int64{}, Moved: []Moved{}}
	for id, at := range cur {
		o, ok := old[id]
		switch {
		case !ok:
			rd.AddedTickets = append(rd.AddedTickets, id)
		case !o.Equal(at):
			rd.Moved = append(rd.Moved, Moved{TicketID: id, Old: o, New: at})
		}
	}
	for id := range old {
		if _, ok := cur[id]; !ok {
			rd.RemovedTickets = append(rd.RemovedTickets, id)
		}
	}
	slices.Sort(rd.AddedTickets)
	slices.Sort(rd.RemovedTickets)
	slices.SortFunc(rd.Moved, func(a, b Moved) int { return cmp.Compare(a.TicketID, b.TicketID) })
	return rd
}

// schedule is "every 5m" or "cron 0 9 * * 1-5".
func schedule(r *rules.Rule) string {
	if r.Cron != "" {
		return "cron " + r.Cron
	}
	return "every " + rules.ShortDuration(cmp.Or(r.Every, rules.DefaultEvery))
}

package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// DigestReport is what a digest rule says at one run: counts of its open
// tickets by status, priority and group, the oldest unassigned, and what
// breaches (due_by) within its window. It is computed from the mirror: no
// desk request.
type DigestReport struct {
	Rule    string        // the digest rule
	Channel string        // where it goes (alias resolved)
	At      time.Time     // the cycle's time
	Within  time.Duration // the breach window
	Total   int           // open tickets of the digest
	// ByStatus, ByPriority and ByGroup count the tickets, most first.
	ByStatus, ByPriority, ByGroup []DigestCount
	// Unassigned are the oldest unassigned tickets, oldest first (at most
	// the rule's list:); UnassignedTotal counts them all.
	Unassigned      []*sdclient.Ticket
	UnassignedTotal int
	// Breaching are the tickets due by At+Within (overdue ones first),
	// soonest first, at most list:; BreachingTotal counts them all and
	// Overdue those already past due.
	Breaching      []*sdclient.Ticket
	BreachingTotal int
	Overdue        int
}

// DigestCount is one line of a digest's counts.
type DigestCount struct {
	Name string
	N    int
}

// Empty reports whether the digest has nothing to say: no open ticket.
func (r DigestReport) Empty() bool { return r.Total == 0 }

// DigestRef names a posted digest message, so that later runs the same
// day update it.
type DigestRef struct {
	Channel string // channel id
	TS      string // the message's ts
}

// Digester is optionally implemented by a Notifier that posts digests.
// Without it digest rules are logged only.
type Digester interface {
	// PostDigest posts r to r.Channel, or, when prev is set (a digest
	// posted earlier the same day), updates that message in place. It
	// returns the message's ref.
	PostDigest(ctx context.Context, r DigestReport, prev DigestRef) (DigestRef, error)
}

// digestKV is what the scheduler needs of its store to remember the day's
// digest message across restarts and replicas: the store's generic named
// values (store.Store's poll cursors).
type digestKV interface {
	Cursor(ctx context.Context, name string) (string, bool, error)
	SetCursor(ctx context.Context, name, value string, now time.Time) error
}

// digestRuns is when each digest rule runs next, by rule name.
type digestRuns struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// due reports whether digest d runs at now, and schedules its next run.
// A digest first seen is scheduled, not run: it runs at its next time
// (loadDigests schedules it from the store first).
func (dr *digestRuns) due(d *rules.Digest, now time.Time) bool {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.next == nil {
		dr.next = map[string]time.Time{}
	}
	next, seen := dr.next[d.Name]
	if seen && now.Before(next) {
		return false
	}
	dr.next[d.Name] = digestNext(d, now)
	return seen
}

// peek reports whether some digest of set would run at now.
func (dr *digestRuns) peek(set *rules.Set, now time.Time) bool {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	for _, d := range set.Digests() {
		next, seen := dr.next[d.Name]
		if !seen || !now.Before(next) {
			return true
		}
	}
	return false
}

// digestRetry is how soon a digest whose post failed is tried again
// (never later than its next scheduled run).
const digestRetry = time.Minute

// retryAt brings the next run of digest name forward to at, when that is
// sooner than its schedule.
func (dr *digestRuns) retryAt(name string, at time.Time) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if next, ok := dr.next[name]; ok && at.Before(next) {
		dr.next[name] = at
	}
}

// digestNext is d's first run after now.
func digestNext(d *rules.Digest, now time.Time) time.Time {
	if d.Cron != "" {
		if sched, err := cron.ParseStandard(d.Cron); err == nil {
			return sched.Next(now)
		}
	}
	return now.Add(cmp.Or(d.Every, rules.DefaultEvery))
}

// runDigests runs the digest rules of set that are due, over the mirror's
// tickets.
func (s *Scheduler) runDigests(ctx context.Context, cy *cycle, set *rules.Set, tickets []*sdclient.Ticket) {
	s.loadDigests(ctx, set, cy.now)
	for _, d := range set.Digests() {
		if !s.digests.due(d, cy.now) {
			continue
		}
		r := s.digestReport(d, tickets, cy.now)
		log := cy.log.With(slog.String("digest", d.Name), slog.String("channel", d.Channel), slog.Int("tickets", r.Total))
		if err := s.postDigest(ctx, d, r); err != nil {
			retry := cy.now.Add(digestRetry)
			s.digests.retryAt(d.Name, retry)
			log.Error("digest not posted; retrying", slog.Any("error", err), slog.Time("retry_at", retry))
			continue
		}
		log.Info("digest")
		s.unsaved.Lock()
		s.unsaved.runs = append(s.unsaved.runs, store.RuleRun{Rule: d.Name, Schedule: ScheduleKey(digestRule(d)), Since: cy.now, LastRun: cy.now})
		s.unsaved.Unlock()
	}
}

// digestRule is digest d as a time rule, for its record in the store.
func digestRule(d *rules.Digest) *rules.Rule {
	r := &rules.Rule{Name: d.Name, Cron: d.Cron, Every: d.Every}
	if d.Cron != "" {
		r.CatchUp = rules.DefaultCatchUp
	}
	return r
}

// loadDigests schedules the digests this process has not seen yet from
// their records in the store (schedule.go), so that a restart or a new
// leader carries their schedules on: a cron digest missed while no deskbot
// led runs once within an hour (DefaultCatchUp). A digest with no run
// recorded is scheduled, not run: it runs at its next time.
func (s *Scheduler) loadDigests(ctx context.Context, set *rules.Set, now time.Time) {
	var unseen []*rules.Digest
	s.digests.mu.Lock()
	for _, d := range set.Digests() {
		if _, seen := s.digests.next[d.Name]; !seen {
			unseen = append(unseen, d)
		}
	}
	s.digests.mu.Unlock()
	if len(unseen) == 0 {
		return
	}
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		s.logger.Warn("cannot read when the digests last ran; they run at their next times", slog.Any("error", err))
	}
	var fresh []store.RuleRun
	s.digests.mu.Lock()
	if s.digests.next == nil {
		s.digests.next = map[string]time.Time{}
	}
	for _, d := range unseen {
		r := digestRule(d)
		rec, ok := runs[d.Name]
		ok = ok && rec.Schedule == ScheduleKey(r)
		next := digestNext(d, now)
		if ok && (d.Cron != "" || !rec.LastRun.IsZero()) {
			next = NextRun(r, rec, ok, now)
		}
		if !ok && err == nil {
			fresh = append(fresh, store.RuleRun{Rule: d.Name, Schedule: ScheduleKey(r), Since: now})
		}
		s.digests.next[d.Name] = next
	}
	s.digests.mu.Unlock()
	if len(fresh) > 0 {
		if err := s.runs.SetRuleRuns(ctx, fresh...); err != nil {
			s.logger.Warn("cannot record when the digests were first scheduled", slog.Any("error", err))
		}
	}
}

// postDigest posts r, or updates the message posted earlier the same
// (UTC) day; with nothing to say it posts nothing, but an earlier message
// of the day is updated to say so.
func (s *Scheduler) postDigest(ctx context.Context, d *rules.Digest, r DigestReport) error {
	dg, ok := s.notifier.(Digester)
	if !ok || s.cfg.dryRun {
		return nil
	}
	kv, _ := s.ledger.(digestKV)
	key, day := "digest:"+d.Name, r.At.UTC().Format(time.DateOnly)
	var prev DigestRef
	if kv != nil {
		v, found, err := kv.Cursor(ctx, key)
		if err != nil {
			return fmt.Errorf("read the day's digest message: %w", err)
		}
		if f := strings.Split(v, "\t"); found && len(f) == 3 && f[0] == day {
			prev = DigestRef{Channel: f[1], TS: f[2]}
		}
	}
	if r.Empty() && prev.TS == "" {
		return nil
	}
	ref, err := dg.PostDigest(ctx, r, prev)
	if err != nil {
		return err
	}
	if kv != nil && ref != prev && ref.TS != "" {
		if err := kv.SetCursor(ctx, key, day+"\t"+ref.Channel+"\t"+ref.TS, r.At); err != nil {
			return fmt.Errorf("remember the day's digest message (the next run posts a new one): %w", err)
		}
	}
	return nil
}

// Names of the status and priority codes in a digest.
var (
	digestStatus   = map[int]string{2: "Open", 3: "Pending", 4: "Resolved", 5: "Closed"}
	digestPriority = map[int]string{1: "Low", 2: "Medium", 3: "High", 4: "Urgent"}
)

// digestReport computes d over the mirror's tickets at now. Group names
// come from the people cache (no request; "group N" until known).
func (s *Scheduler) digestReport(d *rules.Digest, tickets []*sdclient.Ticket, now time.Time) DigestReport {
	return digestReportOf(d, tickets, now, s.groupName)
}

// DigestPreview is what a digest rule would post at its next run, over
// the tickets as they are now: `rules plan` and `rules test` show it.
type DigestPreview struct {
	Digest *rules.Digest
	Next   time.Time    // its next run after now
	Report DigestReport // what that run would post (At is Next)
}

// PreviewDigests previews every digest rule of set over tickets: when it
// runs next after now and what it would post then. Groups are named by id.
func PreviewDigests(set *rules.Set, tickets []*sdclient.Ticket, now time.Time) []DigestPreview {
	return previewDigests(set, tickets, now, func(id *int64) string {
		if id == nil || *id == 0 {
			return "no group"
		}
		return fmt.Sprintf("group %d", *id)
	})
}

// DigestPreviews is PreviewDigests over the scheduler's mirror, with the
// group names it knows (a dry-run cycle has filled the mirror).
func (s *Scheduler) DigestPreviews(now time.Time) []DigestPreview {
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	return previewDigests(set, s.mirrorSnapshot(), now, s.groupName)
}

func previewDigests(set *rules.Set, tickets []*sdclient.Ticket, now time.Time, groupName func(*int64) string) []DigestPreview {
	if set == nil {
		return nil
	}
	var out []DigestPreview
	for _, d := range set.Digests() {
		next := DigestNext(d, now)
		out = append(out, DigestPreview{Digest: d, Next: next, Report: digestReportOf(d, tickets, next, groupName)})
	}
	return out
}

// DigestNext is digest d's first run after now (its cron, or now plus
// its every).
func DigestNext(d *rules.Digest, now time.Time) time.Time { return digestNext(d, now) }

// digestReportOf computes d over tickets at now, naming groups with
// groupName.
func digestReportOf(d *rules.Digest, tickets []*sdclient.Ticket, now time.Time, groupName func(*int64) string) DigestReport {
	r := DigestReport{Rule: d.Name, Channel: d.Channel, At: now, Within: d.Within}
	status, prio, group := map[string]int{}, map[string]int{}, map[string]int{}
	var unassigned, breaching []*sdclient.Ticket
	horizon := now.Add(d.Within)
	for _, t := range tickets {
		if t == nil || t.Status == sdclient.StatusResolved || t.Status == sdclient.StatusClosed || !d.Matches(t) {
			continue
		}
		r.Total++
		status[cmp.Or(digestStatus[t.Status], fmt.Sprintf("status %d", t.Status))]++
		prio[cmp.Or(digestPriority[t.Priority], fmt.Sprintf("priority %d", t.Priority))]++
		group[groupName(t.GroupID)]++
		if t.ResponderID == nil || *t.ResponderID == 0 {
			unassigned = append(unassigned, t)
		}
		if t.DueBy != nil && !t.DueBy.IsZero() && !t.DueBy.After(horizon) {
			breaching = append(breaching, t)
			if t.DueBy.Before(now) {
				r.Overdue++
			}
		}
	}
	r.ByStatus, r.ByPriority, r.ByGroup = digestCounts(status), digestCounts(prio), digestCounts(group)
	slices.SortFunc(unassigned, func(a, b *sdclient.Ticket) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(breaching, func(a, b *sdclient.Ticket) int {
		return cmp.Or(a.DueBy.Compare(*b.DueBy), cmp.Compare(a.ID, b.ID))
	})
	r.UnassignedTotal, r.BreachingTotal = len(unassigned), len(breaching)
	r.Unassigned = unassigned[:min(d.List, len(unassigned))]
	r.Breaching = breaching[:min(d.List, len(breaching))]
	return r
}

// groupName names a ticket's group for a digest.
func (s *Scheduler) groupName(id *int64) string {
	if id == nil || *id == 0 {
		return "no group"
	}
	if g, ok := s.people.Group(*id); ok && g.Name != "" {
		return g.Name
	}
	return fmt.Sprintf("group %d", *id)
}

// digestCounts sorts counts most first, then by name.
func digestCounts(m map[string]int) []DigestCount {
	out := make([]DigestCount, 0, len(m))
	for k, v := range m {
		out = append(out, DigestCount{Name: k, N: v})
	}
	slices.SortFunc(out, func(a, b DigestCount) int { return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name)) })
	return out
}

package follow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// DigestPoster posts digests; the chat side implements it (Slack, the
// console).
type DigestPoster interface {
	// PostDigest posts m to m.Channel, or, when prev is set (a digest
	// posted earlier the same day), updates that message in place. It
	// returns the message's ref.
	PostDigest(ctx context.Context, m chat.DigestMessage, prev chat.DigestRef) (chat.DigestRef, error)
}

// DigestKV remembers the day's digest message across restarts and
// replicas: the store's generic named values (*store.Store's cursors).
type DigestKV interface {
	Cursor(ctx context.Context, name string) (string, bool, error)
	SetCursor(ctx context.Context, name, value string, now time.Time) error
}

// Digests runs the digest rules on their own schedules over the mirror (a
// cycle.TickFollower: it runs on the scheduler's ticks, so on the
// leader only, after the tick's sync) and posts them through the chat.
type Digests struct {
	cfg    config
	poster DigestPoster // nil: digests are logged only
	kv     DigestKV     // nil: every run posts a new message

	mu   sync.Mutex
	next map[string]time.Time // when each digest rule runs next, by name
}

var _ cycle.TickFollower = (*Digests)(nil)

// NewDigests posts digests through p (nil: log them only), keeping the
// day's message in kv (nil: not kept).
func NewDigests(p DigestPoster, kv DigestKV, opts ...Option) *Digests {
	return &Digests{cfg: newConfig(opts), poster: p, kv: kv, next: map[string]time.Time{}}
}

// digestRetry is how soon a digest whose post failed is tried again
// (never later than its next scheduled run).
const digestRetry = time.Minute

// runTimeout bounds the write of a tick's digest runs to the store.
const runTimeout = 10 * time.Second

// Due reports whether some digest of set runs at now (or has not been
// scheduled yet).
func (ds *Digests) Due(set *rules.Set, now time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, d := range set.Digests() {
		next, seen := ds.next[d.Name]
		if !seen || !now.Before(next) {
			return true
		}
	}
	return false
}

// FollowTick runs the digest rules of t.Set that are due at t.Now, over
// the mirror's tickets.
func (ds *Digests) FollowTick(ctx context.Context, t cycle.Tick) {
	ds.load(ctx, t)
	var ran []store.RuleRun
	for _, d := range t.Set.Digests() {
		if !ds.due(d, t.Now) {
			continue
		}
		r := d.Report(t.Tickets, t.Now, t.People)
		log := ds.cfg.logger.With(slog.String("digest", d.Name), slog.String("channel", d.Channel), slog.Int("tickets", r.Total))
		if err := ds.post(ctx, d, r); err != nil {
			retry := t.Now.Add(digestRetry)
			ds.retryAt(d.Name, retry)
			log.Error("digest not posted; retrying", slog.Any("error", err), slog.Time("retry_at", retry))
			continue
		}
		log.Info("digest")
		ran = append(ran, store.RuleRun{Rule: d.Name, Schedule: plan.ScheduleKey(digestRule(d)), Since: t.Now, LastRun: t.Now})
	}
	if len(ran) == 0 || t.Runs == nil {
		return
	}
	// Also when a stop cancelled the tick: a restart must not run them
	// again.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()
	if err := t.Runs.SetRuleRuns(wctx, ran...); err != nil {
		ds.cfg.logger.Warn("cannot record the rules' runs: a restart may run them again", slog.Any("error", err))
	}
}

// due reports whether digest d runs at now, and schedules its next run.
// A digest first seen is scheduled, not run: it runs at its next time
// (load schedules it from the store first).
func (ds *Digests) due(d *rules.Digest, now time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	next, seen := ds.next[d.Name]
	if seen && now.Before(next) {
		return false
	}
	ds.next[d.Name] = d.Next(now)
	return seen
}

// retryAt brings the next run of digest name forward to at, when that is
// sooner than its schedule.
func (ds *Digests) retryAt(name string, at time.Time) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if next, ok := ds.next[name]; ok && at.Before(next) {
		ds.next[name] = at
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

// load schedules the digests this process has not seen yet from their
// records in the store (plan.NextRun), so that a restart or a new
// leader carries their schedules on: a cron digest missed while no
// deskbot led runs once within an hour (rules.DefaultCatchUp). A digest
// with no run recorded is scheduled, not run: it runs at its next time.
func (ds *Digests) load(ctx context.Context, t cycle.Tick) {
	var unseen []*rules.Digest
	ds.mu.Lock()
	for _, d := range t.Set.Digests() {
		if _, seen := ds.next[d.Name]; !seen {
			unseen = append(unseen, d)
		}
	}
	ds.mu.Unlock()
	if len(unseen) == 0 {
		return
	}
	var runs map[string]store.RuleRun
	var err error
	if t.Runs != nil {
		if runs, err = t.Runs.RuleRuns(ctx); err != nil {
			ds.cfg.logger.Warn("cannot read when the digests last ran; they run at their next times", slog.Any("error", err))
		}
	}
	var fresh []store.RuleRun
	ds.mu.Lock()
	for _, d := range unseen {
		r := digestRule(d)
		rec, ok := runs[d.Name]
		ok = ok && rec.Schedule == plan.ScheduleKey(r)
		next := d.Next(t.Now)
		if ok && (d.Cron != "" || !rec.LastRun.IsZero()) {
			next = plan.NextRun(r, rec, ok, t.Now)
		}
		if !ok && err == nil {
			fresh = append(fresh, store.RuleRun{Rule: d.Name, Schedule: plan.ScheduleKey(r), Since: t.Now})
		}
		ds.next[d.Name] = next
	}
	ds.mu.Unlock()
	if len(fresh) > 0 && t.Runs != nil {
		if err := t.Runs.SetRuleRuns(ctx, fresh...); err != nil {
			ds.cfg.logger.Warn("cannot record when the digests were first scheduled", slog.Any("error", err))
		}
	}
}

// post posts r, or updates the message posted earlier the same (UTC)
// day; with nothing to say it posts nothing, but an earlier message of the
// day is updated to say so.
func (ds *Digests) post(ctx context.Context, d *rules.Digest, r rules.DigestReport) error {
	if ds.poster == nil || ds.cfg.dryRun {
		return nil
	}
	key, day := "digest:"+d.Name, r.At.UTC().Format(time.DateOnly)
	var prev chat.DigestRef
	if ds.kv != nil {
		v, found, err := ds.kv.Cursor(ctx, key)
		if err != nil {
			return fmt.Errorf("read the day's digest message: %w", err)
		}
		if f := strings.Split(v, "\t"); found && len(f) == 3 && f[0] == day {
			prev = chat.DigestRef{Channel: f[1], TS: f[2]}
		}
	}
	if r.Empty() && prev.TS == "" {
		return nil
	}
	ref, err := ds.poster.PostDigest(ctx, DigestMessage(r), prev)
	if err != nil {
		return err
	}
	if ds.kv != nil && ref != prev && ref.TS != "" {
		if err := ds.kv.SetCursor(ctx, key, day+"\t"+ref.Channel+"\t"+ref.TS, r.At); err != nil {
			return fmt.Errorf("remember the day's digest message (the next run posts a new one): %w", err)
		}
	}
	return nil
}

// DigestMessage is a digest report as the chat transports post it.
func DigestMessage(r rules.DigestReport) chat.DigestMessage {
	return chat.DigestMessage{Rule: r.Rule, Channel: r.Channel, At: r.At, Within: r.Within, Total: r.Total,
		ByStatus: chatCounts(r.ByStatus), ByPriority: chatCounts(r.ByPriority), ByGroup: chatCounts(r.ByGroup),
		Unassigned: r.Unassigned, UnassignedTotal: r.UnassignedTotal, Breaching: r.Breaching, BreachingTotal: r.BreachingTotal, Overdue: r.Overdue}
}

func chatCounts(cs []rules.DigestCount) []chat.Count {
	out := make([]chat.Count, len(cs))
	for i, c := range cs {
		out[i] = chat.Count(c)
	}
	return out
}

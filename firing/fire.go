package firing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// A firing, from its claim to its record: fire claims it, proceed
// performs its actions in order (each with its marker, each recorded done,
// a resumed firing checking first whether an action already happened),
// and the firing is finished, released for a retry, or left pending until
// its lease ends.

// outcome is how far a firing got in one go.
type outcome int

const (
	failed    outcome = iota // stopped: pending until its retry or lease
	finished                 // every action done, the firing recorded
	suspended                // waiting at an alert for the cycle's grouped message
)

// run is a firing being performed: claimed, with the actions done so far.
type run struct {
	r       *rules.Rule
	d       rules.Decision
	f       rules.Firing
	t       *sdclient.Ticket
	log     *slog.Logger
	done    map[int]bool
	checked map[int]bool // actions of a resumed firing found not to have happened
	alone   map[int]bool // alerts posted alone in a grouped cycle
	next    int          // the next action to perform
	convs   []*sdclient.Conversation
	updated *sdclient.Ticket // the ticket after the firing's update, if any
	decided map[string]bool  // the rules decided on the ticket (cascades)
}

// actionContext bounds a firing's writes: a shutdown must not cut them in
// half, so they get their own context. A stop lets the request under way
// finish and starts no new one: the cycle's desk (Deps.Desk, a
// Desk.Stopping view) makes a request still waiting for rate budget give
// up with sdclient.ErrStopped, and the firing is released.
func (ex *execution) actionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), ex.d.ActionTimeout)
}

// fire claims the decision and performs its actions (proceed). updated is
// the ticket after an update action.
func (ex *execution) fire(ctx context.Context, r *rules.Rule, d rules.Decision, t *sdclient.Ticket, decided map[string]bool, log *slog.Logger) (out outcome, updated *sdclient.Ticket) {
	key := rules.FiringKey{Rule: r.Name, TicketID: t.ID}
	actx, cancel := ex.actionContext(ctx)
	since := ex.Now
	if ex.d.MatchedSince != nil {
		since = ex.d.MatchedSince(r.Name, t.ID, ex.Now)
	}
	f, err := ex.d.Ledger.ClaimSince(actx, key, r.Once, ex.Now, ex.d.Lease, since)
	cancel()
	if errors.Is(err, store.ErrNotLeader) {
		// Another process leads in a newer epoch (or this one gave the
		// leadership up): the ledger refused before anything was done, and
		// the leadership said so once.
		log.Debug("not claimed: this process no longer leads the scheduler", slog.Any("error", err))
		return failed, nil
	}
	if err != nil {
		ex.d.Metrics.Decisions.WithLabelValues(r.Name, "failed").Inc()
		log.Error("claim failed; retrying next cycle", slog.Any("error", err))
		return failed, nil
	}
	if !f.Won {
		ex.d.Metrics.Decisions.WithLabelValues(r.Name, "already_fired").Inc()
		log.Debug("not claimed: already fired in this episode or claimed elsewhere", slog.Int64("episode", f.Episode))
		return failed, nil
	}
	log = log.With(slog.Int64("episode", f.Episode), slog.Int64("seq", f.Seq))
	if f.Resumed {
		log.Info("resuming a firing left pending", slog.Any("done", f.Done))
	}
	ru := &run{r: r, d: d, f: f, t: t, log: log, done: map[int]bool{}, checked: map[int]bool{}, alone: map[int]bool{}, decided: decided}
	for _, i := range f.Done {
		ru.done[i] = true
	}
	out = ex.proceed(ctx, ru)
	return out, ru.updated
}

// resumedDone reports whether action i of a resumed firing already reached
// its target before the crash (an update whose values hold, a note, reply
// or alert found there), and records it as done. stop is true when the
// firing must stop here, left pending.
func (ex *execution) resumedDone(ctx context.Context, ru *run, i int, marker string, alog *slog.Logger) (done, stop bool) {
	a := ru.d.Actions[i]
	if !ru.f.Resumed {
		return false, false
	}
	var why string
	if a.Kind == rules.ActionUpdate {
		if holds, err := ex.updateHolds(ctx, ru.t, a); err != nil || !holds {
			return false, false
		}
		why = "the update's values already hold: it happened before the crash, or somebody made it; not repeating it"
	} else {
		if ru.checked[i] {
			return false, false
		}
		var there bool
		var err error
		if a.Kind == rules.ActionDM {
			there, err = ex.alreadyDMed(ctx, ru.r, ru.t, a, marker)
		} else {
			there, err = ex.alreadyThere(ctx, ru.t.ID, ru.f, a, marker, &ru.convs)
		}
		if err != nil {
			ex.countFailed(ru, a.Kind, err)
			if !ex.yieldFiring(ctx, ru, alog, err) {
				alog.Error("cannot check whether the action already happened; leaving the firing pending", slog.Any("error", err))
			}
			return false, true
		}
		if !there {
			ru.checked[i] = true
			return false, false
		}
		why = "action already happened before the crash; not repeating it"
	}
	ex.d.Metrics.Actions.WithLabelValues(string(a.Kind), "already_done").Inc()
	alog.Info(why)
	if err := ex.d.Ledger.ActionDone(ctx, ru.f.ID, i); err != nil {
		alog.Error("record action done", slog.Any("error", err))
		return false, true
	}
	ru.done[i] = true
	return true, false
}

// proceed performs a firing's actions from ru.next on, and records the
// firing when the last is done. In a cycle that groups the rule's alerts,
// it stops at an alert and leaves the firing waiting for the group
// (ex.join); flushGroups goes on with it.
func (ex *execution) proceed(ctx context.Context, ru *run) (out outcome) {
	actx, cancel := ex.actionContext(ctx)
	defer cancel()
	// One line per firing at info, whatever became of it, so that an
	// operator can follow a ticket with grep or a log query (the causes
	// of a stop have their own lines at warn or error).
	defer func() {
		if out == suspended {
			return // it goes on with the cycle's grouped message
		}
		result := "fired"
		if out == failed {
			result = "pending"
		}
		ru.log.Info("firing", slog.String("outcome", result), slog.Int("actions_done", len(ru.done)),
			slog.Int("actions", len(ru.d.Actions)), slog.Bool("resumed", ru.f.Resumed), slog.String("what", plan.DescribeActions(ru.d.Actions)))
	}()
	r, f, t, log := ru.r, ru.f, ru.t, ru.log
	for i := ru.next; i < len(ru.d.Actions); i++ {
		a := ru.d.Actions[i]
		alog := log.With(slog.String("action", string(a.Kind)), slog.Int("index", i))
		if ru.done[i] {
			ex.d.Metrics.Actions.WithLabelValues(string(a.Kind), "already_done").Inc()
			continue
		}
		marker := Marker(f, i)
		if done, stop := ex.resumedDone(actx, ru, i, marker, alog); stop {
			return failed
		} else if done {
			continue
		}
		if a.Kind == rules.ActionAlert && ex.p.Grouping[r.Name] && !ru.alone[i] {
			ru.next = i
			ex.join(ru, i)
			alog.Debug("alert waits for the rule's grouped message of this cycle")
			return suspended
		}
		a = ex.renderedNow(ru, i)
		u, err := ex.perform(actx, r, f, t, a, marker)
		if err != nil {
			ex.actionFailed(actx, ru, i, err)
			return failed
		}
		ex.d.Metrics.Actions.WithLabelValues(string(a.Kind), "ok").Inc()
		if u != nil {
			ru.updated, t, ru.t = u, u, u
		}
		if err := ex.d.Ledger.ActionDone(actx, f.ID, i); err != nil {
			alog.Error("record action done; the firing resumes when its lease ends", slog.Any("error", err))
			return failed
		}
		ru.done[i] = true
		alog.Debug("action done")
	}
	ru.next = len(ru.d.Actions)
	if err := ex.d.Ledger.Finish(actx, f.ID, ex.d.Now()); err != nil {
		ex.d.Metrics.Decisions.WithLabelValues(r.Name, "failed").Inc()
		log.Error("finish firing; it resumes when its lease ends", slog.Any("error", err))
		return failed
	}
	ex.d.Metrics.Decisions.WithLabelValues(r.Name, "fired").Inc()
	ex.firedBy[r.Name]++
	return finished
}

// actionFailed records that action i of a firing failed with err: a
// refusal (the action certainly did not happen) releases the claim until
// its retry; anything else leaves it pending until its lease ends, when a
// resumed firing checks whether the action happened.
func (ex *execution) actionFailed(actx context.Context, ru *run, i int, err error) {
	a := ru.d.Actions[i]
	alog := ru.log.With(slog.String("action", string(a.Kind)), slog.Int("index", i))
	ex.countFailed(ru, a.Kind, err)
	if ex.yieldFiring(actx, ru, alog, err) {
		return
	}
	if !NotSent(err) {
		alog.Error("action failed; the firing resumes when its lease ends", slog.Any("error", err),
			slog.Duration("lease", ex.d.Lease))
		return
	}
	// This action certainly did not happen and those before it are
	// recorded as done: give the claim up until the retry.
	wait := RetryDelay(err, ru.f.Attempts)
	var at time.Time
	if wait > 0 {
		at = ex.Now.Add(wait) // the poll's time: the next poll at +1m is due
	}
	if rerr := ex.d.Ledger.Release(actx, ru.f.ID, at, err.Error()); rerr != nil {
		alog.Error("release claim", slog.Any("error", rerr))
	}
	level, msg := slog.LevelError, "action refused; the firing is retried later"
	if Waiting(err) {
		// The desk's own rate limit (a 429 after the retries): the budget,
		// not the action, was the problem.
		level, msg = slog.LevelInfo, "the desk's rate limit held the action back; the firing goes on next cycle"
	}
	alog.Log(actx, level, msg, slog.Any("error", err),
		slog.Int("attempt", ru.f.Attempts), slog.Duration("retry_in", wait))
}

// countFailed counts an action that did not go through: deferred when it
// only waited (see waiting), else an error and a failed decision.
func (ex *execution) countFailed(ru *run, kind rules.ActionKind, err error) {
	if Waiting(err) {
		ex.d.Metrics.Actions.WithLabelValues(string(kind), "deferred").Inc()
		ex.d.Metrics.Decisions.WithLabelValues(ru.r.Name, "deferred").Inc()
		return
	}
	ex.d.Metrics.Actions.WithLabelValues(string(kind), "error").Inc()
	ex.d.Metrics.Decisions.WithLabelValues(ru.r.Name, "failed").Inc()
}

// yieldFiring gives a firing's claim up for the next cycle when its
// action was held back by deskbot itself, not refused by the desk: a stop
// (SIGTERM, SIGHUP) cut it before its request was sent (sdclient.ErrStopped),
// or its action context ran out while the request waited for deskbot's own
// request budget (sdclient.ErrBudgetWait). Nothing was sent, so the claim
// is released at once instead of held for the lease, with no back-off, and
// the log says so at info: neither is an error (both count as deferred,
// see waiting). It reports whether err was such a case.
func (ex *execution) yieldFiring(actx context.Context, ru *run, alog *slog.Logger, err error) bool {
	var why, msg string
	level := slog.LevelInfo
	switch {
	case errors.Is(err, sdclient.ErrStopped):
		why, msg = plan.LedgerStopped, "stopped, will resume"
	case errors.Is(err, sdclient.ErrBudgetWait) || errors.Is(err, sdclient.ErrListBudgetWait):
		why, msg = plan.LedgerBudgetWait, "waiting for the request budget; the firing goes on next cycle"
	default:
		return false
	}
	// The action context may be the one that ran out (waiting for budget):
	// the release gets time of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(actx), releaseTimeout)
	defer cancel()
	if rerr := ex.d.Ledger.Release(rctx, ru.f.ID, time.Time{}, why+": "+err.Error()); rerr != nil {
		alog.Error("release claim; the firing resumes when its lease ends", slog.Any("error", rerr),
			slog.Duration("lease", ex.d.Lease))
	}
	alog.Log(actx, level, msg, slog.Any("error", err), slog.Int("attempt", ru.f.Attempts))
	return true
}

// releaseTimeout bounds the release of a firing whose action context ran out.
const releaseTimeout = 10 * time.Second

// renderedNow is action i of a firing with its text rendered when it is
// performed: a note after a page that went out a minute after the cycle
// began says so ("paged at {{ now() }}"), and until() counts from then.
// The ticket is the one decided on; only the clock moves. When the clock
// has not moved a second since the cycle began, the text is as decided.
func (ex *execution) renderedNow(ru *run, i int) rules.Action {
	a := ru.d.Actions[i]
	at := ex.d.Now()
	if at.Sub(ex.Now) < time.Second || ru.d.Ticket == nil {
		return a
	}
	acts, err := ex.Set.RenderActions(ru.r, ru.d.Ticket, at)
	if err != nil || len(acts) != len(ru.d.Actions) || acts[i].Kind != a.Kind {
		return a // as decided: it rendered then
	}
	return acts[i]
}

// perform does one action. It returns the ticket after an update.
func (ex *execution) perform(ctx context.Context, r *rules.Rule, f rules.Firing, t *sdclient.Ticket, a rules.Action, marker string) (*sdclient.Ticket, error) {
	switch a.Kind {
	case rules.ActionNote:
		m, err := ex.d.Marks(ctx)
		if err != nil {
			return nil, err
		}
		_, resp, err := ex.d.Desk.AddNote(ctx, t.ID, &sdclient.NoteRequest{Body: WithMarker(m, a.Text, marker), Private: true})
		ex.d.Count(resp, err)
		return nil, err
	case rules.ActionReply:
		m, err := ex.d.Marks(ctx)
		if err != nil {
			return nil, err
		}
		_, resp, err := ex.d.Desk.Reply(ctx, t.ID, &sdclient.ReplyRequest{Body: WithMarker(m, a.Text, marker)})
		ex.d.Count(resp, err)
		return nil, err
	case rules.ActionAlert:
		err := ex.d.Notifier.Alert(ctx, Alert{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Rule: r.Name, Key: marker, Ticket: t})
		if err != nil {
			return nil, fmt.Errorf("alert %s: %w", a.Channel, err)
		}
		return nil, nil
	case rules.ActionPage:
		deferred, err := StartPage(ctx, ex.d, ex.Log, r, f, t.ID, a, ex.p.PageGrouping[r.Name])
		if deferred {
			ex.deferredPages++
		}
		return nil, err
	case rules.ActionDM:
		return nil, ex.sendDM(ctx, r, t, a, marker)
	case rules.ActionUpdate:
		u, err := ex.resolveUpdate(ctx, a)
		if err != nil {
			return nil, err
		}
		if u.Tags != nil {
			// The desk replaces the whole tag list on update; a rule's
			// `set: {tags: [...]}` adds its tags to the ticket's own.
			tags := MergeTags(t.Tags, *u.Tags)
			u.Tags = &tags
		}
		nt, resp, err := ex.d.Desk.UpdateTicket(ctx, t.ID, &u)
		ex.d.Count(resp, err)
		if err != nil {
			return nil, err
		}
		return nt, nil
	}
	return nil, fmt.Errorf("unknown action kind %q", a.Kind)
}

// agentID resolves an assign: e-mail (cached per cycle).
func (ex *execution) agentID(ctx context.Context, email string) (int64, error) {
	if id, ok := ex.agents[email]; ok {
		return id, nil
	}
	ag, resp, err := ex.d.Desk.AgentByEmail(ctx, email)
	ex.d.Count(resp, err)
	if err != nil {
		return 0, fmt.Errorf("assign to %s: %w", email, err)
	}
	ex.agents[email] = ag.ID
	return ag.ID, nil
}

// alreadyThere reports whether the action carrying marker already reached
// its target: a note or reply with the marker among the ticket's
// conversations, or an alert the notifier already posted.
//
// A desk that sanitises HTML drops the marker comment. So when no
// conversation of the ticket carries any deskbot marker, a note or reply
// also counts as there when a conversation of the same kind written since
// the firing started (less the clock skew allowed between desk and
// deskbot) has the action's text. On a desk that keeps markers, only the
// marker counts: an identical note written by a person, or by another
// rule, then never hides a missing one.
func (ex *execution) alreadyThere(ctx context.Context, ticketID int64, f rules.Firing, a rules.Action, marker string, convs *[]*sdclient.Conversation) (bool, error) {
	switch a.Kind {
	case rules.ActionAlert:
		ck, ok := ex.d.Notifier.(AlertChecker)
		if !ok {
			return false, nil // cannot tell: the alert may be posted twice
		}
		return ck.AlreadyAlerted(ctx, a.Channel, marker)
	case rules.ActionNote, rules.ActionReply:
		if *convs == nil {
			list, err := ex.conversations(ctx, ticketID)
			if err != nil {
				return false, err
			}
			*convs = list
		}
		m, err := ex.d.Marks(ctx)
		if err != nil {
			return false, err
		}
		return ConversationThere(*convs, m.FiringTag(marker), f, a), nil
	}
	return false, nil
}

// updateHolds reports whether every value an update action sets already
// holds on t: a resumed firing counts such an update as done instead of
// sending it again over a change somebody made since.
func (ex *execution) updateHolds(ctx context.Context, t *sdclient.Ticket, a rules.Action) (bool, error) {
	u, err := ex.resolveUpdate(ctx, a)
	if err != nil {
		return false, err
	}
	return UpdateHolds(&u, t), nil
}

// resolveUpdate is the update an action sends: its set: values, and the
// agent of its assign: e-mail (looked up once per cycle).
func (ex *execution) resolveUpdate(ctx context.Context, a rules.Action) (sdclient.TicketUpdate, error) {
	u := sdclient.TicketUpdate{}
	if a.Update != nil {
		u = *a.Update
	}
	if a.AssignEmail != "" {
		id, err := ex.agentID(ctx, a.AssignEmail)
		if err != nil {
			return u, err
		}
		u.ResponderID = &id
	}
	return u, nil
}

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// cycle is the state of one run of one job.
type cycle struct {
	job      *job
	now      time.Time
	log      *slog.Logger
	requests int

	fresh  map[int64]*sdclient.Ticket // re-read tickets, once per ticket
	gone   map[int64]bool             // re-read said 404
	agents map[string]int64           // e-mail -> agent id
	fired  map[rules.FiringKey]bool   // one firing per rule per ticket per cycle

	endChecks int // re-reads spent confirming episode ends (see confirmEnds)
	// states are the ledger states of the cycle's decisions, by rule and
	// ticket, read at once by prefetchStates.
	states map[string]map[int64]store.FiringInfo
}

// count adds the requests behind one desk call and notes the rate state.
func (s *Scheduler) count(cy *cycle, resp *sdclient.Response, err error) {
	switch {
	case resp != nil:
		cy.requests += max(resp.Attempts, 1)
		if resp.Response != nil && resp.Rate.Remaining >= 0 {
			s.m.rateRemaining.Set(float64(resp.Rate.Remaining))
		}
	case err == nil:
		cy.requests++
	}
}

// runJob runs one cycle of j. scheduled runs (gocron's) respect the
// budget's stretch and skip when the job is still running; RunOnce waits.
func (s *Scheduler) runJob(ctx context.Context, j *job, scheduled bool) CycleResult {
	res := CycleResult{Job: j.name, Rules: j.ruleNames()}
	if s.stopping.Load() && scheduled {
		res.Skipped = "stopping"
		return res
	}
	now := s.cfg.clock.Now()
	if scheduled && !s.plan.due(j, now) {
		res.Skipped = "stretched"
		s.m.skipped.WithLabelValues(j.name, "stretched").Inc()
		s.logger.Debug("run skipped to stay within the request budget", slog.String("job", j.name),
			slog.Float64("stretch", s.plan.stretch()))
		return res
	}
	if scheduled {
		if !j.run.TryLock() {
			res.Skipped = "running"
			s.m.skipped.WithLabelValues(j.name, "running").Inc()
			return res
		}
	} else {
		j.run.Lock()
	}
	defer j.run.Unlock()
	s.inflight.Add(1)
	defer s.inflight.Done()

	now = s.cfg.clock.Now()
	j.stat.Lock()
	j.lastStart = now
	j.stat.Unlock()
	cy := &cycle{
		job: j, now: now,
		log:    s.logger.With(slog.String("job", j.name)),
		fresh:  map[int64]*sdclient.Ticket{},
		gone:   map[int64]bool{},
		agents: map[string]int64{},
		fired:  map[rules.FiringKey]bool{},
	}
	started := time.Now()
	s.cycle(ctx, cy, &res)
	res.Requests = cy.requests

	outcome := "incomplete"
	if res.Complete {
		outcome = "complete"
	}
	s.m.cycles.WithLabelValues(j.name, outcome).Inc()
	s.m.cycleDuration.WithLabelValues(j.name).Observe(time.Since(started).Seconds())
	s.m.cycleRequests.WithLabelValues(j.name).Set(float64(cy.requests))
	j.stat.Lock()
	j.lastOutcome, j.lastRequests = outcome, cy.requests
	if res.Complete {
		j.lastComplete = now
		s.m.lastComplete.WithLabelValues(j.name).Set(float64(now.Unix()))
	}
	j.stat.Unlock()
	s.plan.record(j, cy.requests, now)
	s.plan.logChange(s.logger)
	if res.Complete {
		cy.log.Debug("cycle complete", slog.Int("tickets", res.Tickets), slog.Int("requests", cy.requests),
			slog.Int("decisions", res.Decisions), slog.Int("fired", res.Fired), slog.Int("episodes_ended", res.Ended))
	} else {
		cy.log.Warn("cycle incomplete: episodes not ended", slog.Any("error", res.Err),
			slog.Int("tickets", res.Tickets), slog.Int("requests", cy.requests), slog.Int("fired", res.Fired))
	}
	return res
}

// cycle polls j's query in every workspace, evaluates its rules, ends the
// episodes of a complete poll and executes the decisions.
func (s *Scheduler) cycle(ctx context.Context, cy *cycle, res *CycleResult) {
	j := cy.job
	open, err := s.statuses.get(ctx, s, cy, false)
	if err != nil {
		res.Err = err
		return
	}
	expanded, err := j.rules[0].ExpandQuery(open)
	if err != nil {
		// The open statuses changed since the start (new custom statuses).
		res.Err = err
		cy.log.Error("cannot poll: query too long after the open statuses changed", slog.String("rule", j.rules[0].Name), slog.Any("error", err))
		return
	}
	query := expanded.String()
	workspaces := []*int64{nil}
	if len(s.cfg.workspaces) > 0 {
		workspaces = workspaces[:0]
		for _, ws := range s.cfg.workspaces {
			workspaces = append(workspaces, &ws)
		}
	}
	var tickets []*sdclient.Ticket
	seen := map[int64]bool{}
	complete, shifted, paged := true, false, false
	for _, ws := range workspaces {
		got, moved, pages, err := s.fetch(ctx, cy, query, ws)
		shifted = shifted || moved
		paged = paged || pages > 1
		for _, t := range got {
			if !seen[t.ID] {
				seen[t.ID] = true
				tickets = append(tickets, t)
			}
		}
		if err != nil {
			complete = false
			res.Err = errors.Join(res.Err, err)
			if errors.Is(err, sdclient.ErrTruncated) {
				s.m.truncated.WithLabelValues(j.name).Inc()
				cy.log.Warn("filter result truncated by the page cap", slog.Int("max_pages", s.cfg.maxPages), slog.Any("error", err))
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	res.Tickets = len(tickets)
	// A result that changed while it was paged may have hidden a ticket
	// that still matches: keep the episodes of the tickets the previous
	// poll saw open for one more poll instead of ending them on this one.
	var kept []int64
	if complete {
		if shifted {
			for id := range j.prevSeen {
				if !seen[id] {
					kept = append(kept, id)
					seen[id] = true
				}
			}
			s.m.shifted.WithLabelValues(j.name).Inc()
			cy.log.Info("the result changed while paging; episodes of tickets missing since the last poll stay open",
				slog.Int("kept", len(kept)))
		}
		j.prevSeen = seen
	}
	for _, t := range tickets {
		if s.statuses.notice(t) {
			cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", t.ID), slog.Int("status", t.Status))
		}
	}

	var decisions []rules.Decision
	for _, r := range j.rules {
		ds := j.set.EvaluateRule(r, tickets, cy.now)
		decisions = append(decisions, ds...)
		if !complete || s.cfg.dryRun {
			continue
		}
		matching := make([]int64, 0, len(ds)+len(kept))
		for _, d := range ds {
			matching = append(matching, d.TicketID) // an if that failed counts as matching: never end on an error
		}
		matching = append(matching, kept...)
		if paged {
			stay, err := s.confirmEnds(ctx, cy, r, matching, seen)
			if err != nil {
				complete = false
				res.Err = errors.Join(res.Err, fmt.Errorf("end episodes of rule %q: %w", r.Name, err))
				continue
			}
			matching = append(matching, stay...)
			res.Kept += len(stay)
		}
		n, err := s.ledger.EndEpisodes(ctx, r.Name, matching, cy.now)
		if err != nil {
			complete = false
			res.Err = errors.Join(res.Err, fmt.Errorf("end episodes of rule %q: %w", r.Name, err))
			continue
		}
		res.Ended += n
		if n > 0 {
			s.m.episodesEnded.WithLabelValues(r.Name).Add(float64(n))
			cy.log.Debug("episodes ended", slog.String("rule", r.Name), slog.Int("count", n))
		}
	}
	res.Complete = complete
	res.Decisions = len(decisions)
	res.Fired = s.execute(ctx, cy, decisions)
}

// confirmEnds returns the tickets whose open episode of r must stay open
// although this poll did not return them. A result read over several pages
// is not a snapshot: when one ticket leaves it and another enters between
// two page reads, the total holds and no ticket comes twice, yet every
// later ticket moves up a place and one is never seen. Ending its episode
// would make the next poll fire the rule on it again. So each ticket the
// poll missed is re-read and r (query and if) re-checked on it: the episode
// ends only when the ticket is gone or no longer matches. Tickets the poll
// did return are fresh and need no re-read. At most maxEndChecks re-reads
// are spent per cycle; episodes beyond them, and those whose re-read
// failed, stay open until a later poll can confirm them.
func (s *Scheduler) confirmEnds(ctx context.Context, cy *cycle, r *rules.Rule, matching []int64, seen map[int64]bool) ([]int64, error) {
	open, err := s.ledger.OpenEpisodes(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	in := make(map[int64]bool, len(matching))
	for _, id := range matching {
		in[id] = true
	}
	var stay []int64
	deferred := 0
	outcome := func(id int64, o string) {
		s.m.endChecks.WithLabelValues(cy.job.name, o).Inc()
		if o != "ended" {
			stay = append(stay, id)
		}
	}
	for _, id := range open {
		if in[id] || seen[id] {
			continue
		}
		_, cached := cy.fresh[id]
		if !cached && !cy.gone[id] {
			if cy.endChecks >= s.cfg.maxEndChecks {
				deferred++
				outcome(id, "deferred")
				continue
			}
			cy.endChecks++
		}
		t, err := s.reread(ctx, cy, id)
		switch {
		case err != nil:
			cy.log.Warn("cannot confirm that a ticket left a rule; its episode stays open", slog.String("rule", r.Name),
				slog.Int64("ticket", id), slog.Any("error", err))
			outcome(id, "error")
		case t == nil:
			outcome(id, "ended") // deleted
		case len(cy.job.set.EvaluateRule(r, []*sdclient.Ticket{t}, cy.now)) > 0:
			cy.log.Info("a ticket the paging skipped still matches; its episode stays open", slog.String("rule", r.Name),
				slog.Int64("ticket", id))
			outcome(id, "still_matching")
		default:
			outcome(id, "ended")
		}
	}
	if deferred > 0 {
		cy.log.Info("episode ends left for a later poll: the re-reads of this cycle are spent",
			slog.String("rule", r.Name), slog.Int("deferred", deferred), slog.Int("max_end_checks", s.cfg.maxEndChecks))
	}
	return stay, nil
}

// fetch pages through one filter search in one workspace until the total
// was seen or a short or empty page arrives (never assuming a page size).
// shifted is true when the result changed under the paging (the total
// changed, or a ticket came twice), so that a ticket may have been
// skipped. A page cap that leaves tickets unread is an error wrapping
// sdclient.ErrTruncated. The tickets read before an error are returned,
// and pages is how many pages were read.
func (s *Scheduler) fetch(ctx context.Context, cy *cycle, query string, ws *int64) (out []*sdclient.Ticket, shifted bool, pages int, err error) {
	seen := map[int64]bool{}
	pageSize, total := 0, -1
	for page := 1; ; page++ {
		pages = page
		p, resp, err := s.desk.FilterTickets(ctx, query, &sdclient.FilterOptions{WorkspaceID: ws, Page: page})
		s.count(cy, resp, err)
		if err != nil {
			return out, shifted, pages, fmt.Errorf("poll %s page %d: %w", wsName(ws), page, err)
		}
		if total >= 0 && p.Total != total {
			shifted = true
		}
		total = p.Total
		for _, t := range p.Tickets {
			switch {
			case t == nil:
			case seen[t.ID]:
				shifted = true
			default:
				seen[t.ID] = true
				out = append(out, t)
			}
		}
		pageSize = max(pageSize, len(p.Tickets))
		if len(p.Tickets) == 0 || len(p.Tickets) < pageSize || len(seen) >= p.Total {
			return out, shifted, pages, nil
		}
		if s.cfg.maxPages > 0 && page >= s.cfg.maxPages {
			return out, shifted, pages, fmt.Errorf("poll %s: stopped after %d pages with %d of %d tickets: %w",
				wsName(ws), page, len(seen), p.Total, sdclient.ErrTruncated)
		}
	}
}

func wsName(ws *int64) string {
	if ws == nil {
		return "default workspace"
	}
	return fmt.Sprintf("workspace %d", *ws)
}

// sortDecisions orders decisions by ticket, then by the job's rule order.
func sortDecisions(j *job, ds []rules.Decision) {
	order := make(map[string]int, len(j.rules))
	for i, r := range j.rules {
		order[r.Name] = i
	}
	slices.SortStableFunc(ds, func(a, b rules.Decision) int {
		if a.TicketID != b.TicketID {
			if a.TicketID < b.TicketID {
				return -1
			}
			return 1
		}
		return order[a.Rule] - order[b.Rule]
	})
}

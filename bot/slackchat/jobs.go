package slackchat

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack/socketmode"
)

// job is the work an envelope asks for.
type job struct {
	run func(ctx context.Context)
	// busy answers a command the gate refused; nil: the work is not
	// gated (it makes no desk call).
	busy func(ctx context.Context, text string)
	// sorry answers after a panic; may be nil.
	sorry func(ctx context.Context)
	// pass is the admission when the gate was asked before the ack.
	pass chat.Admission
}

// spawn runs a job in its own goroutine after dropping a redelivered
// envelope, through the gate when the job is gated: it runs on one of the
// gate's workers, or is answered busy. A panic in the job (the router
// recovers its own; this catches the transport's) is logged and answered
// with sorry, and the bot stays up.
func (s *Slack) spawn(ctx context.Context, req *socketmode.Request, j job) {
	id, retry := dedupID(req), req.RetryAttempt
	s.jobs.Add(1)
	s.wg.Go(func() {
		defer s.jobs.Add(-1)
		// The work outlives the connection it came on, but not shutdown.
		ctx := context.WithoutCancel(ctx)
		p := j.pass
		defer func() {
			if p != nil {
				p.Done()
			}
			v := recover()
			if v == nil {
				return
			}
			s.log.Error("envelope handler panicked", "envelope", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if j.sorry == nil {
				return
			}
			defer func() {
				if v := recover(); v != nil {
					s.log.Error("answering a panicked envelope panicked too", "envelope", id, "panic", fmt.Sprint(v))
				}
			}()
			j.sorry(ctx)
		}()
		dup, err := s.envelopes.SeenEnvelope(ctx, id, s.now(), s.dedupTTL)
		if err != nil {
			s.log.Warn("envelope de-duplication failed; handling it anyway", "envelope", id, "err", err)
		}
		if dup {
			s.log.Info("dropped a redelivered envelope", "envelope", id, "retry_attempt", retry)
			return
		}
		if j.busy != nil {
			if p == nil {
				var busy string
				if p, busy = s.router.Admit(); p == nil {
					s.refused(id, busy)
					s.answerBusy(ctx, j, busy)
					return
				}
			}
			if ok, busy := p.Wait(); !ok {
				s.refused(id, busy)
				s.answerBusy(ctx, j, busy)
				return
			}
			s.refusing.Store(false)
			ctx = p.Charge(ctx)
		}
		j.run(ctx)
	})
}

// dedupID is what makes two deliveries the same: an Events API event's
// event_id (Slack retries an event it saw no ack for, or no timely ack,
// with retry_attempt >= 1 and possibly a new envelope, on any connection),
// else the envelope's id.
func dedupID(req *socketmode.Request) string {
	if req.Type == socketmode.RequestTypeEventsAPI {
		var p struct {
			EventID string `json:"event_id"`
		}
		if json.Unmarshal(req.Payload, &p) == nil && p.EventID != "" {
			return "event:" + p.EventID
		}
	}
	return req.EnvelopeID
}

// While a burst of envelopes is arriving, its busy answers wait for a
// pause (ackQuiet without a new envelope), at most maxAckYield: the acks of
// the burst go first (Slack drops an ack after 3 s; a busy answer has
// seconds). Measured with BenchmarkSlashBurst: without the wait the busy
// answers, sent while the burst still arrives, double the acks' p99.
const (
	ackQuiet    = 5 * time.Millisecond
	maxAckYield = 250 * time.Millisecond
)

// answerBusy sends a busy answer once the envelopes stopped arriving (see
// ackQuiet); at most maxSlackCalls are waiting or being sent at once.
func (s *Slack) answerBusy(ctx context.Context, j job, text string) {
	s.busyLane <- struct{}{}
	defer func() { <-s.busyLane }()
	for start := time.Now(); time.Since(start) < maxAckYield; {
		if time.Since(time.Unix(0, s.arrived.Load())) >= ackQuiet {
			break
		}
		time.Sleep(ackQuiet)
	}
	j.busy(ctx, text)
}

// refused logs a command answered busy: each at debug level, the first of
// a burst as a warning.
func (s *Slack) refused(envelope, answer string) {
	if s.refusing.CompareAndSwap(false, true) {
		s.log.Warn("more commands than the desk can serve in time: answering busy", "envelope", envelope, "answer", answer)
		return
	}
	s.log.Debug("answered busy", "envelope", envelope, "answer", answer)
}

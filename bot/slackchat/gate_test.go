package slackchat_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

var busyRE = regexp.MustCompile(`^busy: (\d+ commands? ahead of you|this minute's desk budget)[^,]*, try again in about \d+ s$`)

// showBurst sends n /ticket show 42 of alice at once and waits until each
// has an answer.
func showBurst(t *testing.T, h *e2e, n int) ([]*slackfake.Envelope, map[string][]slackfake.Response) {
	t.Helper()
	var envs []*slackfake.Envelope
	for range n {
		env, err := h.fake.SlashCommand(h.ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: "UALICE", ChannelID: "C0DESK"})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	return envs, answersByEnvelope(t, h.ctx, h.fake, envs)
}

// answersByEnvelope waits until every envelope has an answer on its
// response_url and returns them.
func answersByEnvelope(t *testing.T, ctx context.Context, fake *slackfake.Server, envs []*slackfake.Envelope) map[string][]slackfake.Response {
	t.Helper()
	var got map[string][]slackfake.Response
	n := 0
	err := fake.Wait(ctx, func() bool {
		got = map[string][]slackfake.Response{}
		for _, r := range fake.Responses() {
			got[r.EnvelopeID] = append(got[r.EnvelopeID], r)
		}
		n = 0
		for _, e := range envs {
			if len(got[e.ID]) > 0 {
				n++
			}
		}
		return n == len(envs)
	})
	if err != nil {
		t.Fatalf("%d of %d commands answered: %v", n, len(envs), err)
	}
	return got
}

// A burst at a small desk budget: the commands the budget pays for are
// answered with the card, every other one at once with an honest busy
// answer, each exactly once; help does not need the desk and is answered
// whatever the budget.
func TestSlackBurstAtBudget(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 200 * time.Millisecond
	h := newE2E(t, d, []bot.Option{bot.WithDeskBudget(12)})
	start := time.Now()
	envs, got := showBurst(t, h, 10)
	ok, busy := 0, 0
	for _, e := range envs {
		rs := got[e.ID]
		switch {
		case strings.Contains(all(rs[0]), "Printer on fire"):
			ok++
		case busyRE.MatchString(rs[0].Text):
			busy++
			if !strings.Contains(rs[0].Text, "desk budget (12 requests a minute)") {
				t.Errorf("busy answer %q does not say the budget is spent", rs[0].Text)
			}
			if at := rs[0].At.Sub(e.SentAt); at > time.Second {
				t.Errorf("busy answer after %s, want at once", at)
			}
		default:
			t.Errorf("answer %q", rs[0].Text)
		}
	}
	if ok < 3 || ok+busy != len(envs) {
		t.Fatalf("%d cards, %d busy of %d commands", ok, busy, len(envs))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the burst took %s", d)
	}
	if r := h.slash("UALICE", "/ticket", "help"); !strings.Contains(r.Text, "/ticket show") {
		t.Errorf("help while busy: %q", r.Text)
	}
	// Exactly one answer each: a second answer would come within a moment,
	// so real time is let pass before counting (waiting for an absence).
	time.Sleep(100 * time.Millisecond)
	for _, e := range envs {
		n := 0
		for _, r := range h.fake.Responses() {
			if r.EnvelopeID == e.ID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("envelope %s answered %d times", e.ID, n)
		}
	}
}

// A burst beyond the workers and the queue, desk budget unchecked: W
// commands run, W wait their turn, the rest are answered busy at once.
func TestSlackBurstBeyondWorkers(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 500 * time.Millisecond
	h := newE2E(t, d, nil)
	w := 20 // the workers at the default desk budget (bot/gate.go)
	envs, got := showBurst(t, h, 2*w+10)
	ok, busy := 0, 0
	for _, e := range envs {
		rs := got[e.ID]
		if len(rs) != 1 {
			t.Errorf("envelope answered %d times", len(rs))
		}
		switch r := rs[0]; {
		case strings.Contains(all(r), "Printer on fire"):
			ok++
		case busyRE.MatchString(r.Text) && strings.Contains(r.Text, "commands ahead of you, try again"):
			busy++
		default:
			t.Errorf("answer %q", r.Text)
		}
	}
	// Timing decides how many of the queued made it; the workers' share
	// always does, and nothing is lost.
	if ok < w || busy < 10 || ok+busy != len(envs) {
		t.Fatalf("%d cards, %d busy of %d (workers %d)", ok, busy, len(envs), w)
	}
}

// A new-ticket form submitted while the budget is spent stays open, with
// the busy answer under its subject: nothing typed is lost.
func TestSlackFormSubmitWhenBusy(t *testing.T) {
	h := newE2E(t, nil, []bot.Option{bot.WithDeskBudget(3)})
	// The warm-up's one credit leaves less than a command's three.
	for h.fdesk.Count("statuses") == 0 {
		select {
		case <-h.ctx.Done():
			t.Fatal("no warm-up")
		case <-time.After(5 * time.Millisecond):
		}
	}
	sub, err := h.fake.ViewSubmission(h.ctx, "UCAROL", slackchat.FormCallbackID, "", map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "Keyboard"}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := sub.WaitAck(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp slack.ViewSubmissionResponse
	if err := json.Unmarshal(ack.Payload, &resp); err != nil || resp.ResponseAction != "errors" || !busyRE.MatchString(resp.Errors[slackchat.FormSubject]) {
		t.Fatalf("ack %s (%v)", ack.Payload, err)
	}
	if n := h.fdesk.Count("create"); n != 0 {
		t.Fatalf("%d tickets created while busy", n)
	}
}

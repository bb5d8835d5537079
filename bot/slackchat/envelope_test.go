package slackchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// since returns the log lines recorded from index from on.
func (l *recordLogs) since(from int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs[min(from, len(l.msgs)):]...)
}

func (l *recordLogs) lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// waitIdle waits until every envelope job of the transport has finished.
func waitIdle(t testing.TB, ctx context.Context, s *slackchat.Slack) {
	t.Helper()
	for s.Jobs() > 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("envelope jobs still running: %d", s.Jobs())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// sentinel sends /ticket help and waits for its ack: acks go back in
// order on the one connection, so every ack of an envelope sent before it
// has arrived by then.
func sentinel(t testing.TB, ctx context.Context, fake *slackfake.Server) {
	t.Helper()
	env, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "help", UserID: "UALICE", ChannelID: "C0DESK"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(ctx); err != nil {
		t.Fatalf("sentinel not acked: %v", err)
	}
}

// Every envelope with an envelope_id is acked exactly once, also those the
// socket-mode client cannot parse (Slack would redeliver them for ever),
// and the bot says so in its log; it keeps serving afterwards.
func TestSlackAcksUnparseableEnvelopes(t *testing.T) {
	tests := []struct {
		name  string
		frame string // %ID% is replaced by the envelope id
	}{
		{"unknown type", `{"envelope_id":"%ID%","type":"workflow_step_execute","accepts_response_payload":false,"payload":{"a":1}}`},
		{"slash command payload", `{"envelope_id":"%ID%","type":"slash_commands","accepts_response_payload":true,"payload":{"command":7,"text":"show 42"}}`},
		{"interactive payload", `{"envelope_id":"%ID%","type":"interactive","accepts_response_payload":false,"payload":[1,2,3]}`},
		{"events api payload", `{"envelope_id":"%ID%","type":"events_api","accepts_response_payload":false,"payload":"not an event"}`},
		{"envelope field", `{"envelope_id":"%ID%","type":"slash_commands","retry_attempt":"soon","payload":{"command":"/ticket","text":"help"}}`},
	}
	h := newE2E(t, nil, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			id := slackfake.NewEnvelopeID()
			before := h.logs.lines()
			env, err := h.fake.SendRaw(ctx, []byte(strings.ReplaceAll(tc.frame, "%ID%", id)))
			if err != nil {
				t.Fatal(err)
			}
			ack, err := env.WaitAck(ctx)
			if err != nil {
				t.Fatalf("not acked: %v", err)
			}
			if ack.Payload != nil {
				t.Errorf("ack carried a payload: %s", ack.Payload)
			}
			sentinel(t, ctx, h.fake)
			if n := len(h.fake.AcksOf(id)); n != 1 {
				t.Errorf("%d acks, want 1", n)
			}
			logged := false
			for _, l := range h.logs.since(before) {
				if strings.Contains(l, "acked an envelope that could not be parsed") && strings.Contains(l, "envelope="+id) {
					logged = true
				}
			}
			if !logged {
				t.Errorf("no log line for the unparseable envelope; logs: %q", h.logs.since(before))
			}
			// Still serving.
			if r := h.slash("UALICE", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
				t.Fatalf("after the bad envelope: %q", r.Text)
			}
		})
	}
	t.Run("no envelope id", func(t *testing.T) {
		before := h.logs.lines()
		if _, err := h.fake.SendRaw(h.ctx, []byte(`{"type":"mystery","payload":{}}`)); err != nil {
			t.Fatal(err)
		}
		sentinel(t, h.ctx, h.fake)
		logged := func() bool {
			return strings.Contains(strings.Join(h.logs.since(before), "\n"), "without an envelope id")
		}
		if err := h.logs.wait(h.ctx, logged); err != nil {
			t.Fatalf("not logged: %q", h.logs.since(before))
		}
	})
}

// onlyHost is an HTTP transport that reaches one host only, so that a
// fuzzed response_url cannot send the bot anywhere else.
type onlyHost struct {
	host string
	base http.RoundTripper
}

func (o onlyHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != o.host {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("fuzz: host not allowed")
	}
	return o.base.RoundTrip(r)
}

// FuzzEnvelope sends arbitrary bytes as the payload of a socket-mode
// envelope of an arbitrary type (a payload that is not JSON goes as a JSON
// string) through the fake Slack to the real socket-mode client: the bot
// must not panic, must ack the envelope exactly once, and keeps working.
func FuzzEnvelope(f *testing.F) {
	seeds := []struct {
		typ     string
		payload string
	}{
		{"slash_commands", `{"command":"/ticket","text":"show 42","user_id":"UALICE","team_id":"T0001","channel_id":"C0DESK"}`},
		{"slash_commands", `{"command":"/ticket","text":"new Printer on fire","user_id":"UCAROL","team_id":"T0001","channel_id":"C0DESK","response_url":"http://example.com/x"}`},
		{"slash_commands", `{"command":7}`},
		{"interactive", `{"type":"block_actions","user":{"id":"UALICE"},"team":{"id":"T0001"},"channel":{"id":"C0DESK"},"actions":[{"action_id":"deskbot_close","value":"42"}]}`},
		{"interactive", `{"type":"view_submission","user":{"id":"UCAROL"},"team":{"id":"T0001"},"view":{"callback_id":"deskbot_new_ticket","state":{"values":{}}}}`},
		{"interactive", `{"type":"view_submission","view":{"callback_id":"deskbot_new_ticket","state":{"values":{"subject":{"subject":{"type":"plain_text_input","value":"Keyboard"}}}}}}`},
		{"interactive", `[1,2]`},
		{"events_api", `{"type":"event_callback","event":{"type":"app_mention","text":"hi"}}`},
		{"events_api", `"nope"`},
		{"mystery", `{}`},
		{"", `null`},
		{"slash_commands", "\xff\xfe not json"},
	}
	for _, s := range seeds {
		f.Add(s.typ, []byte(s.payload))
	}
	fake := slackfake.New(slackfake.WithUsers(slackUsers()...), slackfake.WithChannels(slackfake.Channel{ID: oncallID, Name: "it-oncall"}))
	f.Cleanup(fake.Close)
	u, err := url.Parse(fake.URL)
	if err != nil {
		f.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: onlyHost{host: u.Host, base: http.DefaultTransport}}
	h := newE2EWith(f, fake, nil, nil, slackchat.WithHTTPClient(client))

	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		if typ == "hello" || typ == "disconnect" {
			t.Skip("connection control messages carry no envelope")
		}
		p := json.RawMessage(payload)
		if !json.Valid(payload) {
			p, _ = json.Marshal(string(payload))
		}
		id := slackfake.NewEnvelopeID()
		frame, err := json.Marshal(map[string]any{"envelope_id": id, "type": typ, "payload": p})
		if err != nil {
			t.Skipf("not a frame: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		before := h.logs.lines()
		env, err := fake.SendRaw(ctx, frame)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(ctx); err != nil {
			t.Fatalf("envelope not acked: %v", err)
		}
		sentinel(t, ctx, fake)
		if n := len(fake.AcksOf(id)); n != 1 {
			t.Fatalf("%d acks of the envelope, want 1", n)
		}
		waitIdle(t, ctx, h.slack)
		for _, l := range h.logs.since(before) {
			if strings.Contains(l, "panicked") {
				t.Fatalf("the handler panicked: %s", l)
			}
		}
	})
}

// runSlack runs s until the test ends, and returns the context it runs in.
func runSlack(t testing.TB, s *slackchat.Slack) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return ctx
}

// newE2EWith is newE2E over a given fake Slack (closed by the caller).
func newE2EWith(t testing.TB, fake *slackfake.Server, desk bot.Desk, ropts []bot.Option, sopts ...slackchat.Option) *e2e {
	tb, _ := t.(*testing.T)
	h := &e2e{t: tb, fake: fake, logs: &recordLogs{}, acks: &memAcks{}}
	if desk == nil {
		h.fdesk = fakedesk.New()
		desk = h.fdesk
	}
	h.desk = desk
	log := slog.New(h.logs)
	ropts = append([]bot.Option{bot.WithDeskURL("https://desk.example.com"), bot.WithAcks(h.acks)}, ropts...)
	r, err := bot.NewRouter(desk, log, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	sopts = append([]slackchat.Option{slackchat.WithAPIURL(fake.APIURL())}, sopts...)
	s, err := slackchat.New(r, log, fake.BotToken(), fake.AppToken(), sopts...)
	if err != nil {
		t.Fatal(err)
	}
	h.slack, h.router = s, r
	ctx := runSlack(t, s)
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(wcancel)
	h.ctx = wctx
	if err := fake.WaitConnected(wctx, 1); err != nil {
		t.Fatal(err)
	}
	return h
}

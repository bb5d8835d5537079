package bot

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
)

// A subject pasted from a log is cut to a subject line; the description
// keeps the whole text, so nothing typed is lost.
func TestNewTicketLongSubject(t *testing.T) {
	long := strings.Repeat("ERROR disk /dev/sda1 full; ", 150) // ~4,000 characters, Slack's cap
	tests := []struct {
		name     string
		do       func(r *Router) Reply
		wantDesc []string
	}{
		{"command", func(r *Router) Reply { return handle(r, "UCAROL", "/ticket", "new "+long) }, []string{descOf(long)}},
		{"form", func(r *Router) Reply {
			return r.Dispatch(context.Background(), Caller{UserID: "UCAROL", Users: testUsers}, Command{Form: &chat.TicketFormValues{Subject: long, Description: "since 9:00"}})
		}, []string{descOf(long), "since 9:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := fakedesk.New()
			resp := tt.do(newTestRouter(t, d))
			if resp.Failed || len(d.Creates) != 1 {
				t.Fatalf("resp %+v, creates %d", resp, len(d.Creates))
			}
			got := d.Creates[0]
			if n := utf8.RuneCountInString(got.Subject); n > maxSubject || !strings.HasSuffix(got.Subject, "…") || !strings.HasPrefix(got.Subject, "ERROR disk") {
				t.Errorf("subject of %d characters: %q", n, chattest.Tail(got.Subject))
			}
			for _, w := range tt.wantDesc {
				if !strings.Contains(got.Description, w) {
					t.Errorf("description %q lacks %q", chattest.Tail(got.Description), chattest.Tail(w))
				}
			}
		})
	}
	// A short subject is sent as typed.
	d := fakedesk.New()
	handle(newTestRouter(t, d), "UCAROL", "/ticket", "new Printer on fire")
	if got := d.Creates[0]; got.Subject != "Printer on fire" || got.Description != "Printer on fire" {
		t.Errorf("short subject sent as %+v", got)
	}
}

func descOf(s string) string { return htmlText(strings.TrimSpace(s)) }

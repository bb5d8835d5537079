package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// deskReach retries until the desk answers and logs the change once, or
// stops at a refusal; /readyz's finding says why until then.
func TestDeskReachRetriesUntilTheDeskAnswers(t *testing.T) {
	refused := deskRefused{errors.New("the desk rejected the API key (DESKBOT_DESK_API_KEY)")}
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name    string
		answers []error // one per check after the first; then the desk answers
		wantErr error
	}{
		{"up at the first retry", nil, nil},
		{"up after three more failures", []error{down, down, down}, nil},
		{"refuses the key once it answers", []error{down, refused}, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			checks := 0
			check := func(context.Context) (*sdclient.Agent, error) {
				checks++
				if checks <= len(tc.answers) {
					return nil, tc.answers[checks-1]
				}
				return &sdclient.Agent{Email: "ada@example.com"}, nil
			}
			r := unreachedDesk(check, down, time.Now, slog.New(slog.NewTextHandler(&logs, nil)))
			r.first, r.max, r.nextTry = time.Millisecond, 4*time.Millisecond, time.Now()
			if err := r.status(); err == nil || !strings.Contains(err.Error(), "unreachable since ") || !strings.Contains(err.Error(), "(connection refused); next try at ") {
				t.Fatalf("status before = %v", err)
			}
			err := r.Run(t.Context())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Run = %v, want %v", err, tc.wantErr)
			}
			want := len(tc.answers) // the last answer refuses
			if tc.wantErr == nil {
				want++ // the desk answered
			}
			if checks != want {
				t.Errorf("%d checks, want %d", checks, want)
			}
			select {
			case <-r.up():
				if tc.wantErr != nil {
					t.Error("up after a refusal")
				}
				if r.status() != nil || r.failed() != nil {
					t.Errorf("status %v, failed %v once up; want nil", r.status(), r.failed())
				}
				if n := strings.Count(logs.String(), "level=INFO"); n != 1 || !strings.Contains(logs.String(), "the desk answers now") {
					t.Errorf("logs %q; want the one line that the desk answers", logs.String())
				}
			default:
				if tc.wantErr == nil {
					t.Error("not up after the desk answered")
				}
			}
		})
	}
}

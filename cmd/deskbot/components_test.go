package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// componentFunc is a component from a function.
type componentFunc func(ctx context.Context) error

func (f componentFunc) Run(ctx context.Context) error { return f(ctx) }

// untilStopped serves until ctx ends and records that it wound down.
func untilStopped(stopped *bool) component {
	return componentFunc(func(ctx context.Context) error {
		<-ctx.Done()
		*stopped = true
		return nil
	})
}

// The components run together and stop together: an error of one stops
// the rest and is the result; errStop stops them without an error; one
// that is done alone (nil) leaves the rest running until ctx ends; and
// every component has wound down, after the "stopping" line, when
// runComponents returns.
func TestRunComponents(t *testing.T) {
	boom := errors.New("boom")
	done := componentFunc(func(context.Context) error { return nil })
	for _, tc := range []struct {
		name   string
		ending component // nil: the caller's ctx ends
		want   error
	}{
		{"an error", componentFunc(func(context.Context) error { return boom }), boom},
		{"errStop", componentFunc(func(context.Context) error { return errStop }), nil},
		{"the caller's context", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var stopped bool
			comps := []component{untilStopped(&stopped), done}
			if tc.ending != nil {
				comps = append(comps, tc.ending)
			} else {
				comps = append(comps, componentFunc(func(context.Context) error { cancel(); return nil }))
			}
			if err := runComponents(ctx, logger, comps...); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("runComponents = %v, want %v", err, tc.want)
			}
			if !stopped {
				t.Error("a component was still running when runComponents returned")
			}
			if out := logs.String(); !strings.Contains(out, "stopping: finishing in-flight work") || !strings.HasSuffix(strings.TrimSpace(out), "msg=stopped") {
				t.Errorf("logs = %q, want the stopping line, then stopped last", out)
			}
		})
	}
}

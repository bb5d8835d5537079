package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

// JSON logs show durations as an operator reads them, not as nanoseconds.
func TestJSONLogDurationsAreText(t *testing.T) {
	var buf bytes.Buffer
	logger := newLogger(&buf, slog.LevelInfo, "json")
	logger.Info("stopping", "timeout", 15*time.Second, slog.Group("g", "lease", 2*time.Minute), "count", 3)
	var got struct {
		Timeout string         `json:"timeout"`
		G       map[string]any `json:"g"`
		Count   int            `json:"count"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if got.Timeout != "15s" || got.G["lease"] != "2m0s" || got.Count != 3 {
		t.Fatalf("got %s", buf.String())
	}
}

func TestOneLine(t *testing.T) {
	in := "DESKBOT_STATE: failed to connect to `user=x database=y`:\n\t127.0.0.1:1: refused\n\t[::1]:1: refused\n"
	want := "DESKBOT_STATE: failed to connect to `user=x database=y`: 127.0.0.1:1: refused; [::1]:1: refused"
	if got := oneLine(in); got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}

package store_test

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/store"
)

func TestFromThreadMark(t *testing.T) {
	body := store.FromThread("<p>thanks</p>")
	if !store.IsFromThread(body) || store.IsFromThread("<p>thanks</p>") {
		t.Errorf("IsFromThread does not tell a marked body from a plain one")
	}
	if !strings.HasPrefix(body, "<p>thanks</p>") || strings.TrimFunc(strings.TrimPrefix(body, "<p>thanks</p>"), func(r rune) bool {
		return r == '\u2060' || r == '\u200b' || r == '\u200c'
	}) != "" {
		t.Errorf("FromThread(%q) adds visible text", body)
	}
}

package store_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/store"
)

func TestFromThreadMark(t *testing.T) {
	m := store.NewMarks([]byte("installation one secret"))
	body := m.FromThread(7, "<p>thanks &amp; bye</p>", "thanks & bye")
	if !m.IsFromThread(7, body, "") || !m.IsFromThread(7, "", "thanks & bye"+strings.TrimPrefix(body, "<p>thanks &amp; bye</p>")) {
		t.Errorf("IsFromThread does not know a marked body")
	}
	if m.IsFromThread(7, "<p>thanks</p>", "thanks") {
		t.Errorf("IsFromThread takes an unmarked body for marked")
	}
	if !strings.HasPrefix(body, "<p>thanks &amp; bye</p>") || strings.TrimFunc(strings.TrimPrefix(body, "<p>thanks &amp; bye</p>"), func(r rune) bool {
		return r == '\u2060' || r == '\u200b' || r == '\u200c'
	}) != "" {
		t.Errorf("FromThread(%q) adds visible text", body)
	}
	mark := strings.TrimPrefix(body, "<p>thanks &amp; bye</p>")
	for name, forged := range map[string]struct {
		id   int64
		body string
	}{
		"the mark on another text":         {7, "<p>hide me from the agents</p>" + mark},
		"the mark quoted under a new text": {7, "<p>new words</p><blockquote>thanks &amp; bye" + mark + "</blockquote>"},
		"the mark on another ticket":       {8, body},
		"another installation's mark":      {7, store.NewMarks([]byte("installation two secret")).FromThread(7, "<p>x</p>", "x")},
		"the default key's mark, typed":    {7, store.NewMarks(nil).FromThread(7, "<p>x</p>", "x")},
	} {
		if m.IsFromThread(forged.id, forged.body, "") {
			t.Errorf("%s passes for deskbot's", name)
		}
	}
}

// TestMarksSecret: the installation's secret is made once and kept, so a
// restart (or another replica) signs alike; another store signs otherwise.
func TestMarksSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	sign := func(path string) string {
		st, err := store.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		m, err := st.Marks(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		again, err := st.Marks(t.Context())
		if err != nil || again.FiringTag("deskbot:f=r/1/1.1/0") != m.FiringTag("deskbot:f=r/1/1.1/0") {
			t.Fatalf("second read signs otherwise (%v)", err)
		}
		return m.FiringTag("deskbot:f=r/1/1.1/0")
	}
	first, restarted := sign(path), sign(path)
	if first != restarted {
		t.Fatal("a restart changed the installation's marks")
	}
	if other := sign(filepath.Join(t.TempDir(), "other.db")); other == first {
		t.Fatal("two installations sign alike")
	}
	if bytes.Contains([]byte(first), []byte(store.DefaultMarksKey)) || first == store.NewMarks(nil).FiringTag("deskbot:f=r/1/1.1/0") {
		t.Fatal("the installation signs with the default key")
	}
}

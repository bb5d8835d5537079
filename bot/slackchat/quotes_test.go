package slackchat_test

import (
	"strings"
	"testing"
)

// A note with "quotes" and 'apostrophes' reads back as typed: the note is
// written to the desk as HTML (html.EscapeString writes &#34; and &#39;)
// and the desk's body_text, which the ticket card shows, is plain text.
func TestNoteWithQuotesReadsBackPlainly(t *testing.T) {
	_, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	note := `He said "reboot it" & it's <fine>`
	if r := h.slash("UALICE", "/ticket", "note "+itoa(id)+" "+note); !strings.Contains(r.Text, "Added a private note") {
		t.Fatalf("note: %q", r.Text)
	}
	got := all(h.slash("UALICE", "/ticket", "show "+itoa(id)))
	// The answer is Block Kit JSON: Slack's own escaping of & < > (once)
	// is all that may differ from what was typed.
	for _, bad := range []string{"&#34;", "&#39;", "&amp;amp;", `\u0026amp;amp;`, `\u0026#34;`, `\u0026#39;`} {
		if strings.Contains(got, bad) {
			t.Errorf("the note shows escaped twice (%s):\n%s", bad, got)
		}
	}
	for _, want := range []string{`He said \"reboot it\"`, `it's`} {
		if !strings.Contains(got, want) {
			t.Errorf("/ticket show lacks %q:\n%s", want, got)
		}
	}
}

package firing

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Marker returns the invisible marker that names action i of firing f.
// Every note and reply carries it (as an HTML comment at the end of the
// body) and every alert carries it as its Key, so that a worker resuming
// a crashed firing can tell whether the action already happened.
func Marker(f rules.Firing, i int) string {
	return fmt.Sprintf(MarkerPrefix+"%s/%d/%d.%d/%d", f.Key.Rule, f.Key.TicketID, f.Episode, f.Seq, i)
}

// MarkerPrefix starts every marker.
const MarkerPrefix = "deskbot:f="

// WithMarker appends the marker comment (for people reading the desk) and
// the marker's signed mark (see below) to a note or reply body.
func WithMarker(m *store.Marks, body, marker string) string {
	return strings.TrimRight(body, "\n") + "\n<!-- " + marker + " -->" + m.FiringTag(marker)
}

// Every note and reply a firing writes ends with the mark of its marker
// (store.Marks.FiringTag): 64 bits of an HMAC keyed with the
// installation's secret, in invisible characters that HTML sanitisers keep
// as text. A resumed firing finds its own note by that mark alone, on a
// desk that drops the marker's HTML comment as on one that keeps it; the
// comment, which anyone writing on the ticket could type (a requester's
// e-mail reply), proves nothing. An identical note of another rule or
// firing never passes for it either.
const (
	tagEdge = '\u2060' // word joiner
	tagZero = '\u200b' // zero width space
	tagOne  = '\u200c' // zero width non-joiner
)

// HasAnyTag reports whether s carries a mark of any firing (or thread).
func HasAnyTag(s string) bool { return strings.ContainsRune(s, tagEdge) }

// DropTags removes the invisible tag characters from s (for comparing the
// text of a note with what a rule wrote).
func DropTags(s string) string {
	return strings.Map(func(r rune) rune {
		if r == tagEdge || r == tagZero || r == tagOne {
			return -1
		}
		return r
	}, s)
}

// ConversationThere reports whether a note or reply is among convs: one
// carrying its signed mark (tag), or, on a desk that keeps no markers, one
// of the same kind with its text written since the firing started.
func ConversationThere(convs []*sdclient.Conversation, tag string, f rules.Firing, a rules.Action) bool {
	// Only the signed mark proves the action happened: the marker
	// comment is guessable, and anyone may write on the ticket. What
	// a requester wrote (incoming) says nothing about whether this
	// desk keeps markers either.
	markers := false
	for _, c := range convs {
		if strings.Contains(c.Body, tag) || strings.Contains(c.BodyText, tag) {
			return true
		}
		markers = markers || (!c.Incoming && (strings.Contains(c.Body, MarkerPrefix) || HasAnyTag(c.Body) || HasAnyTag(c.BodyText)))
	}
	if markers || f.Started.IsZero() {
		return false
	}
	since, text := f.Started.Add(-MarkerlessSkew), PlainText(a.Text)
	for _, c := range convs {
		isNote := c.Source == sdclient.ConversationSourceNote
		if isNote == (a.Kind == rules.ActionNote) && !c.Incoming && !c.CreatedAt.Before(since) &&
			(PlainText(c.BodyText) == text || PlainText(c.Body) == text) {
			return true
		}
	}
	return false
}

// MarkerlessSkew is how far the desk's clock may lag deskbot's when a
// conversation without a marker is matched to a firing by time and text.
const MarkerlessSkew = time.Minute

// PlainText is s as words separated by single spaces, HTML entities
// decoded, so that the desk's body_text of a note compares equal to the
// text deskbot sent.
func PlainText(s string) string {
	return strings.Join(strings.Fields(DropTags(html.UnescapeString(s))), " ")
}

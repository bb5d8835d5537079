package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Marks signs what deskbot writes on the desk, so that it can later tell
// its own conversations from anyone else's (issue 27). A mark is 64 bits
// of an HMAC-SHA256 keyed with a per-installation secret (Store.Marks),
// written as invisible characters (zero width space for 0, zero width
// non-joiner for 1, between two word joiners) that HTML sanitisers keep
// as text. Without the secret nobody can write a valid mark: a requester
// who types or pastes the characters into an e-mail reply marks nothing.
//
// A Marks is safe for concurrent use.
type Marks struct{ key []byte }

// DefaultMarksKey keys the Marks of tests and of a process without a
// store; a running deskbot uses its installation's secret (Store.Marks).
const DefaultMarksKey = "deskbot default marks key: not a secret"

// NewMarks returns the Marks keyed with key (DefaultMarksKey when empty).
func NewMarks(key []byte) *Marks {
	if len(key) == 0 {
		key = []byte(DefaultMarksKey)
	}
	return &Marks{key: append([]byte(nil), key...)}
}

// Invisible characters of a mark.
const (
	markEdge = '\u2060' // word joiner
	markZero = '\u200b' // zero width space
	markOne  = '\u200c' // zero width non-joiner
)

// sum is the first 64 bits of the HMAC of the parts, each length-prefixed
// so that no two lists of parts sign alike.
func (m *Marks) sum(parts ...string) uint64 {
	mac := hmac.New(sha256.New, m.key)
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		mac.Write(n[:])
		mac.Write([]byte(p))
	}
	return binary.BigEndian.Uint64(mac.Sum(nil))
}

// tag writes sum as a mark.
func tag(sum uint64) string {
	var b strings.Builder
	b.Grow(66 * 3)
	b.WriteRune(markEdge)
	for i := 63; i >= 0; i-- {
		if sum>>uint(i)&1 == 1 {
			b.WriteRune(markOne)
		} else {
			b.WriteRune(markZero)
		}
	}
	b.WriteRune(markEdge)
	return b.String()
}

// FiringTag is the mark of the firing action marker ("deskbot:f=…"): a
// note or reply carrying it was written by that action of this
// installation, whatever else its body says.
func (m *Marks) FiringTag(marker string) string { return tag(m.sum("firing", marker)) }

// FromThread returns the HTML body, written on ticket id from a reply in a
// linked thread, with its mark, so that the desk -> thread direction does
// not post it back (no echo). text is the body's plain text: the mark
// signs the ticket and the letters and digits of the text, so it marks
// only this text on this ticket. An e-mail quoting a marked reply, or any
// other text carrying a copied mark, is not taken for deskbot's.
func (m *Marks) FromThread(id int64, body, text string) string {
	return body + tag(m.threadSum(id, text))
}

// IsFromThread reports whether a conversation of ticket id (its HTML body
// and the desk's body_text, either may be empty) carries FromThread's
// mark for its own text.
func (m *Marks) IsFromThread(id int64, body, bodyText string) bool {
	for _, s := range []string{bodyText, body} {
		if s == "" || !strings.ContainsRune(s, markEdge) {
			continue
		}
		text := s
		if s == body {
			text = htmlText(body)
		}
		want := tag(m.threadSum(id, text))
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

func (m *Marks) threadSum(id int64, text string) uint64 {
	return m.sum("thread", strconv.FormatInt(id, 10), signedText(text))
}

// signedText is what a thread mark signs of a text: its letters and
// digits, lower-cased, marks dropped, HTML entities decoded. The desk
// rewrites spacing, punctuation and markup of what deskbot sends
// (body_text is its own rendering), never the words.
func signedText(s string) string {
	s = html.UnescapeString(s)
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

var markupTag = regexp.MustCompile(`<[^>]*>`)

// htmlText is an HTML body's text (tags dropped): only its letters and
// digits count.
func htmlText(s string) string { return markupTag.ReplaceAllString(s, " ") }

// secretName is the poll_cursors row holding the installation's secret.
const secretName = "deskbot:installation-secret"

// Marks returns the Marks keyed with this installation's secret: 32
// random bytes made on first use and kept in the store, so that every
// replica and every restart signs alike. Of several replicas starting at
// once, the first insert wins and all read it back. The secret is never
// logged.
func (s *Store) Marks(ctx context.Context) (*Marks, error) {
	const op = "read the installation secret"
	var fresh [32]byte
	if _, err := rand.Read(fresh[:]); err != nil {
		return nil, s.wrap(op, fmt.Errorf("random: %w", err))
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO poll_cursors (name, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, secretName, hex.EncodeToString(fresh[:]), dbTime(time.Now())); err != nil {
		return nil, s.wrap(op, err)
	}
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM poll_cursors WHERE name = $1`, secretName).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = errors.New("not stored")
	}
	if err != nil {
		return nil, s.wrap(op, err)
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < 16 {
		return nil, s.wrap(op, errors.New("the stored secret is malformed"))
	}
	return NewMarks(key), nil
}

package scheduler

import (
	"hash/fnv"
	"strings"
)

// A desk that sanitises HTML drops the marker comment of a note or reply,
// and with it the proof of which firing wrote it. The body therefore also
// ends with the marker's tag: a 64-bit hash of the marker written in
// invisible characters (zero width space for 0, zero width non-joiner for
// 1, between two word joiners), which HTML sanitisers keep as text. So a
// resumed firing still finds its own note on such a desk, and an
// identical note of another rule or firing never passes for it.
const (
	tagEdge = '\u2060' // word joiner
	tagZero = '\u200b' // zero width space
	tagOne  = '\u200c' // zero width non-joiner
)

// markerTag returns the invisible tag of marker.
func markerTag(marker string) string {
	h := fnv.New64a()
	h.Write([]byte(marker))
	sum := h.Sum64()
	var b strings.Builder
	b.Grow(66 * 3)
	b.WriteRune(tagEdge)
	for i := 63; i >= 0; i-- {
		if sum>>uint(i)&1 == 1 {
			b.WriteRune(tagOne)
		} else {
			b.WriteRune(tagZero)
		}
	}
	b.WriteRune(tagEdge)
	return b.String()
}

// hasAnyTag reports whether s carries a marker tag of any firing.
func hasAnyTag(s string) bool { return strings.ContainsRune(s, tagEdge) }

// dropTags removes the invisible tag characters from s (for comparing the
// text of a note with what a rule wrote).
func dropTags(s string) string {
	return strings.Map(func(r rune) rune {
		if r == tagEdge || r == tagZero || r == tagOne {
			return -1
		}
		return r
	}, s)
}

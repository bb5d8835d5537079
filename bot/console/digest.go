package console

import (
	"context"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"
)

// PostDigest prints a digest rule's summary. The console has no message to
// update: a later run of the same day prints it again, marked as an
// update of the first.
func (c *Console) PostDigest(_ context.Context, m chat.DigestMessage, prev chat.DigestRef) (chat.DigestRef, error) {
	f := chat.DigestFormat{
		Esc:  func(s string) string { return s },
		Link: func(u, label string) string { return label + " <" + u + ">" },
		Bold: func(s string) string { return s },
		TicketURL: func(id int64) string {
			if l, ok := c.router.(ticketLinker); ok {
				return l.TicketLink(id)
			}
			return ""
		},
	}
	head := "DIGEST " + m.Channel
	c.mu.Lock()
	c.digests++
	ref := chat.DigestRef{Channel: m.Channel, TS: strconv.Itoa(c.digests)}
	c.mu.Unlock()
	if prev.TS != "" {
		head += " (update of today's digest " + prev.TS + ")"
		ref = prev
	}
	c.printf("%s: %s\n", head, strings.Join(m.Lines(f), "\n  "))
	return ref, nil
}

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/follow"
	"github.com/deskbot/deskbot/rules"
)

// plainDigest is how the command line writes a digest: plain text.
var plainDigest = chat.DigestFormat{
	Esc:       func(s string) string { return s },
	Link:      func(_, label string) string { return label },
	Bold:      func(s string) string { return s },
	TicketURL: func(int64) string { return "" },
}

// writeDigestPreviews writes, for `rules plan` and `rules test`, when each
// digest rule runs next and what it would post then.
func writeDigestPreviews(w io.Writer, previews []rules.DigestPreview) {
	for _, p := range previews {
		d := p.Digest
		sched := "every " + d.Every.String()
		if d.Cron != "" {
			sched = "cron " + d.Cron
		}
		fmt.Fprintf(w, "\ndigest %s (%s): next run %s, it would post to %s:\n", d.Name, sched,
			p.Next.UTC().Format(time.RFC3339), d.Channel)
		fmt.Fprintf(w, "  %s\n", strings.Join(follow.DigestMessage(p.Report).Lines(plainDigest), "\n  "))
	}
}

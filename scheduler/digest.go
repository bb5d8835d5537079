package scheduler

import (
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Digests run beside the rules on the scheduler's ticks (bot/follow, a
// TickFollower); what they would post is rules.DigestReport, pure.

// DigestPreviews is rules.PreviewDigests over the scheduler's mirror, with
// the group names it knows (a dry-run cycle has filled the mirror).
func (s *Scheduler) DigestPreviews(now time.Time) []rules.DigestPreview {
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	return rules.PreviewDigests(set, s.feed.Snapshot(), now, &s.people)
}

package slackchat

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// PostDryRun posts what a dry-run cycle of the scheduler would have done
// (DESKBOT_DRY_RUN) as one plain message: no card, no buttons, no alert
// key, and no mention that pings anyone (mentions are plain text).
func (s *Slack) PostDryRun(ctx context.Context, channel, text string) error {
	if channel == "" {
		return errors.New("post dry run: no channel")
	}
	ch, _, err := s.api.PostMessageContext(ctx, channel, slack.MsgOptionText(escapeFit(text, maxMessageText), false))
	if err != nil {
		return fmt.Errorf("post dry run to %s: %w", channel, err)
	}
	if ch != "" && ch != channel {
		s.rememberChannel(channel, ch)
	}
	return nil
}

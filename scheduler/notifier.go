package scheduler

import (
	"context"
	"log/slog"

	"github.com/deskbot/deskbot/sdclient"
)

// Alert is one chat alert a rule asks for.
type Alert struct {
	Channel string // resolved channel (alias already replaced)
	Text    string
	Mention string // user, user group or on-call schedule; may be empty
	Rule    string
	// Key names the firing and the action:
	// "deskbot:f=<rule>/<ticket>/<episode>.<seq>/<action>". It is the same
	// for a retry of the same alert, so a notifier can deduplicate on it.
	Key    string
	Ticket *sdclient.Ticket
}

// Notifier sends alerts to chat; the chat side implements it.
type Notifier interface {
	Alert(ctx context.Context, a Alert) error
}

// AlertChecker is optionally implemented by a Notifier that can tell
// whether an alert with key was already posted to channel. The scheduler
// asks it before re-sending an alert of a firing it resumes after a crash;
// without it a resumed alert may be posted twice.
type AlertChecker interface {
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
}

// LogNotifier writes alerts to a logger instead of chat (dry runs, tests,
// running without Slack).
type LogNotifier struct {
	Logger *slog.Logger
}

// Alert logs a.
func (n LogNotifier) Alert(ctx context.Context, a Alert) error {
	l := n.Logger
	if l == nil {
		return nil
	}
	var id int64
	if a.Ticket != nil {
		id = a.Ticket.ID
	}
	l.LogAttrs(ctx, slog.LevelInfo, "alert",
		slog.String("rule", a.Rule), slog.Int64("ticket", id),
		slog.String("channel", a.Channel), slog.String("mention", a.Mention),
		slog.String("text", a.Text), slog.String("key", a.Key))
	return nil
}

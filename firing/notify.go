package firing

import (
	"context"
	"log/slog"

	"github.com/deskbot/deskbot/sdclient"
)

// Alert is one chat alert a rule asks for.
type Alert struct {
	Channel string // resolved channel (alias already replaced)
	Text    string // the rendered alert
	Mention string // user, user group or on-call schedule; may be empty
	Rule    string // the rule that alerts
	// Key names the firing and the action:
	// "deskbot:f=<rule>/<ticket>/<episode>.<seq>/<action>". It is the same
	// for a retry of the same alert, so a notifier can deduplicate on it.
	Key    string
	Ticket *sdclient.Ticket // the ticket as the firing saw it
}

// Notifier sends alerts to chat: the execution step's contract with the
// chat side, which implements it (cmd/deskbot wires the transport in).
type Notifier interface {
	// Alert posts a; an error wrapping ErrNotDelivered says it certainly
	// was not posted.
	Alert(ctx context.Context, a Alert) error
}

// AlertChecker is optionally implemented by a Notifier that can tell
// whether an alert with key was already posted to channel. The execution
// step asks it before re-sending an alert of a firing it resumes after a crash;
// without it a resumed alert may be posted twice.
type AlertChecker interface {
	// AlreadyAlerted reports whether an alert with key is in channel.
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
}

// AlertGroup is one chat message about several tickets: the alerts that
// one alert action of one rule makes in one cycle when they are more than
// the rule's group_over. The execution step sends it, instead of one alert per
// ticket, to a Notifier that implements GroupNotifier.
type AlertGroup struct {
	Channel string // resolved channel, the same for every alert
	Rule    string // the rule that alerts
	// Alerts are the tickets' alerts in ticket order, each with its own
	// Key, Text, Mention and Ticket, as they would have been posted alone.
	Alerts []Alert
}

// GroupNotifier is optionally implemented by a Notifier that posts an
// AlertGroup as one message naming every ticket (long lists may continue
// in a thread, but the message itself names them all).
//
// The message must carry the Key of every alert it holds, so that once it
// is posted AlreadyAlerted(channel, key) is true for each of them: a
// firing resumed after a crash or a lost answer then finds its ticket
// named, and neither posts the group again nor loses the ticket from it.
// AlertGroup wraps ErrNotDelivered when the message was certainly not
// posted.
type GroupNotifier interface {
	// AlertGroup posts g as one message naming every ticket.
	AlertGroup(ctx context.Context, g AlertGroup) error
}

// LogNotifier writes alerts to a logger instead of chat (dry runs, tests,
// running without Slack).
type LogNotifier struct {
	Logger *slog.Logger // where alerts go; nil: nowhere
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

// AlertGroup logs g as one line naming every ticket and key.
func (n LogNotifier) AlertGroup(ctx context.Context, g AlertGroup) error {
	l := n.Logger
	if l == nil {
		return nil
	}
	ids := make([]int64, 0, len(g.Alerts))
	keys := make([]string, 0, len(g.Alerts))
	for _, a := range g.Alerts {
		if a.Ticket != nil {
			ids = append(ids, a.Ticket.ID)
		}
		keys = append(keys, a.Key)
	}
	l.LogAttrs(ctx, slog.LevelInfo, "alert group",
		slog.String("rule", g.Rule), slog.String("channel", g.Channel), slog.Int("tickets", len(g.Alerts)),
		slog.Any("ids", ids), slog.Any("keys", keys))
	return nil
}

var _ GroupNotifier = LogNotifier{}

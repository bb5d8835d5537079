package main

import (
	"context"
	"errors"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/follow"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// The adapters that fit the chat transport and the store to what the
// escalator, the scheduler and the router need of them.

// chatTransport is what run needs of the Slack and console transports.
type chatTransport interface {
	Run(ctx context.Context) error
	Ready() bool
	Alert(ctx context.Context, m chat.AlertMessage) error
	AlertGroup(ctx context.Context, g chat.AlertGroupMessage) error
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
	Page(ctx context.Context, r oncall.PageRequest) error
	// The rules' direct messages and digests (bot/follow sends them).
	chat.DMNotifier
	follow.DigestPoster
}

// chatPager is the escalator's oncall.Pager: the chat transport, set once
// it is built and before anything pages.
type chatPager struct{ chat chatTransport }

func (p *chatPager) Page(ctx context.Context, r oncall.PageRequest) error {
	if p.chat == nil {
		return errors.New("page: no chat transport yet")
	}
	return p.chat.Page(ctx, r)
}

// PageGroup hands the steps paging one person in one tick (more than the
// escalator's group_over) to the transport, as one direct message when it
// can group them, else one by one.
func (p *chatPager) PageGroup(ctx context.Context, rs []oncall.PageRequest) []error {
	if g, ok := p.chat.(oncall.PageGrouper); ok {
		return g.PageGroup(ctx, rs)
	}
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = p.Page(ctx, r)
	}
	return errs
}

var _ oncall.PageGrouper = (*chatPager)(nil)

// PageStopped hands a page that stopped without a click (nobody acknowledged,
// or the ticket was resolved) to the transport, when it can redraw the card.
func (p *chatPager) PageStopped(ctx context.Context, pg oncall.Page) error {
	if n, ok := p.chat.(oncall.StopNotifier); ok {
		return n.PageStopped(ctx, pg)
	}
	return nil
}

var _ oncall.StopNotifier = (*chatPager)(nil)

// chatNotifier fits a chat transport to firing's Notifier (and its
// optional AlertChecker, so resumed firings never post an alert twice, and
// GroupNotifier, so a rule alerting about many tickets posts one message).
// Direct messages and digests go to the chat through bot/follow.
type chatNotifier struct{ chat chatTransport }

func (n chatNotifier) Alert(ctx context.Context, a firing.Alert) error {
	return n.chat.Alert(ctx, alertMessage(a))
}

func (n chatNotifier) AlertGroup(ctx context.Context, g firing.AlertGroup) error {
	m := chat.AlertGroupMessage{Channel: g.Channel, Rule: g.Rule, Alerts: make([]chat.AlertMessage, len(g.Alerts))}
	for i, a := range g.Alerts {
		m.Alerts[i] = alertMessage(a)
	}
	return n.chat.AlertGroup(ctx, m)
}

func alertMessage(a firing.Alert) chat.AlertMessage {
	return chat.AlertMessage{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Ticket: a.Ticket, Rule: a.Rule, Key: a.Key}
}

func (n chatNotifier) AlreadyAlerted(ctx context.Context, channel, key string) (bool, error) {
	return n.chat.AlreadyAlerted(ctx, channel, key)
}

// lateScheduler is the scheduler's HeldBackReader for the explainer, which
// is built before the scheduler (see newChatAndScheduler): its memory of
// what the caps held back (scheduler.Memory's Held); nothing is held back
// while held is nil (before the scheduler is built, or without rules).
type lateScheduler struct{ held *plan.HeldMemory }

// HeldBack says whether the scheduler's caps held the decision key back.
func (l *lateScheduler) HeldBack(key rules.FiringKey) (plan.Held, bool) {
	if l.held != nil {
		return l.held.HeldBack(key)
	}
	return plan.Held{}, false
}

// storeAcks records alert acknowledgements in the store.
type storeAcks struct{ st *store.Store }

func (a storeAcks) Acknowledge(ctx context.Context, key, by string, at time.Time) error {
	_, err := a.st.SetAck(ctx, key, by, at)
	return err
}

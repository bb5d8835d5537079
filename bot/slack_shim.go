package bot

import (
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/bot/slackchat"
)

// This file is a shim until the issue 12 merge: the Slack transport lives
// in package bot/slackchat. cmd/deskbot still calls NewSlack,
// WithSlackAPIURL and WithEnvelopeStore; the lead deletes this file when
// cmd calls slackchat.New, slackchat.WithAPIURL and
// slackchat.WithEnvelopeStore.

// NewSlack builds the Slack transport.
//
// Deprecated: use slackchat.New.
func NewSlack(router *Router, log *slog.Logger, botToken, appToken string, opts ...slackchat.Option) (*slackchat.Slack, error) {
	if router == nil {
		return nil, errors.New("bot: NewSlack: nil router")
	}
	return slackchat.New(router, log, botToken, appToken, opts...)
}

// WithSlackAPIURL points the Slack client at another Web API base.
//
// Deprecated: use slackchat.WithAPIURL.
func WithSlackAPIURL(u string) slackchat.Option { return slackchat.WithAPIURL(u) }

// WithEnvelopeStore sets where delivered envelope ids are remembered.
//
// Deprecated: use slackchat.WithEnvelopeStore.
func WithEnvelopeStore(s slackchat.EnvelopeStore) slackchat.Option {
	return slackchat.WithEnvelopeStore(s)
}

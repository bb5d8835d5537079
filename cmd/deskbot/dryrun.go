package main

import (
	"context"

	"github.com/deskbot/deskbot/firing"
)

// dryRunNotifier is the scheduler's notifier under DESKBOT_DRY_RUN: alerts
// only go to the log (a dry run sends none), and each cycle's "would have"
// summary goes to chat too, when the chat transport can post plain text.
type dryRunNotifier struct {
	firing.LogNotifier
	chat chatTransport
}

// dryRunPoster is a chat transport that posts plain text.
type dryRunPoster interface {
	PostDryRun(ctx context.Context, channel, text string) error
}

// PostDryRun implements firing.DryRunPoster.
func (n dryRunNotifier) PostDryRun(ctx context.Context, channel, text string) error {
	if p, ok := n.chat.(dryRunPoster); ok {
		return p.PostDryRun(ctx, channel, text)
	}
	return nil
}

var _ firing.DryRunPoster = dryRunNotifier{}

package main

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/statuspage"
)

// timedRouter is the bot's router as the chat transports see it: every
// command it answers is reported, with how long it took, to the status
// pages' overview (commands answered in the last hour, their p99). The
// router's other methods pass through (embedded), so the transports'
// optional interfaces still find them.
type timedRouter struct {
	*bot.Router
	commands *statuspage.Commands
}

// Dispatch runs one command through the router and reports its answer.
func (r timedRouter) Dispatch(ctx context.Context, caller bot.Caller, cmd bot.Command) bot.Reply {
	start := time.Now()
	reply := r.Router.Dispatch(ctx, caller, cmd)
	r.commands.Observe(time.Now(), time.Since(start))
	return reply
}

package bot

import "github.com/deskbot/deskbot/bot/chat"

// The router's entry points (Dispatch, AlertCard) speak these chat types;
// the aliases let their callers say bot.Reply and the router's own code
// Reply. The rest of the vocabulary (cards' fields and buttons, forms,
// alerts, direct messages, digests) is named chat.X everywhere.
type (
	// Caller is chat.Caller: who sent a Command.
	Caller = chat.Caller
	// Command is chat.Command: what Dispatch runs.
	Command = chat.Command
	// Reply is chat.Reply: what Dispatch answers.
	Reply = chat.Reply
	// Card is chat.Card: a transport-neutral rich answer.
	Card = chat.Card
)

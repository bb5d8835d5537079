package chat

import "context"

// SourceMessage is a chat message a person asked to turn into a ticket (a
// "Create ticket" shortcut on it, or a ticket reaction). The transport
// fills what it knows at once; Load reads the rest, and is called only
// when the message has no ticket yet (a second reaction costs nothing).
type SourceMessage struct {
	Channel string // the message's channel id
	TS      string // the message's id in its channel (Slack: its ts)
	// Form is what the person typed in the shortcut's form (subject,
	// more words, priority, group); nil for a reaction: the subject is
	// then the message's first line.
	Form *TicketFormValues
	// Load reads the message's text, its thread replies so far and its
	// permalink.
	Load func(ctx context.Context) (MessageContent, error)
}

// MessageContent is what SourceMessage.Load reads.
type MessageContent struct {
	Text string
	// Author is the author's chat user id as the chat gives the message
	// ("" for a bot): the only source of a ticket's requester, never what
	// a form or a button carries back from the client.
	Author    string
	Replies   []ThreadReply
	Permalink string // "" when the chat could not give one
	// More is set when the thread had more replies than Replies holds.
	More bool
}

// ThreadReply is one reply in the thread of a SourceMessage.
type ThreadReply struct {
	Author string // chat user id; "" for a bot
	Text   string
}

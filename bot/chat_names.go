package bot

import "github.com/deskbot/deskbot/bot/chat"

// The router speaks chat's vocabulary; these names let its users (and its
// own code) say bot.Reply, bot.Card and so on. Each is the chat type of the
// same name.
type (
	// Caller is chat.Caller: who sent a Command.
	Caller = chat.Caller
	// Command is chat.Command: what Dispatch runs.
	Command = chat.Command
	// Reply is chat.Reply: what Dispatch answers.
	Reply = chat.Reply
	// TicketForm is chat.TicketForm: the new-ticket form.
	TicketForm = chat.TicketForm
	// TicketFormValues is chat.TicketFormValues: a submitted TicketForm.
	TicketFormValues = chat.TicketFormValues
	// Directory is chat.Directory: chat user ids to e-mails.
	Directory = chat.Directory
	// Mentioner is chat.Mentioner: a Directory that renders mentions.
	Mentioner = chat.Mentioner
	// Card is chat.Card: a transport-neutral rich answer.
	Card = chat.Card
	// Field is chat.Field: one label/value pair of a Card.
	Field = chat.Field
	// Button is chat.Button: one button of a Card.
	Button = chat.Button
	// AlertMessage is chat.AlertMessage: one alert of a rule.
	AlertMessage = chat.AlertMessage
	// AlertGroupMessage is chat.AlertGroupMessage: a rule's alerts posted
	// as one message.
	AlertGroupMessage = chat.AlertGroupMessage
	// Notifier is chat.Notifier: what posts alerts.
	Notifier = chat.Notifier
)

// DMMessage is chat.DMMessage: a rule's direct message to a person.
type DMMessage = chat.DMMessage

// DMNotifier is chat.DMNotifier: a transport that sends DMMessages.
type DMNotifier = chat.DMNotifier

// DigestMessage is chat.DigestMessage: a digest rule's summary.
type DigestMessage = chat.DigestMessage

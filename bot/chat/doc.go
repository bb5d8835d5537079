// Package chat is the vocabulary the router and its transports share:
// who asks (Caller), what they ask (Command), the answer (Reply) with its
// Card and Buttons, the alerts the rules post (AlertMessage,
// AlertGroupMessage, Notifier) and the buttons of a page card. Package bot
// re-exports the router's entry-point types (Caller, Command, Reply,
// Card) as aliases: bot.Reply is chat.Reply.
//
// What it owns: these types and the small pure functions over them that
// every transport needs (button values, page buttons, the limits of a
// command's text).
//
// What it may import: sdclient and oncall (for the types a Reply
// carries); never bot or a transport, so that every transport can import
// it without importing the router.
package chat

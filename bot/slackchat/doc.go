// Package slackchat is the Slack transport: socket mode in, the Web API
// and response_url out. It acks every envelope at once, drops
// redeliveries (the same envelope id, or for an event the same event_id,
// which Slack's retries keep), logs at debug level what it ignores,
// admits the commands that call the desk (bot.Router.Admit),
// runs each through the router's Dispatch and renders the Reply as Block
// Kit; it posts alert cards, grouped alerts and on-call page cards and
// direct messages, and keeps them up to date. It also turns a message
// into a ticket (the Create ticket shortcut, the ticket reaction) and
// unfurls desk ticket links (fromchat.go, over the router's FromChat).
//
// What it owns: everything Slack-specific: the socket-mode loop and its
// reconnects, envelope de-duplication (EnvelopeStore), Block Kit rendering
// within Slack's limits (blocks.go, pagecard.go, modal.go, home.go: the
// App Home tab and its buttons), mentions and
// user groups, the bounded and retried HTTP client of its Web API calls
// (slackhttp.go).
//
// What it may import: bot/chat, bot/internal/flight, oncall, sdclient and
// slack-go; never bot. It declares the Router interface it needs, which
// *bot.Router implements. Its tests (package slackchat_test) run the real
// slack-go client against bot/slackfake and a real router; export_test.go
// names the internals they look at.
package slackchat

// Package slackfake is a protocol-faithful fake Slack for end-to-end tests:
// the Web API subset deskbot uses plus the socket-mode websocket, served
// over HTTP so that the real github.com/slack-go/slack client (and its
// socketmode package) connects to it unchanged.
//
// It is built like net/http/httptest: New returns a running server, the
// client is pointed at APIURL with slack.OptionAPIURL, tests push slash
// commands, interactions and events (reactions, message shortcuts, shared
// links: fromchat.go) through the websocket and assert on what the bot did
// through the recorders (Messages, Views, Responses, Calls, Acks, Unfurls).
//
// What it owns: the fake's side of the Slack protocols deskbot speaks
// (Web API methods, socket-mode envelopes and acks, response_url posts,
// views, rate limits and Block Kit limits as Slack enforces them), and the
// recorders and fault injection (RateLimitNext, failures) that tests use.
//
// What it may import: the standard library, the websocket library and
// clockwork; never deskbot's own packages, so that any of them can test
// against it.
//
// The pattern to copy: a protocol-faithful fake. It answers as Slack does,
// byte for byte where the client cares (error codes, limits, ordering,
// redelivery of unacked envelopes), so that a test through the real
// client proves the bot against Slack, not against the test's own
// assumptions; a behaviour of Slack that deskbot relies on is added here
// with a test of the fake itself. Tests wait on its state with the Wait*
// methods (they block on its change notifications), never with sleeps.
package slackfake

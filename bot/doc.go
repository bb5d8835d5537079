// Package bot is deskbot's chat command layer, free of any transport: the
// Router parses a command, resolves and authorises the caller, calls the
// service desk and renders the answer. It has one entry point,
// Router.Dispatch(ctx, Caller, Command) -> Reply; a typed command, a button
// pressed on a card and a submitted new-ticket form are all Commands. The
// transports (bot/slackchat for Slack, bot/console for a terminal) turn what
// people do into Commands and render the Replies.
//
// What it owns: the command table and its parsing (help and usage come
// from it), authorisation and access scopes (access.go), the answers to
// desk failures (deskerrors.go), the desk budget of people's commands and
// their admission (budget.go, gate.go), the ticket mirror reads
// (mirror.go), the App Home model (Router.Home, home.go), the on-call
// commands and page buttons (oncall.go; who may press them: oncall_gate.go), tickets
// made from chat messages, one per message over the MessageLedger port
// (fromchat.go: Router.TicketFromMessage), the cards of unfurled ticket
// links (unfurl.go: Router.Unfurl), and the Desk port with its adapter
// over sdclient (desk.go, deskadapter.go).
//
// What it may import: sdclient (and sdclient/filter), store (the mirror's
// types), oncall, and its own sub-packages bot/chat and bot/internal/...;
// never scheduler or cmd. The transports import bot's vocabulary
// (bot/chat), never the other way round (the files *_shim.go are the
// exception until the issue 12 merge: see NOTES-h3.md).
//
// Desk errors are sdclient's own: the bot tests them with errors.Is and
// errors.As on sdclient's sentinels and typed errors (*sdclient.APIError,
// *sdclient.RateLimitError); it has no sentinels of its own.
//
// The pattern to copy is the shape of the command table (commands.go): one
// row per command with its name, arguments, summary, the verb its error
// answers use, whether only agents may run it, how its access check reads
// the ticket (brief, mirrored), and its handler (*Router).cmdX. The table
// is built per router (commandTable), checked once (checkTable), and help,
// usage lines and parsing all come from it. To add a command, add a row
// and its handler; nothing else changes. The handlers of the ticket
// commands sit beside the table; the searches and lists in search.go,
// /assign list in agents.go, status and priority words in fields.go.
package bot

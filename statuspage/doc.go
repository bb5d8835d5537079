// Package statuspage serves deskbot's read-only status pages beside
// /healthz, /readyz and /metrics: the overview (/), the rules (/rules,
// /rules/NAME), the firings (/firings), on-call (/oncall), the plan
// (/plan) and the last backtest (/backtest: the report `deskbot rules
// backtest` kept in the state store, drawn by the template of its
// --format html, backtest.go). Pages are rendered on the server with html/template from
// embedded templates, usable without JavaScript; charts are inline SVG
// drawn here.
//
// # What it owns
//
//   - Who may look (access.go): the pages carry ticket subjects and
//     requesters, so on a loopback listen address they are open and on any
//     other only with the token (DESKBOT_UI_TOKEN) as a bearer header or
//     the Basic password, compared in constant time; without a token they
//     are off and say how to turn them on.
//   - The pages' data (pages.go) and drawing (chart.go, templates/), and
//     the desk's requests a minute (people's share from the request
//     metric's class label), sampled from the metrics by Run
//     (requests.go): the only goroutine, a component cmd/deskbot runs.
//     Run also names the on-call people once a minute (names.go), so that
//     /oncall shows names without a request of its own.
//   - The chat commands answered in the last hour and their p99
//     (commands.go: a window the chat's router reports to).
//   - A rule's tickets that match now (matching.go): the rule evaluated
//     over the live mirror (Mirror, the scheduler's LiveMirror) when its
//     page is asked, in memory.
//
// # What it may import
//
// The floors below the bot: sdclient, store, rules, feed, plan, firing,
// oncall, scheduler
// (read-only: Scheduler.Memory, from which view.go builds the pages'
// view and /plan's outlook; the store's
// RecentFirings, OpenPages, Leader and LastBacktest), backtest (its
// Report, and its sentences for the HTML report), planreport (/plan is the report of
// `deskbot rules plan`, written by the same code). A page never asks the desk: it renders from the
// scheduler's memory and the store. cmd/deskbot mounts the handler on the
// ops server.
//
// # Patterns to copy
//
//   - Everything from ticket data goes through html/template's escaping;
//     the only template.HTML is the SVG charts, built from numbers and
//     escaped labels.
//   - The pages change nothing: no forms that act, so nothing to forge.
package statuspage

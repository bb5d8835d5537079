// Command deskbot puts an IT service desk into team chat and automates it.
//
// main only hands the process's environment to run; everything else is
// wired in run and the cmd* functions, so tests drive the whole program.
//
// # What it owns
//
// Only wiring and the command line: the environment contract (config.go,
// DESIGN.md section 3), the subcommands (run, rules check|test|why|plan,
// sim, version), and, for run, the wiring of parts built elsewhere. serve
// (cmd_run.go) calls named constructors (wire.go), each of which decides
// what to build from the configuration: the desk client (connectDesk), the
// live rules (loadLiveRules), the escalator, router, chat transport and
// scheduler (newChatAndScheduler, the one place where their mutual needs
// are closed), the /readyz checks (readyChecks). The running parts are
// components (components.go): each has Run(ctx) error, and runComponents
// starts them together and stops them together. Besides, cmd/deskbot
// serves /healthz /readyz /metrics (ops.go) and adapts the chat transport
// and the store to what the scheduler, the escalator and the router need
// (chat.go).
//
// Policy belongs to the packages: the store reads DESKBOT_STATE and hands
// out the scheduler's leadership; the scheduler plans its polls; the rules
// package loads and checks the rules file.
//
// # What it may import
//
// Everything of deskbot: it is the top floor (sdclient/filter, sdclient,
// store, rules, oncall, scheduler, bot, cmd), and nothing imports it.
// Tests may use internal/pgtest.
package main

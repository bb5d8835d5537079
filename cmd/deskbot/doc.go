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
// (cmd_run.go) calls named constructors, each of which decides what to
// build from the configuration:
//
//   - desk.go: the desk client (connectDesk), the embedded simulator when
//     DESKBOT_DESK_URL is unset, the start-up check of the API key;
//     shared.go: the desk reads the parts share (the ticket form's fields,
//     the key's agent), read once at start-up;
//     deskreach.go: a desk that does not answer at start-up (deskbot starts,
//     retries with backoff, and starts the scheduler when it answers);
//   - reload.go: the live rules (loadLiveRules) and their SIGHUP reload;
//   - wire.go: the escalator, router, chat transport and scheduler
//     (newChatAndScheduler, the one place where their mutual needs are
//     closed; newTransport, the one place that names the transports) and
//     the /readyz checks (readyChecks);
//   - components.go: the running parts, each a component with
//     Run(ctx) error, started together and stopped together by
//     runComponents;
//   - ops.go: /healthz /readyz /metrics;
//   - chat.go: adapters of the chat transport and the store to what the
//     scheduler, the escalator and the router need.
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

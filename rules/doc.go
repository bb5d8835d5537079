// Package rules loads the rules file (automation as code: YAML rules with a
// filter query, an expr condition and actions; see rules.example.yaml) and
// evaluates it over tickets into decisions.
//
// Loading is strict: unknown keys at any level, wrong types, bad durations,
// cron specs, once: settings, channel aliases, queries and expressions are
// all reported together, each as FILE:LINE:COL: rule "NAME": message.
// Anchors, aliases and YAML merge keys (<<: *defaults) share parts of a
// file; top-level keys starting with x- hold anchors and are otherwise
// ignored. A problem with a merged value is reported where the value is
// written, naming the rule that merged it.
//
// Expressions (if: and the {{ }} of texts) are compiled once at load
// against Env: ticket (TicketEnv, the API's field names), now() (the
// evaluation's clock), duration(), is_open(status), has_due(ticket),
// has_tag(ticket, tag) (in any case, like the query's tag:), until(t)
// (how long until t from now(), in words) and the
// named codes Low, Medium, High, Urgent, Open, Pending, Resolved, Closed.
// Constant duration("15m") calls are folded at load.
//
// The cost of every expression is bounded at load (see MaxSteps and
// checkCost): nested loops multiply, ranges need constant bounds, and a
// list from ticket data counts as ListBound items. At run time the loops
// of each expression count their steps and stop past MaxSteps, and expr's
// memory budget stops allocations: either yields a decision whose Err is
// ErrBudget.
//
// The values of {{ }} are written into a text as where it goes needs:
// HTML-escaped in notes and replies (HTML on the desk; the author's own
// markup is kept), as they are in alert and page texts (the bot escapes
// chat text), and without <, > and ! in mentions, where a value cannot
// make @here, @channel or @everyone either.
//
// Evaluation is pure (no I/O) and safe for concurrent use: a query is
// checked locally first (status:open holds for every status but Resolved
// and Closed), then the if, then the actions are rendered.
//
// # What it owns
//
// The rules file's contract (DESIGN.md, "Rules file"): loading and
// checking it (Load, LoadFile; the loader is split by what it loads:
// load.go the file and its top level, loadrule.go a rule, loadaction.go
// its actions, loadset.go set: and assign:, merge.go merge keys,
// yamlhint.go syntax errors explained), compiling its expressions and
// templates (compile.go, template.go, env.go), bounding their cost
// (cost.go the bound and the value model, costcheck.go the walk of an
// expression, costbuiltin.go expr's builtins), evaluating rules over tickets into Decisions (eval.go), and
// explaining and planning them (explain.go, plan.go, qplan.go) for
// "deskbot rules why", "rules plan" and "rules test", and saying until
// when a rule's answer on a ticket stands as time passes (verdict.go:
// Verdicts, for the backtest's replay). The oncall: section
// of the file is read by package oncall (oncall.ParseConfig), whose
// problems the loader reports with its own.
//
// # What it may import
//
// sdclient/filter (queries), sdclient (ticket types), oncall (the
// oncall: section) and internal/yamlpos (strict YAML with positions);
// never store, scheduler, bot or cmd, which use it.
//
// # Patterns to copy
//
// Pure rule evaluation: Set.Evaluate takes the tickets and the clock and
// returns Decisions; it does no I/O, holds no lock a caller can see, and
// is safe for concurrent use. Whatever acts on a decision (the
// scheduler's executor, the CLI's dry run) lives elsewhere, so the rules
// are tested with tickets and a time, nothing else.
//
// The expression cost bound: a language that runs user code on every
// ticket bounds it twice, at load (checkCost: an upper bound of steps,
// loops multiplying, refused with a message naming the loop) and at run
// time (a step counter and expr's memory budget, yielding ErrBudget), so
// that neither a typo nor a hostile file can stall a cycle.
package rules

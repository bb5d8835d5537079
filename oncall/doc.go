// Package oncall is deskbot's ticket-native on-call: rotations (who is on
// call now and next), escalation policies, and pages that climb those
// policies until a person acknowledges them. An urgent ticket must reach a
// person, not a channel nobody reads.
//
// # The oncall: section of the rules file
//
//	oncall:
//	  schedules:
//	    - name: it-primary                # unique, [a-z0-9-]
//	      time_zone: Europe/Zurich        # IANA zone; handoffs follow its wall clock
//	      rotation: 1w                    # one shift: <n>h, <n>d, <n>w or a sum such as 1d12h; > 0
//	      handoff: "09:00"                # local time of day of the handoff (default 00:00)
//	      start: 2026-01-05               # the first member's shift starts at start+handoff, local time
//	      members: [alice@example.com, bob@example.com, U0123ABC]   # e-mail or Slack user id, in turn
//	      overrides:                      # optional; local times in the schedule's zone, [from, to)
//	        - {member: carol@example.com, from: "2026-03-28T18:00", to: "2026-03-30T09:00"}
//	  policies:
//	    - name: it-urgent                 # unique, [a-z0-9-]
//	      repeat: 1                       # further passes through the levels after the last (default 0)
//	      levels:                         # paged in order; each names exactly one of schedule, user, group
//	        - {schedule: it-primary, after: 10m}   # after: wait this long for an ack before the next level
//	        - {user: boss@example.com, after: 15m}
//	        - {group: S0GROUP, after: 15m}         # a Slack user group id (or @handle)
//
// Rotation arithmetic is done on the schedule's wall clock: a daily or
// weekly shift always hands off at the handoff time of day, so a week that
// contains the spring-forward change lasts 167 hours and one that contains
// the autumn change 169. Shift k (k may be negative: the rotation runs
// before start as well, so a schedule always has someone on call) starts at
// start+handoff + k*rotation and belongs to the next member in turn.
// A handoff falling into a skipped hour (spring-forward) happens at the
// first instant after the gap; one falling into a repeated hour (fall-back)
// happens at its first occurrence. When the gap swallows a whole shift (an
// hourly rotation: 02:00 to 03:00 does not exist that night), nobody is
// skipped and nobody gets an empty shift: the member due at 02:00 takes
// over at 03:00 for an hour, the later handoffs stay on the hour, and the
// rota continues in order (so it is one member further along by time of
// day from then on). Overrides replace the rotation for their interval and
// must not overlap one another.
//
// ParseConfig reads the section from a *yaml.Node and reports every problem
// as a PosError (FILE:LINE:COL: oncall schedule "NAME": message), which the
// rules loader merges into its own list.
//
// # Pages and escalation
//
// A Page is the durable escalation of one ticket under one policy, keyed by
// rule, ticket and episode (PageKey), so a rule that fires again in the
// same episode never starts a second escalation. Page is a pure state
// machine driven by the times passed in: Advance takes the next step (the
// next level, a new round, or exhaustion), Ack and Resolve stop it,
// EscalateNow makes the next level due at once. A step the chat refuses
// is retried (MaxAttempts in all) before the next level is paged; a target
// the chat cannot reach at all (ErrUnreachable: an e-mail no Slack user
// has) is not retried: the next level is paged at once and the page's
// history, shown on the card, says why.
//
// When every level of every round was paged and nobody acknowledged, the
// page is exhausted: paging stops, a private note on the ticket says so in
// plain words (and how to acknowledge it late with /oncall ack N), the
// chat is told through the Pager's optional StopNotifier so the card says
// "nobody acknowledged", deskbot_oncall_exhausted_total counts it and a
// warning is logged. A late acknowledgement is still recorded.
//
// The Escalator drives pages stored in a PageStore (store.Store implements
// it on SQLite and PostgreSQL; MemStore is the in-process one). Every change
// is an atomic compare-and-swap on the page's version, so of several
// replicas ticking at once exactly one claims each step: a page is sent
// once, and a claim left behind by a crashed process is taken over when its
// lease runs out. A crash between the chat's answer and the store's write
// would send that step again; the taken-over step reaches the Pager with
// PageRequest.Retry set, and the Slack Pager then looks for the step's
// marked card and direct message in Slack's history instead of sending
// them twice. The chat side implements Pager (DM the person, post the
// card); the desk side implements Desk (the private note recording who
// acknowledged and when).
//
// # Who may act on a page
//
// The chat lets desk agents and the people of a page's policy acknowledge
// it or escalate it now (Policy.Involves: members and overrides of the
// schedules its levels name, and its user: levels, matched by e-mail or
// Slack user id; Policy.InvolvesWithGroups adds the members of its group:
// levels, read from Slack through GroupMembers), and refuses everyone
// else, so that a stranger in the workspace cannot silently stop an
// escalation. Rota members need not be
// agents; Take it assigns the ticket and so needs an agent.
//
// # What it owns
//
// The oncall: section of the rules file (config.go: Config, Schedule,
// Policy; parse.go: ParseConfig, parse_schedule.go), who may act on a
// page (involves.go), rotation arithmetic (schedule.go), the page state
// machine (page.go), the Escalator that drives pages (escalator.go; its
// ports Pager and Desk in ports.go, people's acks and escalations in
// acks.go, the ticket notes in notes.go) and its metrics, the in-memory PageStore (store.go), and ClientDesk
// (deskclient.go), the escalator's Desk over *sdclient.Client, kept here
// with its consumer. The chat side (Pager) is implemented by bot; the
// durable PageStore by store.
//
// # What it may import
//
// sdclient (ClientDesk) and internal/yamlpos (strict YAML with
// positions), besides the standard library and Prometheus; never rules,
// store, scheduler, bot or cmd, which use it.
//
// # Patterns to copy
//
// A durable process as a pure state machine (Page: every method takes
// the time, nothing reads a clock or does I/O) driven by one loop that
// stores each change as a compare-and-swap on a version (Escalator), so
// that replicas agree without locks and a crash loses no step.
package oncall

package rules

import (
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// OnceMode says how often a rule may act on one ticket.
type OnceMode int

const (
	// OnceEpisode fires when a ticket starts matching and re-arms only after a
	// complete poll in which it no longer matched (the default).
	OnceEpisode OnceMode = iota
	// OnceTicket fires at most once for the life of the ticket.
	OnceTicket
	// OnceEvery repeats while the ticket matches, at most once per Period.
	OnceEvery
)

// Once is a rule's `once:` setting.
type Once struct {
	Mode   OnceMode      // episode, ticket or every
	Period time.Duration // OnceEvery only
}

// ActionKind names an action of a rule.
type ActionKind string

// The action kinds of the rules file.
const (
	ActionNote   ActionKind = "note"   // private note
	ActionReply  ActionKind = "reply"  // public reply; e-mails the requester
	ActionUpdate ActionKind = "update" // every set: and assign: of a rule merged into one PUT
	ActionAlert  ActionKind = "alert"  // chat alert
	ActionPage   ActionKind = "page"   // on-call page: escalates until someone acknowledges
)

// Action is one rendered action of a decision: templates already expanded,
// channel aliases already resolved.
type Action struct {
	Kind ActionKind // what the action does

	// Text is the rendered body of a note, reply or alert.
	Text string

	// Channel and Mention are set for alerts. Channel is the resolved channel
	// (an alias of the rules file replaced by its value); pages set Channel
	// too (where the page card goes) and Text (what the page says).
	Channel string
	Mention string // who the alert mentions; may be empty

	// Policy is the escalation policy of a page (ActionPage), a name the
	// rules file's oncall: section defines.
	Policy string

	// Update is set for ActionUpdate. AssignEmail, when not empty, names the
	// agent to assign by e-mail; the executor resolves it to responder_id.
	Update      *sdclient.TicketUpdate
	AssignEmail string // see Update

	// To is who a dm (ActionDM) goes to: DMAssignee, DMRequester, an
	// e-mail or a chat user id. Channel is then where it goes instead
	// when the person cannot be reached there, and Text what it says.
	To string
}

// Decision is what evaluation produced for one (rule, ticket): the actions to
// take, or the run-time error that stopped the rule on this ticket.
type Decision struct {
	Rule     string           // the rule's name
	Once     Once             // the rule's once:
	TicketID int64            // the ticket
	Ticket   *sdclient.Ticket // the ticket as evaluated; nil for a firing under way not yet re-read
	Actions  []Action         // the rendered actions, in the rule's order
	Err      error            // why the rule stopped on the ticket; nil when it decided
}

// FiringKey names one (rule, ticket) pair in the ledger.
type FiringKey struct {
	Rule     string // the rule's name
	TicketID int64  // the ticket's id
}

// Firing is the result of a claim. Won is true when this caller may act;
// Resumed is true when it took over a claim another worker left pending
// (crashed or timed out) and must check, for each action not in Done,
// whether it already reached the desk before performing it again.
type Firing struct {
	ID      int64     // the ledger's id of the firing
	Key     FiringKey // the (rule, ticket)
	Episode int64     // the episode, 1 for the first
	Seq     int64     // 1 for the first firing of an episode; more with OnceEvery
	Won     bool      // this caller may act
	Resumed bool      // this caller took over a firing left pending
	Done    []int     // indexes of actions already recorded as done
	// Attempts is 1 for a new firing, plus one per take-over.
	Attempts int
	// Started is when the firing was first claimed (for a resumed firing,
	// by the process that crashed): none of its actions reached a target
	// before it.
	Started time.Time
}

package slackchat

import "github.com/slack-go/slack"

// The internals that the external tests (package slackchat_test, which
// import bot for a real router) look at, under exported names. Compiled
// into the tests only.

type (
	AlertView = alertView
	CardLoc   = cardLoc
)

const (
	BlockPageDMPrefix = blockPageDMPrefix
	BlockPagePrefix   = blockPagePrefix
	FormCallbackID    = formCallbackID
	FormDescription   = formDescription
	FormGroup         = formGroup
	FormPriority      = formPriority
	FormSubject       = formSubject
	GroupMaxTickets   = groupMaxTickets
	GroupMembersTTL   = groupMembersTTL
	GroupPrefix       = groupPrefix
	GroupPreview      = groupPreview
	MaxSlackCalls     = maxSlackCalls
)

var (
	AlertBlocks     = alertBlocks
	CardBlocks      = cardBlocks
	Escape          = escape
	Failed          = failed
	GroupBlocks     = groupBlocks
	GroupLine       = groupLine
	GroupToken      = groupToken
	MarkerBlockID   = markerBlockID
	MessageText     = messageText
	OldAlert        = oldAlert
	PageBlocks      = pageBlocks
	Plain           = plain
	RenderPage      = renderPage
	SlackHTTPClient = slackHTTPClient
	TicketModal     = ticketModal
)

// Jobs is how many envelope jobs are not finished.
func (s *Slack) Jobs() int64 { return s.jobs.Load() }

// RememberCard makes the transport remember where the card of page key is.
func (s *Slack) RememberCard(key, channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cards[key] = cardLoc{channel: channel, ts: ts}
}

// ForgetCards makes the transport forget every page card it posted, as a
// new process would.
func (s *Slack) ForgetCards() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cards = map[string]cardLoc{}
}

// Blocks is a grouped alert's message.
func (v groupView) Blocks() []slack.Block { return v.blocks }

// Replies is a grouped alert's thread.
func (v groupView) Replies() [][]slack.Block { return v.replies }

// HomeView is homeView.
var HomeView = homeView

// InAThread is inAThread: which message events live threads look at.
var InAThread = inAThread

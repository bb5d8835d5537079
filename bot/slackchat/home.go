package slackchat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// HomeRouter is implemented by a Router that builds App Homes
// (*bot.Router does); without it the bot does not publish a Home tab.
type HomeRouter interface {
	// Home is what the caller's Home tab shows. A home built within the
	// router's interval comes back unchanged (same BuiltAt, Fresh false).
	Home(ctx context.Context, caller chat.Caller) chat.Home
}

// Block ids of the Home tab.
const (
	blockHomeActions   = "home_actions"
	blockHomeAssigned  = "home_assigned"
	blockHomeRequested = "home_requested"
	blockHomeOnCall    = "home_oncall"
)

// maxHomeBlocks is Slack's limit on the blocks of a view (a message: 50).
const maxHomeBlocks = 100

// homeSubject is how much of a subject a Home line shows, maxHomeLine how
// much of the whole line.
const (
	homeSubject = 120
	maxHomeLine = 400
)

// homeState remembers, per user, the BuiltAt of the home last published,
// so that opening the tab again within the router's interval costs no
// views.publish.
type homeState struct {
	mu        sync.Mutex
	published map[string]time.Time
}

// homeEvent handles an events_api envelope when it is app_home_opened on
// the Home tab: the home is built (through the desk gate, as it may read
// the desk) and published, unless the router answered with the home
// already published. It reports whether it took the envelope.
func (s *Slack) homeEvent(ctx context.Context, evt socketmode.Event) bool {
	hr, ok := s.router.(HomeRouter)
	api, isAPI := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || !isAPI || evt.Request == nil {
		return false
	}
	ev, ok := api.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
	if !ok || ev.Tab != "home" || ev.User == "" {
		return ok
	}
	if s.foreignTeam(api.TeamID) {
		s.log.Warn("ignored app_home_opened from another team", "team", api.TeamID, "user", ev.User)
		return true
	}
	user := ev.User
	s.spawn(ctx, evt.Request, job{
		run: func(ctx context.Context) { s.publishHome(ctx, hr, user, api.TeamID) },
		busy: func(context.Context, string) {
			s.log.Info("home not refreshed: the desk is busy", "user", user)
		},
	})
	return true
}

// publishHome builds the user's home and publishes it (views.publish),
// unless the router answered with the home it built for an earlier open,
// which was published.
func (s *Slack) publishHome(ctx context.Context, hr HomeRouter, user, team string) {
	h := hr.Home(ctx, chat.Caller{UserID: user, TeamID: team, Users: s})
	s.home.mu.Lock()
	if s.home.published == nil {
		s.home.published = map[string]time.Time{}
	}
	same := !h.Fresh && s.home.published[user].Equal(h.BuiltAt)
	s.home.mu.Unlock()
	if same {
		return
	}
	_, err := s.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: homeView(h)})
	if err != nil {
		s.log.Error("publish the Home tab", "user", user, "err", err)
		return
	}
	s.home.mu.Lock()
	s.home.published[user] = h.BuiltAt
	s.home.mu.Unlock()
}

// homeClick handles the quick actions of the Home tab: New ticket opens
// the new-ticket modal, My queue opens a modal with /ticket mine. It
// reports whether the click was one of them.
func (s *Slack) homeClick(ctx context.Context, cb slack.InteractionCallback) bool {
	if len(cb.ActionCallback.BlockActions) == 0 || !chat.IsHomeAction(cb.ActionCallback.BlockActions[0].ActionID) {
		return false
	}
	if s.foreignTeam(cb.Team.ID) {
		s.answer(ctx, "", cb.User.ID, cb.User.ID, failed(foreignTeamText), false)
		return true
	}
	caller := chat.Caller{UserID: cb.User.ID, TeamID: cb.Team.ID, ChannelID: cb.User.ID, Users: s}
	if cb.ActionCallback.BlockActions[0].ActionID == chat.ActionHomeNewTicket {
		resp := s.router.Dispatch(ctx, caller, chat.Command{Slash: "/ticket", Text: "new"})
		if resp.Form == nil {
			s.answer(ctx, "", cb.User.ID, cb.User.ID, resp, false)
			return true
		}
		if _, err := s.api.OpenViewContext(ctx, cb.TriggerID, ticketModal(resp.Form, "")); err != nil {
			s.log.Warn("open the new-ticket form from the Home tab", "err", err)
			s.answer(ctx, "", cb.User.ID, cb.User.ID, failed("could not open the new-ticket form ("+err.Error()+"); try /ticket new <subject>"), false)
		}
		return true
	}
	resp := s.router.Dispatch(ctx, caller, chat.Command{Slash: "/ticket", Text: "mine"})
	if _, err := s.api.OpenViewContext(ctx, cb.TriggerID, queueModal(resp)); err != nil {
		s.log.Warn("open my queue from the Home tab", "err", err)
		s.answer(ctx, "", cb.User.ID, cb.User.ID, resp, false)
	}
	return true
}

// queueModal shows the answer to /ticket mine in a modal (no buttons: a
// modal is read here, the cards' buttons live in messages).
func queueModal(resp chat.Reply) slack.ModalViewRequest {
	var blocks []slack.Block
	if resp.Card != nil {
		card := *resp.Card
		card.Buttons = nil
		blocks = cardBlocks(&card)
	} else {
		blocks = []slack.Block{slack.NewSectionBlock(mrkdwn(fitMarkup(messageText(resp), maxSectionText)), nil, nil)}
	}
	return slack.ModalViewRequest{Type: slack.VTModal, Title: plain("My queue"), Close: plain("Close"), Blocks: slack.Blocks{BlockSet: blocks}}
}

// homeView renders a home as the Home tab's view, within Slack's limits
// (100 blocks, 3,000 characters a section) however long its lists.
func homeView(h chat.Home) slack.HomeTabViewRequest {
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Your service desk"))}
	var buttons []slack.BlockElement
	for _, b := range h.Actions {
		btn := slack.NewButtonBlockElement(b.ActionID, b.Value, plain(b.Label))
		if b.Style != "" {
			btn.Style = slack.Style(b.Style)
		}
		buttons = append(buttons, btn)
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock(blockHomeActions, buttons...))
	}
	if h.NoAccount != "" {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(escapeFit(h.NoAccount, maxSectionText)), nil, nil))
	} else {
		if h.Agent {
			blocks = append(blocks, homeListBlocks(blockHomeAssigned, "Assigned to you", h.Assigned)...)
		}
		blocks = append(blocks, homeListBlocks(blockHomeRequested, "Your requests", h.Requested)...)
	}
	if h.OnCall != "" {
		text := escapeFit(h.OnCall, maxSectionText-20)
		if h.OnCallMarkup != "" {
			text = fitMarkup(h.OnCallMarkup, maxSectionText-20)
		}
		blocks = append(blocks, slack.NewDividerBlock(),
			slack.NewSectionBlock(mrkdwn("*On call now*\n"+text), nil, nil, slack.SectionBlockOptionBlockID(blockHomeOnCall)))
	}
	if !h.BuiltAt.IsZero() {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn("Updated "+h.BuiltAt.UTC().Format("15:04:05 UTC")+" · refreshed when you open this tab")))
	}
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks[:min(len(blocks), maxHomeBlocks)]}}
}

// homeListBlocks renders one list: a divider, one section of lines (as
// many as fit in a section, the rest counted: "and 12 more") and a context
// line saying where it was read.
func homeListBlocks(id, title string, l chat.HomeList) []slack.Block {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* (%d)", title, l.Total)
	switch {
	case l.Error != "":
		b.WriteString("\n" + escapeFit(l.Error, 1000))
	case l.Total == 0:
		b.WriteString("\nNothing open.")
	}
	shown := 0
	for _, t := range l.Tickets {
		line := "\n• " + fitMarkup(homeLine(t), maxHomeLine)
		// Room is kept for the "and N more" line.
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(line) > maxSectionText-40 {
			break
		}
		b.WriteString(line)
		shown++
	}
	if more := l.Total - shown; more > 0 && l.Error == "" {
		fmt.Fprintf(&b, "\n… and %d more", more)
	}
	out := []slack.Block{slack.NewDividerBlock(), slack.NewSectionBlock(mrkdwn(b.String()), nil, nil, slack.SectionBlockOptionBlockID(id))}
	if l.Source != "" {
		out = append(out, slack.NewContextBlock("", mrkdwn(escapeFit(l.Source, maxSectionText))))
	}
	return out
}

// homeLine is one ticket of a Home list in mrkdwn, its number linked when
// the desk's URL is known.
func homeLine(t chat.HomeTicket) string {
	num := fmt.Sprintf("#%d", t.ID)
	if t.URL != "" && !strings.ContainsAny(t.URL, "<>|") {
		num = "<" + t.URL + "|" + num + ">"
	}
	return fmt.Sprintf("%s %s — %s · %s", num, escapeFit(t.Subject, homeSubject), escape(t.Status), escape(t.Priority))
}

package slackchat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/oncall"
)

var _ oncall.Pager = (*Slack)(nil)

// cardLoc is where a page card was posted.
type cardLoc struct{ channel, ts string }

// Page implements oncall.Pager: the page card in the on-call channel is
// posted (first step) or updated in place (later steps, found by its
// marker block when another replica posted it) mentioning whom it pages,
// and that person gets a direct message. A group is mentioned on the card
// (Slack notifies its members). An error makes the escalator retry the
// step and then move on to the next level.
func (s *Slack) Page(ctx context.Context, r oncall.PageRequest) error {
	if r.Channel == "" {
		return fmt.Errorf("page %s: no on-call channel", r.Page.Key)
	}
	var dmErr error
	var userID string
	if r.Target.Kind == oncall.TargetPerson {
		userID, dmErr = s.slackUser(ctx, r.Target.ID)
	}
	if err := s.drawPage(ctx, r.Page, r.Channel); err != nil {
		return err
	}
	if errors.Is(dmErr, oncall.ErrUnreachable) {
		return dmErr // says who and why; the escalator pages the next level
	}
	if dmErr != nil {
		return fmt.Errorf("page %s: direct message to %s: %w", r.Page.Key, r.Target.ID, dmErr)
	}
	if userID == "" {
		return nil
	}
	text := fmt.Sprintf(":rotating_light: You are on call: %s\nTicket #%d · level %d of %s. Acknowledge on the card in %s or with /oncall ack %d.",
		escape(r.Text), r.TicketID, r.Level+1, escape(r.Page.Policy), s.channelRef(ctx, r.Channel), r.TicketID)
	if link := s.router.TicketLink(r.TicketID); link != "" {
		text += "\n" + link
	}
	marker := pageDMMarkerID(r.Page.Key, r.Step)
	if r.Retry {
		// The step was claimed before and never confirmed: the process
		// that claimed it may have died after Slack took the message.
		// Find it in the DM's recent history rather than send it twice.
		sent, err := s.findPageDM(ctx, userID, marker)
		if err != nil {
			// Twice is better than never: send it.
			s.log.Warn("cannot look for a page's earlier direct message; sending it", "page", r.Page.Key, "step", r.Step, "err", err)
		} else if sent {
			s.log.Info("page's direct message already sent; not sending it again", "page", r.Page.Key, "step", r.Step, "target", r.Target.ID)
			return nil
		}
	}
	dm := slack.NewSectionBlock(mrkdwn(fitMarkup(text, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(marker))
	if _, _, err := s.api.PostMessageContext(ctx, userID, slack.MsgOptionText(fitMarkup(text, maxMessageText), false), slack.MsgOptionBlocks(dm)); err != nil {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "channel_not_found" || se.Err == "user_not_found") {
			// No such user in the workspace (a wrong or deactivated id):
			// no retry will reach them.
			return fmt.Errorf("%s is not a user of this Slack workspace (postMessage: %s): %w", r.Target.ID, se.Err, oncall.ErrUnreachable)
		}
		return fmt.Errorf("page %s: direct message to %s: %w", r.Page.Key, r.Target.ID, err)
	}
	return nil
}

// blockPageDMPrefix starts the block id that marks the direct message of
// one step of a page, so that a step taken over after a crash finds the
// message the dead process sent.
const blockPageDMPrefix = "deskbot_pagedm:"

// dmHistoryLimit is how many of the latest messages of the bot's DM with a
// person are searched for a step's message: one conversations.history
// call. A step is taken over minutes after it was claimed, so its message
// is among the latest the bot sent that person.
const dmHistoryLimit = 50

// pageDMMarkerID is the block id of the direct message of step step of
// page key. Step numbers grow along a page (levels, then rounds), so the
// next level or round paging the same person is another message.
func pageDMMarkerID(key string, step int) string {
	return markerID(fmt.Sprintf("%s%d:", blockPageDMPrefix, step), key)
}

// findPageDM reports whether the bot's DM with user holds a message marked
// marker among its latest messages: conversations.open (the IM channel's
// id) and one conversations.history call (scope im:history).
func (s *Slack) findPageDM(ctx context.Context, userID, marker string) (bool, error) {
	msgs, err := s.dmHistory(ctx, userID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(msgs, func(m slack.Message) bool { return dmHolds(m.Blocks.BlockSet, marker) }), nil
}

// dmHolds reports whether the blocks of a direct message hold the step
// marked marker: its own message, or a grouped one naming it.
func dmHolds(blocks []slack.Block, marker string) bool {
	tok := groupToken(marker)
	return slices.ContainsFunc(blocks, func(b slack.Block) bool { return b.ID() == marker || groupHolds(b.ID(), tok) })
}

// dmHistory reads the latest messages of the bot's DM with user, for
// findPageDM to look for one step and PageGroup for several at once.
func (s *Slack) dmHistory(ctx context.Context, userID string) ([]slack.Message, error) {
	ch, _, _, err := s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{userID}})
	if err != nil {
		return nil, fmt.Errorf("conversations.open %s: %w", userID, err)
	}
	h, err := s.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: ch.ID, Limit: dmHistoryLimit})
	if err != nil {
		return nil, fmt.Errorf("conversations.history %s: %w", ch.ID, err)
	}
	return h.Messages, nil
}

// channelRef is a clickable reference to a channel when its id is known.
func (s *Slack) channelRef(ctx context.Context, ch string) string {
	id := s.channelID(ctx, ch)
	if id != "" && !strings.HasPrefix(id, "#") {
		return "<#" + id + ">"
	}
	return escape(ch)
}

// noSlackUserTTL is how long an e-mail no Slack user has is remembered as
// such: a card names its targets several times, and a person who joins
// Slack is found again within it.
const noSlackUserTTL = 5 * time.Minute

// slackUser resolves a member of a schedule (a Slack id or an e-mail) to a
// Slack user id; lookups by e-mail are cached for an hour. An e-mail no
// Slack user has is an error wrapping oncall.ErrUnreachable, remembered
// for noSlackUserTTL.
func (s *Slack) slackUser(ctx context.Context, id string) (string, error) {
	if slackUserID.MatchString(id) {
		return id, nil
	}
	key := strings.ToLower(id)
	now := s.now()
	s.mu.Lock()
	c, ok := s.userIDs[key]
	s.mu.Unlock()
	switch {
	case ok && c.ok && now.Sub(c.at) < s.emailTTL:
		return c.v, nil
	case ok && !c.ok && now.Sub(c.at) < noSlackUserTTL:
		return "", noSlackUser(id)
	}
	return s.lookups.Do("email:"+key, func() (string, error) {
		u, err := s.api.GetUserByEmailContext(ctx, id)
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && se.Err == "users_not_found" {
			s.mu.Lock()
			s.userIDs[key] = cached[string]{at: now}
			s.mu.Unlock()
			return "", noSlackUser(id)
		}
		if err != nil {
			return "", fmt.Errorf("users.lookupByEmail %s: %w", id, err)
		}
		s.mu.Lock()
		s.userIDs[key] = cached[string]{v: u.ID, at: now, ok: true}
		s.mu.Unlock()
		return u.ID, nil
	})
}

// noSlackUser is the error of a page target whose e-mail no Slack user
// has (users.lookupByEmail: users_not_found).
func noSlackUser(email string) error {
	return fmt.Errorf("%s has no Slack account (no Slack user has this e-mail): %w", email, oncall.ErrUnreachable)
}

var _ oncall.GroupMembers = (*Slack)(nil)

// groupMembersTTL is how long the members of a user group are reused: a
// person just added to an on-call group may act on its pages within it,
// and one just removed may for as long.
const groupMembersTTL = 5 * time.Minute

// GroupMembers implements oncall.GroupMembers: the Slack user ids of the
// members of a user group given by id (S...) or @handle (found through
// usergroups.list), read with usergroups.users.list (scope
// usergroups:read) and cached for groupMembersTTL, so that the people a
// group level pages may acknowledge their page.
func (s *Slack) GroupMembers(ctx context.Context, group string) ([]string, error) {
	id := strings.TrimSpace(group)
	if strings.HasPrefix(id, "@") && len(id) > 1 {
		ref, ok := s.groupByHandle(ctx, id[1:])
		if !ok {
			return nil, fmt.Errorf("members of user group %s: no Slack user group has this handle", group)
		}
		id = ref.id
	}
	if !slackGroupID.MatchString(id) {
		return nil, fmt.Errorf("members of user group %q: want a user group id such as S0123ABC or a @handle", group)
	}
	now := s.now()
	s.mu.Lock()
	c, ok := s.members[id]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < groupMembersTTL {
		return slices.Clip(c.v), nil
	}
	ids, err := s.memberLookups.Do(id, func() ([]string, error) {
		ids, err := s.api.GetUserGroupMembersContext(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("usergroups.users.list %s: %w", id, err)
		}
		if len(ids) == 0 {
			ids = nil
		}
		s.mu.Lock()
		s.members[id] = cached[[]string]{v: ids, at: now, ok: true}
		s.mu.Unlock()
		return ids, nil
	})
	if err != nil {
		return nil, fmt.Errorf("members of user group %s: %w", group, err)
	}
	return slices.Clip(ids), nil
}

// mention renders a page target as Slack markup: <@U...> for a person
// found in Slack, <!subteam^S...> for a group given by id or by a @handle
// found in Slack, the plain name otherwise.
func (s *Slack) mention(ctx context.Context, t oncall.Target) string {
	if t.Kind == oncall.TargetGroup {
		return s.groupMention(ctx, t.ID)
	}
	if id, err := s.slackUser(ctx, t.ID); err == nil {
		return "<@" + id + ">"
	}
	return escape(t.ID)
}

// drawPage posts or updates the card of page p in channel.
func (s *Slack) drawPage(ctx context.Context, p oncall.Page, channel string) error {
	return s.drawPageCard(ctx, p, channel, s.pageCard(ctx, p.TicketID))
}

// drawPageCard is drawPage with the ticket's card already read.
func (s *Slack) drawPageCard(ctx context.Context, p oncall.Page, channel string, card *chat.Card) error {
	v := renderPage(p, card, func(t oncall.Target) string { return s.mention(ctx, t) })
	blocks := pageBlocks(v)
	text := escapeFit(pageText(p), maxMessageText)
	loc, found, err := s.findPageCard(ctx, p.Key, channel)
	if err != nil {
		s.log.Warn("cannot look for the page card; posting a new one", "page", p.Key, "err", err)
	}
	if found {
		err := s.draws.ordered(p.Key, p.Version, func() error {
			_, _, _, err := s.api.UpdateMessageContext(ctx, loc.channel, loc.ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
			return err
		})
		if err == nil {
			return nil
		}
		s.log.Warn("update the page card failed; posting a new one", "page", p.Key, "err", err)
	}
	ch, ts, err := s.api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return fmt.Errorf("post the card of page %s to %s: %w", p.Key, channel, err)
	}
	if ch != "" && ch != channel {
		s.rememberChannel(channel, ch)
	}
	s.mu.Lock()
	s.cards[p.Key] = cardLoc{channel: ch, ts: ts}
	s.mu.Unlock()
	return nil
}

// findPageCard finds the card of page key: remembered, or searched in the
// channel's recent history by its marker block (posted by another replica
// or before a restart).
func (s *Slack) findPageCard(ctx context.Context, key, channel string) (cardLoc, bool, error) {
	s.mu.Lock()
	loc, ok := s.cards[key]
	s.mu.Unlock()
	if ok {
		return loc, true, nil
	}
	loc, found, err := s.findMarked(ctx, channel, pageMarkerID(key))
	if found {
		s.mu.Lock()
		s.cards[key] = loc
		s.mu.Unlock()
	}
	return loc, found, err
}

// PageStopped implements oncall.StopNotifier: a page that stopped without
// a click (nobody acknowledged, or the ticket was resolved) gets its card
// redrawn without buttons, saying why, for the people in the channel.
func (s *Slack) PageStopped(ctx context.Context, p oncall.Page) error {
	s.refreshPage(ctx, p)
	return nil
}

var _ oncall.StopNotifier = (*Slack)(nil)

// refreshPage redraws the card of a page a command or another card
// changed (e.g. /oncall ack N).
func (s *Slack) refreshPage(ctx context.Context, p oncall.Page) {
	if p.Channel == "" {
		return
	}
	if _, found, _ := s.findPageCard(ctx, p.Key, p.Channel); !found {
		return // no card to refresh (never posted, or too old)
	}
	if err := s.drawPage(ctx, p, p.Channel); err != nil {
		s.log.Warn("refresh the page card", "page", p.Key, "err", err)
	}
}

// pageClick handles Acknowledge, Take it and Escalate now on a page card
// and redraws the card in place.
func (s *Slack) pageClick(ctx context.Context, cb slack.InteractionCallback, channel string, res chat.Reply) {
	p := *res.Page
	key := p.Key
	ts := cb.Container.MessageTs
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	if ts != "" && channel != "" && !cb.Container.IsEphemeral {
		s.mu.Lock()
		s.cards[key] = cardLoc{channel: channel, ts: ts}
		s.mu.Unlock()
	}
	// res.Page was read after the click's work (Escalate now pages the
	// next level before Dispatch returns), so it is the page as stored now.
	card := res.Card
	if card == nil {
		card = s.pageCard(ctx, p.TicketID)
	}
	v := renderPage(p, card, func(t oncall.Target) string { return s.mention(ctx, t) })
	err := s.draws.ordered(p.Key, p.Version, func() error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(escapeFit(pageText(p), maxMessageText), false), slack.MsgOptionBlocks(pageBlocks(v)...))
		return err
	})
	if err != nil {
		s.log.Error("update page card", "channel", channel, "ts", ts, "err", err)
		s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text + " (the card could not be updated)"}, false)
		return
	}
	if res.Text != "" {
		s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text}, false)
	}
}

// cardDraws orders the redraws of each page card. A click and the
// escalator both redraw a card, each from the page as it read it; without
// order, a click's redraw of an older state could land after the
// escalator's of a newer one and leave the card showing the past (level 2
// paged while level 3 already was). Redraws of one card take turns, and
// one of an older version of the page than the card shows is skipped.
type cardDraws struct {
	mu    sync.Mutex
	cards map[string]*cardDraw
}

type cardDraw struct {
	mu      sync.Mutex // held while the card is redrawn
	version int64      // the page version the card shows
}

// ordered runs draw for version of page key unless the card already shows
// a newer version, one draw of the card at a time.
func (c *cardDraws) ordered(key string, version int64, draw func() error) error {
	c.mu.Lock()
	if c.cards == nil {
		c.cards = map[string]*cardDraw{}
	}
	d := c.cards[key]
	if d == nil {
		d = &cardDraw{}
		c.cards[key] = d
	}
	c.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if version < d.version {
		return nil
	}
	if err := draw(); err != nil {
		return err
	}
	d.version = version
	return nil
}

// pageCard is the ticket card a page card shows (without buttons).
func (s *Slack) pageCard(ctx context.Context, ticketID int64) *chat.Card {
	_, c := s.router.PageTicketCard(ctx, ticketID)
	return c
}

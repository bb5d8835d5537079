package slackchat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
)

const foreignTeamText = "this deskbot serves another Slack workspace; your request was not run"

func (s *Slack) slash(ctx context.Context, cmd slack.SlashCommand) {
	if s.foreignTeam(cmd.TeamID) {
		s.log.Warn("refused a command from another team", "team", cmd.TeamID, "user", cmd.UserID)
		s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, failed(foreignTeamText), false)
		return
	}
	resp := s.router.Dispatch(ctx, chat.Caller{UserID: cmd.UserID, TeamID: cmd.TeamID, ChannelID: cmd.ChannelID, Users: s},
		chat.Command{Slash: cmd.Command, Text: cmd.Text})
	for _, p := range resp.Pages {
		s.refreshPage(ctx, p)
	}
	if resp.Form != nil {
		meta, _ := json.Marshal(formMeta{ResponseURL: cmd.ResponseURL, Channel: cmd.ChannelID})
		_, err := s.api.OpenViewContext(ctx, cmd.TriggerID, ticketModal(resp.Form, string(meta)))
		if err == nil {
			return
		}
		s.log.Warn("open the new-ticket form", "err", err)
		resp = failed("could not open the new-ticket form (" + err.Error() + "); try /ticket new <subject>")
	}
	s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, s.followInDM(ctx, cmd.UserID, resp), false)
}

// answer sends a Reply: through response_url when there is one, else
// chat.postEphemeral (or chat.postMessage when public).
func (s *Slack) answer(ctx context.Context, responseURL, channel, user string, resp chat.Reply, replace bool) {
	text := messageText(resp)
	var blocks []slack.Block
	if resp.Card != nil {
		blocks = cardBlocks(resp.Card)
	}
	if responseURL != "" {
		msg := &slack.WebhookMessage{Text: text, ResponseType: slack.ResponseTypeEphemeral, ReplaceOriginal: replace}
		if resp.Public {
			msg.ResponseType = slack.ResponseTypeInChannel
		}
		if blocks != nil {
			msg.Blocks = &slack.Blocks{BlockSet: blocks}
		}
		err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg)
		if err == nil {
			return
		}
		s.log.Warn("answer through response_url failed; trying chat.postEphemeral", "err", err)
	}
	// A payload without a channel or user (Slack's recorded samples have
	// them empty) has nobody to answer: nothing is posted to "".
	if (resp.Public && channel == "") || (!resp.Public && user == "") {
		s.log.Debug("nowhere to answer: no channel or user in the payload", "channel", channel, "user", user)
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if blocks != nil {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	var err error
	switch {
	case resp.Public:
		_, _, err = s.api.PostMessageContext(ctx, channel, opts...)
	case channel == "":
		_, _, err = s.api.PostMessageContext(ctx, user, opts...)
	default:
		_, err = s.api.PostEphemeralContext(ctx, channel, user, opts...)
		if err != nil {
			// Not in the channel: the DM always works (im:write).
			_, _, err = s.api.PostMessageContext(ctx, user, opts...)
		}
	}
	if err != nil {
		s.log.Error("could not answer", "user", user, "channel", channel, "err", err)
	}
}

// Email implements chat.Directory with users.info, cached for an hour.
func (s *Slack) Email(ctx context.Context, userID string) (string, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.emails[userID]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < s.emailTTL {
		return c.v, nil
	}
	return s.lookups.Do(userID, func() (string, error) {
		u, err := s.api.GetUserInfoContext(ctx, userID)
		if err != nil {
			return "", fmt.Errorf("users.info %s: %w", userID, err)
		}
		email := u.Profile.Email
		if !s.ourPerson(u) {
			// A person of another organisation in a shared channel: their
			// e-mail may match one of ours, but they are nobody here.
			s.log.Debug("a user of another team acts as nobody", "user", userID, "team", u.TeamID)
			email = ""
		}
		s.mu.Lock()
		s.emails[userID] = cached[string]{v: email, at: now, ok: true}
		s.mu.Unlock()
		return email, nil
	})
}

// click handles a button on a ticket card or an alert.
func (s *Slack) click(ctx context.Context, cb slack.InteractionCallback) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	if s.foreignTeam(cb.Team.ID) {
		s.answer(ctx, cb.ResponseURL, channel, cb.User.ID, failed(foreignTeamText), false)
		return
	}
	if s.homeClick(ctx, cb) {
		return
	}
	res := s.router.Dispatch(ctx, chat.Caller{UserID: cb.User.ID, TeamID: cb.Team.ID, ChannelID: channel, Users: s},
		chat.Command{Button: act.ActionID, Value: act.Value})
	if res.Page != nil {
		s.pageClick(ctx, cb, channel, res)
		return
	}
	if res.Failed {
		s.answer(ctx, "", channel, cb.User.ID, failed(res.Text), false)
		return
	}
	for _, p := range res.Pages {
		s.refreshPage(ctx, p)
	}
	headline, activity, isAlert := oldAlert(cb.Message.Blocks.BlockSet)
	ts := cb.Container.MessageTs
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	line := escape(res.Activity) + " · " + s.now().UTC().Format("15:04 UTC")
	if isAlert && !cb.Container.IsEphemeral {
		_, rule, key := chat.SplitButtonValue(act.Value)
		card := *res.Card
		blocks := alertBlocks(alertView{Headline: headline, Rule: rule, Key: key, Card: &card, Activity: append(activity, line)})
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts,
			slack.MsgOptionText(escapeFit(res.Activity, maxMessageText), false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			s.log.Error("update alert card", "channel", channel, "ts", ts, "err", err)
			s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text + " (the card could not be updated)"}, false)
		}
		return
	}
	card := *res.Card
	card.Notes = append(card.Notes, res.Activity)
	if cb.ResponseURL != "" {
		s.answer(ctx, cb.ResponseURL, channel, cb.User.ID, chat.Reply{Text: res.Text, Card: &card}, true)
		return
	}
	if _, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(escapeFit(res.Text, maxMessageText), false), slack.MsgOptionBlocks(cardBlocks(&card)...)); err != nil {
		s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text}, false)
	}
}

// channelID resolves "#name" or "name" to an id with what the bot saw, then
// conversations.list; failing that the name is passed on as given.
func (s *Slack) channelID(ctx context.Context, ch string) string {
	name := strings.TrimPrefix(ch, "#")
	s.mu.Lock()
	id, ok := s.channels[name]
	s.mu.Unlock()
	if ok {
		return id
	}
	if !strings.HasPrefix(ch, "#") {
		return ch
	}
	params := &slack.GetConversationsParameters{Types: []string{"public_channel", "private_channel"}, Limit: 1000, ExcludeArchived: true}
	for range 10 {
		chans, cursor, err := s.api.GetConversationsContext(ctx, params)
		if err != nil {
			break
		}
		for _, c := range chans {
			if c.Name == name {
				s.rememberChannel(name, c.ID)
				return c.ID
			}
		}
		if cursor == "" {
			break
		}
		params.Cursor = cursor
	}
	return ch
}

func (s *Slack) rememberChannel(name, id string) {
	s.mu.Lock()
	s.channels[strings.TrimPrefix(name, "#")] = id
	s.mu.Unlock()
}

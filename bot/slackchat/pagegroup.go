package slackchat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

var _ oncall.PageGrouper = (*Slack)(nil)

// PageGroup implements oncall.PageGrouper: the escalator pages one person
// for many pages in one tick (more than its group_over). Each page's card
// is drawn as Page draws it; the person gets ONE direct message naming
// every ticket (number, subject, link; beyond the first lines, the list
// continues in its thread, never cut). The blocks that name the tickets
// carry the tokens of the steps' DM markers, so that a step retried after
// a crash or a lost answer, alone (Page) or grouped, finds it and is not
// sent again. The result holds one error per request.
func (s *Slack) PageGroup(ctx context.Context, rs []oncall.PageRequest) []error {
	errs := make([]error, len(rs))
	if len(rs) == 0 {
		return errs
	}
	who := rs[0].Target
	for i, r := range rs {
		if !samePerson(r.Target, who) {
			errs[i] = s.Page(ctx, r) // not the same person: on its own
		}
	}
	userID, dmErr := s.slackUser(ctx, who.ID)
	members := s.groupCards(ctx, rs, who, dmErr, errs)
	if slices.ContainsFunc(members, func(m groupMember) bool { return rs[m.i].Retry }) {
		// Some steps were claimed before and never confirmed: the process
		// that claimed them may have died after Slack took their message.
		members = s.unsent(ctx, rs, members, who, userID)
	}
	if len(members) > 0 {
		s.sendGroup(ctx, rs, members, who, userID, errs)
	}
	return errs
}

// samePerson reports whether t is the person who.
func samePerson(t, who oncall.Target) bool {
	return t.Kind == oncall.TargetPerson && strings.EqualFold(t.ID, who.ID)
}

// groupMember is a step of a grouped page (rs[i]) and its ticket.
type groupMember struct {
	i int
	t *sdclient.Ticket
}

// groupCards draws the card of each step of a grouped page to who and
// returns those whose direct message is to be sent, in ticket order; the
// others get their error in errs (dmErr: who cannot be messaged).
func (s *Slack) groupCards(ctx context.Context, rs []oncall.PageRequest, who oncall.Target, dmErr error, errs []error) []groupMember {
	var members []groupMember
	for i, r := range rs {
		if !samePerson(r.Target, who) {
			continue
		}
		if r.Channel == "" {
			errs[i] = fmt.Errorf("page %s: no on-call channel", r.Page.Key)
			continue
		}
		t, card := s.router.PageTicketCard(ctx, r.TicketID)
		if err := s.drawPageCard(ctx, r.Page, r.Channel, card); err != nil {
			errs[i] = err
			continue
		}
		switch {
		case errors.Is(dmErr, oncall.ErrUnreachable):
			errs[i] = dmErr
		case dmErr != nil:
			errs[i] = fmt.Errorf("page %s: direct message to %s: %w", r.Page.Key, who.ID, dmErr)
		default:
			if t == nil {
				t = &sdclient.Ticket{ID: r.TicketID}
			}
			members = append(members, groupMember{i: i, t: t})
		}
	}
	slices.SortStableFunc(members, func(a, b groupMember) int { return cmp.Compare(a.t.ID, b.t.ID) })
	return members
}

// unsent drops the retried steps whose direct message is already in the
// DM history with userID.
func (s *Slack) unsent(ctx context.Context, rs []oncall.PageRequest, members []groupMember, who oncall.Target, userID string) []groupMember {
	msgs, err := s.dmHistory(ctx, userID)
	if err != nil {
		s.log.Warn("cannot look for pages' earlier direct messages; sending them", "target", who.ID, "err", err)
	}
	return slices.DeleteFunc(members, func(m groupMember) bool {
		r := rs[m.i]
		if !r.Retry {
			return false
		}
		marker := pageDMMarkerID(r.Page.Key, r.Step)
		if slices.ContainsFunc(msgs, func(msg slack.Message) bool { return dmHolds(msg.Blocks.BlockSet, marker) }) {
			s.log.Info("page's direct message already sent; not sending it again", "page", r.Page.Key, "step", r.Step, "target", who.ID)
			return true
		}
		return false
	})
}

// sendGroup sends the direct messages of a grouped page, groupMaxTickets
// tickets each; a step whose message failed gets the error in errs.
func (s *Slack) sendGroup(ctx context.Context, rs []oncall.PageRequest, members []groupMember, who oncall.Target, userID string, errs []error) {
	as := make([]chat.AlertMessage, len(members))
	for j, m := range members {
		r := rs[m.i]
		as[j] = chat.AlertMessage{Channel: r.Channel, Text: r.Text, Ticket: m.t, Rule: r.Page.Rule, Key: pageDMMarkerID(r.Page.Key, r.Step)}
	}
	for start := 0; start < len(as); start += groupMaxTickets {
		end := min(len(as), start+groupMaxTickets)
		part := as[start:end]
		sent := make([]oncall.PageRequest, 0, end-start)
		for _, m := range members[start:end] {
			sent = append(sent, rs[m.i])
		}
		v := listBlocks(part, s.pageGroupHead(ctx, sent), pageGroupFoot, "You are on call", s.router.TicketLink)
		if err := s.postGroup(ctx, v, who, userID, len(part)); err != nil {
			for _, m := range members[start:end] {
				errs[m.i] = err
			}
		}
	}
}

// postGroup posts one grouped page DM and its thread.
func (s *Slack) postGroup(ctx context.Context, v groupView, who oncall.Target, userID string, n int) error {
	ch, ts, err := s.api.PostMessageContext(ctx, userID, slack.MsgOptionText(v.text, false), slack.MsgOptionBlocks(v.blocks...))
	if err != nil {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "channel_not_found" || se.Err == "user_not_found") {
			return fmt.Errorf("%s is not a user of this Slack workspace (postMessage: %s): %w", who.ID, se.Err, oncall.ErrUnreachable)
		}
		return fmt.Errorf("page %d tickets: direct message to %s: %w", n, who.ID, err)
	}
	for k, reply := range v.replies {
		text := fmt.Sprintf("You are on call, part %d of the list", k+2)
		if _, _, err := s.api.PostMessageContext(ctx, cmp.Or(ch, userID), slack.MsgOptionText(text, false),
			slack.MsgOptionBlocks(reply...), slack.MsgOptionTS(ts)); err != nil {
			s.log.Warn("page group: a thread reply failed; the message still names every ticket",
				"target", who.ID, "part", k+2, "err", err)
		}
	}
	return nil
}

// pageGroupFoot is the small print of a grouped page DM.
const pageGroupFoot = "deskbot on-call · grouped: more pages to you at once than group_over · each ticket has its own card, escalation and acknowledgement"

// pageGroupHead is the first line of a grouped page DM of the steps rs.
func (s *Slack) pageGroupHead(ctx context.Context, rs []oncall.PageRequest) string {
	var pols, chans []string
	for _, r := range rs {
		if p := escape(r.Page.Policy); !slices.Contains(pols, p) {
			pols = append(pols, p)
		}
		if c := s.channelRef(ctx, r.Channel); !slices.Contains(chans, c) {
			chans = append(chans, c)
		}
	}
	return fmt.Sprintf(":rotating_light: You are on call for %d tickets (%s). Acknowledge each on its card in %s or with /oncall ack N:",
		len(rs), strings.Join(pols, ", "), strings.Join(chans, ", "))
}

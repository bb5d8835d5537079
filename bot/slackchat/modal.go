package slackchat

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
)

// The new-ticket modal's callback id and input block ids (each input's
// action id equals its block id).
const (
	formCallbackID  = "deskbot_new_ticket"
	formSubject     = "subject"
	formDescription = "description"
	formPriority    = "priority"
	formGroup       = "group"
)

// formMeta travels in the modal's private_metadata so the submission can
// be answered where the command was typed.
type formMeta struct {
	ResponseURL string `json:"response_url,omitempty"`
	Channel     string `json:"channel,omitempty"`
}

// priorityLabel names the desk's priorities 1 to 4.
func priorityLabel(p int) string {
	return [...]string{"Low", "Medium", "High", "Urgent"}[p-1]
}

// ticketModal builds the new-ticket modal.
func ticketModal(f *chat.TicketForm, meta string) slack.ModalViewRequest {
	subject := slack.NewPlainTextInputBlockElement(plain("What is the problem?"), formSubject)
	subject.InitialValue = f.Subject
	subject.MaxLength = 250
	desc := slack.NewPlainTextInputBlockElement(plain("Details, steps, error messages"), formDescription)
	desc.Multiline = true
	var prios []*slack.OptionBlockObject
	for p := 1; p <= 4; p++ {
		prios = append(prios, slack.NewOptionBlockObject(strconv.Itoa(p), plain(priorityLabel(p)), nil))
	}
	prio := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Priority"), formPriority, prios...)
	prio.InitialOption = prios[0]
	blocks := []slack.Block{
		slack.NewInputBlock(formSubject, plain("Subject"), nil, subject),
		withOptional(slack.NewInputBlock(formDescription, plain("Description"), nil, desc)),
		withOptional(slack.NewInputBlock(formPriority, plain("Priority"), nil, prio)),
	}
	if len(f.Groups) > 0 {
		var opts []*slack.OptionBlockObject
		for i, g := range f.Groups {
			if i == 100 { // Slack's limit on static options
				break
			}
			opts = append(opts, slack.NewOptionBlockObject(strconv.FormatInt(g.ID, 10), plain(chat.Truncate(g.Name, 75)), nil))
		}
		sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Group"), formGroup, opts...)
		blocks = append(blocks, withOptional(slack.NewInputBlock(formGroup, plain("Group"), nil, sel)))
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      formCallbackID,
		Title:           plain("New ticket"),
		Submit:          plain("Create"),
		Close:           plain("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: meta,
	}
}

func withOptional(b *slack.InputBlock) *slack.InputBlock {
	b.Optional = true
	return b
}

// formValues reads a submitted new-ticket modal.
func formValues(state *slack.ViewState) chat.TicketFormValues {
	var v chat.TicketFormValues
	if state == nil {
		return v
	}
	get := func(id string) slack.BlockAction {
		return state.Values[id][id]
	}
	v.Subject = strings.TrimSpace(get(formSubject).Value)
	v.Description = get(formDescription).Value
	if p, err := strconv.Atoi(get(formPriority).SelectedOption.Value); err == nil && p >= 1 && p <= 4 {
		v.Priority = p
	}
	if g, err := strconv.ParseInt(get(formGroup).SelectedOption.Value, 10, 64); err == nil && g > 0 {
		v.GroupID = g
	}
	return v
}

// submit creates the ticket of a submitted modal and answers where the
// command was typed (or in a DM).
func (s *Slack) submit(ctx context.Context, cb slack.InteractionCallback, v chat.TicketFormValues) {
	var meta formMeta
	_ = json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta)
	channel := meta.Channel
	if channel == "" {
		channel = cb.User.ID
	}
	if s.foreignTeam(cb.Team.ID) {
		s.answer(ctx, meta.ResponseURL, channel, cb.User.ID, failed(foreignTeamText), false)
		return
	}
	resp := s.router.Dispatch(ctx, chat.Caller{UserID: cb.User.ID, TeamID: cb.Team.ID, ChannelID: channel, Users: s}, chat.Command{Form: &v})
	s.answer(ctx, meta.ResponseURL, channel, cb.User.ID, s.followInDM(ctx, cb.User.ID, resp), false)
}

package bot

import (
	"context"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
)

// AlertButtons are the alert's buttons, each carrying ticket, rule and key.
func AlertButtons(t *sdclient.Ticket, rule, key string) []chat.Button {
	bs := TicketButtons(t, true)
	for i := range bs {
		bs[i].Value = chat.ButtonValue(t.ID, rule, key)
	}
	return bs
}

// AlertCard is the ticket card of an alert, with the alert's buttons
// (Assign to me, Acknowledge, Resolve); the transport adds the headline.
func (r *Router) AlertCard(ctx context.Context, m chat.AlertMessage) *Card {
	card := r.ticketCard(ctx, m.Ticket)
	card.Buttons = AlertButtons(m.Ticket, m.Rule, m.Key)
	return card
}

// KeyAgent is the desk agent who owns the desk API key: the person a
// console acts as unless told otherwise.
func (r *Router) KeyAgent(ctx context.Context) (*sdclient.Agent, error) {
	return r.desk.Me(ctx)
}

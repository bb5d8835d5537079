package bot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// unreadableMirror is a mirror whose store does not answer.
type unreadableMirror struct{}

var errStoreBusy = errors.New("sqlite: read mirror states: context deadline exceeded")

func (unreadableMirror) MirrorStates(context.Context) (map[int64]store.MirrorState, error) {
	return nil, errStoreBusy
}

func (unreadableMirror) MirrorLoad(context.Context, int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	return nil, store.MirrorState{}, errStoreBusy
}

// A command that reads the mirror says so when the mirror cannot be read,
// and does not spend the desk's budget on the ticket or the list instead
// (issue 22: /home then found the budget spent).
func TestMirrorUnreadableDoesNotReadTheDesk(t *testing.T) {
	for _, text := range []string{"why 42", "unassigned", "mine", "search printer"} {
		t.Run(text, func(t *testing.T) {
			d := fakedesk.New()
			r := routertest.New(t, d, bot.WithMirror(unreadableMirror{}))
			reply := routertest.Handle(r, "UALICE", "/ticket", text)
			if !reply.Failed || !strings.Contains(reply.Text, "mirror of the tickets could not be read just now") {
				t.Errorf("/ticket %s answered %q, want that the mirror could not be read", text, reply.Text)
			}
			if n, m := d.Count("filter"), d.Count("ticket"); n+m > 0 {
				t.Errorf("/ticket %s read the desk instead: %d filters, %d ticket reads", text, n, m)
			}
		})
	}
}

package bot_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"
	"github.com/deskbot/deskbot/sdclient"
)

// observed records the tickets the router hands to the mirror.
type observed struct {
	mu sync.Mutex
	ts []sdclient.Ticket
}

func (o *observed) Observe(t *sdclient.Ticket) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ts = append(o.ts, *t)
}

// Every ticket the desk answers a command with goes to the mirror as the
// desk answered it (read your own writes); a failed call hands nothing.
func TestMirrorUpdatesFromTheDesksAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, cmd, text string
		fail            string // fakedesk operation that fails
		want            func(sdclient.Ticket) bool
	}{
		{name: "assign", cmd: "/assign", text: "42 me", want: func(t sdclient.Ticket) bool {
			return t.ID == 42 && t.ResponderID != nil && *t.ResponderID == 7
		}},
		{name: "resolve", cmd: "/ticket", text: "resolve 42", want: func(t sdclient.Ticket) bool { return t.ID == 42 && t.Status == 4 }},
		{name: "new", cmd: "/ticket", text: "new Broken chair", want: func(t sdclient.Ticket) bool { return t.Subject == "Broken chair" }},
		{name: "show reads", cmd: "/ticket", text: "show 43", want: func(t sdclient.Ticket) bool { return t.ID == 43 && t.Subject == "VPN down" }},
		{name: "failed update", cmd: "/assign", text: "42 me", fail: "update"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakedesk.New()
			if tc.fail != "" {
				d.FailNext(tc.fail, errors.New("refused"))
			}
			o := &observed{}
			r := routertest.New(t, d, bot.WithMirrorUpdates(o))
			reply := routertest.Handle(r, "UALICE", tc.cmd, tc.text)
			if tc.fail != "" && !reply.Failed {
				t.Fatalf("%s %s answered %q: the desk's failure was not injected", tc.cmd, tc.text, reply.Text)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			var hit bool
			for _, x := range o.ts {
				hit = hit || (tc.want != nil && tc.want(x))
				if tc.fail != "" && x.ResponderID != nil && *x.ResponderID == 7 {
					t.Errorf("a failed assignment handed %+v to the mirror", x)
				}
			}
			if tc.want != nil && !hit {
				t.Errorf("%s %s (answer %q): the mirror got %+v, not the desk's answer", tc.cmd, tc.text, reply.Text, o.ts)
			}
		})
	}
}

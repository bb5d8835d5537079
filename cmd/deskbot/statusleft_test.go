package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// TestStatusPagesOverviewWired runs deskbot as `deskbot run` wires it
// (sdclient against sdsim, slack-go against slackfake) and reads the
// status pages: the overview names the leader (this process, in its
// epoch), the API key's agent from the start-up check, counts a slash
// command answered; /metrics splits the desk's requests by class; and
// /oncall names the on-call people as the desk knows them.
func TestStatusPagesOverviewWired(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Bob", LastName: "Builder", Email: "bob@example.com"})
	fake := aliceSlack(t)
	addr := freeAddr(t)
	defer runInProcess(t, sim, fake, testkit.OncallRules("UALICE"), "DESKBOT_HTTP_ADDR", addr)()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	base := "http://" + addr

	help, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/oncall", UserID: "UALICE", ChannelID: "C0ONCALL"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.WaitResponse(ctx, func(r slackfake.Response) bool { return r.EnvelopeID == help.ID }); err != nil {
		t.Fatalf("no answer to /oncall: %v", err)
	}

	var overview, oncall string
	want := []*regexp.Regexp{
		regexp.MustCompile(`<dt>leader</dt><dd>` + regexp.QuoteMeta(store.ReplicaName()) + ` \(epoch 1, since `),
		regexp.MustCompile(`<dt>API key's agent</dt><dd>Ada Admin &lt;ada.admin@sim.deskbot.test&gt;</dd>`),
		regexp.MustCompile(`<dt>commands answered in the last hour</dt><dd>1</dd><dt>their p99</dt><dd>\d[^<]*s</dd>`),
	}
	for ctx.Err() == nil {
		_, overview = getWith(t, base+"/")
		_, oncall = getWith(t, base+"/oncall")
		ok := strings.Contains(oncall, "Alice Agent (UALICE)") && strings.Contains(oncall, "Bob Builder (bob@example.com)")
		for _, re := range want {
			ok = ok && re.MatchString(overview)
		}
		if ok {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, re := range want {
		if !re.MatchString(overview) {
			t.Errorf("the overview does not match %s:\n%s", re, overview)
		}
	}
	if !strings.Contains(oncall, "Alice Agent (UALICE)") || !strings.Contains(oncall, "Bob Builder (bob@example.com)") {
		t.Errorf("/oncall does not name the people on call:\n%s", oncall)
	}
	code, metrics := getWith(t, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, `class="people"`) || !strings.Contains(metrics, `class="background"`) {
		t.Errorf("/metrics does not split the desk's requests by class: %d", code)
	}
}

package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
)

// TestDryRunSaysWouldHave: a dry run says, one line per decision, what it
// would have done, grouped and capped as a real cycle, drains a capped
// backlog over the next cycles, and changes nothing.
func TestDryRunSaysWouldHave(t *testing.T) {
	var outlooks []plan.Outlook
	const settings = "group_over: 3\n    max_firings_per_cycle: 4"
	e := stormEnv(t, settings, true, WithDryRun(true))
	ids := addUrgent(e, 6)
	// The scheduler under test posts the dry run's summaries to poster.
	poster := &dryPoster{}
	e.s = e.another(firing.ClientDesk(e.client), fmt.Sprintf(stormRules, settings), e.st, poster, WithDryRun(true),
		WithOutlook(func(o plan.Outlook) { outlooks = append(outlooks, o) }))

	e.runOnce()
	if len(outlooks) != 1 || len(outlooks[0].Rules) != 1 {
		t.Fatalf("outlooks %+v, want one of one rule", outlooks)
	}
	ro := outlooks[0].Rules[0]
	if !slices.Equal(ro.Waves, []int{4, 2}) || !ro.Grouped() || len(ro.Fires) != 6 {
		t.Fatalf("waves %v grouped %v fires %d, want [4 2], grouped, 6", ro.Waves, ro.Grouped(), len(ro.Fires))
	}
	var text []string
	for _, l := range outlooks[0].Lines() {
		text = append(text, l.Text)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"dry run: would have fired urgent on #1: name it in the grouped message in #it-oncall, then add the note \"Alerted the on-call.\"",
		"dry run: would have posted one grouped message in #it-oncall naming 4 tickets (rule urgent, over its group_over 3)",
		"dry run: would have held 2 firings of urgent back for later cycles (max_firings_per_cycle 4, 50 per cycle across rules); 2 in the next cycle, 1m from now",
	} {
		wantIn(t, "lines", all, want)
	}
	if len(text) != 4+1+1 {
		t.Errorf("%d lines, want 6 (4 firings, 1 group, 1 held):\n%s", len(text), all)
	}

	// The next cycle fires the two held back, alone (not over group_over).
	e.next()
	ro = outlooks[1].Rules[0]
	if !slices.Equal(ro.Waves, []int{2}) || ro.Grouped() || ro.AlreadyFired != 4 {
		t.Fatalf("second cycle: waves %v grouped %v already %d, want [2], alone, 4", ro.Waves, ro.Grouped(), ro.AlreadyFired)
	}
	if got := outlooks[1].Lines()[0].Text; !strings.HasPrefix(got, `dry run: would have fired urgent on #5: alert #it-oncall @it-oncall "Urgent #5: Outage 4"`) {
		t.Errorf("second cycle says %q", got)
	}

	// Then nothing, until a ticket leaves the rule and comes back.
	e.next()
	if n := len(outlooks[2].Lines()); n != 0 {
		t.Errorf("third cycle says %d lines, want none", n)
	}
	if len(e.notif.list()) != 0 || len(e.sim.Desk.Conversations(ids[0])) != 0 {
		t.Fatal("dry run acted")
	}

	// Chat got one message a cycle that would have done something.
	if len(poster.posts) != 2 {
		t.Fatalf("%d dry-run posts, want 2 (none for the idle cycle): %q", len(poster.posts), poster.posts)
	}
	first := poster.posts[0]
	for _, want := range []string{
		"#it-oncall\ndeskbot dry run (DESKBOT_DRY_RUN): this cycle changed nothing, but would have:\n• fired urgent on #1: name it in the grouped message",
		"\n• posted one grouped message in #it-oncall naming 4 tickets",
		"\n• held 2 firings of urgent back",
	} {
		wantIn(t, "first post", first, want)
	}
}

// The summary is capped: at most max lines, then "and N more".
func TestDryRunChatSummaryIsCapped(t *testing.T) {
	var outlooks []plan.Outlook
	e := stormEnv(t, "group_over: 30\n    max_firings_per_cycle: 30", true, WithDryRun(true),
		WithOutlook(func(o plan.Outlook) { outlooks = append(outlooks, o) }))
	addUrgent(e, 12)
	e.runOnce()
	ch, text := outlooks[0].ChatSummary(nil, 10)
	if ch != "#it-oncall" || strings.Count(text, "\n• ") != 10 || !strings.HasSuffix(text, "\n… and 2 more (see the log)") {
		t.Errorf("summary in %q:\n%s", ch, text)
	}
}

// dryPoster records the dry-run messages.
type dryPoster struct {
	recNotifier
	posts []string
}

func (p *dryPoster) PostDryRun(_ context.Context, channel, text string) error {
	p.posts = append(p.posts, channel+"\n"+text)
	return nil
}

// wantIn fails the test when text (named what) lacks want.
func wantIn(t *testing.T, what, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Errorf("%s: no %q in:\n%s", what, want, text)
	}
}

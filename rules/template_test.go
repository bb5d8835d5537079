package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

const markupSubject = `<img src=x onerror=alert(1)> & "quotes"`

// Notes and replies are HTML on the desk: the values of {{ }} are escaped,
// the author's own markup is kept. Alerts and pages go to the chat, which
// the bot escapes: their values are left alone.
func TestTemplateEscaping(t *testing.T) {
	s := mustLoad(t, oncallFile(
		ruleHead("a"),
		"    actions:",
		"      - note: \"<b>Urgent</b> {{ ticket.subject }} ({{ ticket.custom_fields.site }}, {{ ticket.tags }})\"",
		"      - reply: |",
		"          <p>About \"{{ ticket.subject }}\":</p>",
		"          <p>{{ ticket.priority == Urgent ? \"<i>urgent</i>\" : \"normal\" }}</p>",
		"      - alert: {channel: oncall, text: \"<b>{{ ticket.subject }}</b>\"}",
		"      - page: {policy: it-urgent, text: \"Page: {{ ticket.subject }}\"}",
		"      - page: {policy: it-urgent}",
	))
	tk := ticket(7, func(t *sdclient.Ticket) {
		t.Subject = markupSubject
		t.Priority = sdclient.PriorityUrgent
		t.Tags = []string{"<x>", "y&z"}
		t.CustomFields = map[string]any{"site": "<script>HQ</script>"}
	})
	ds := s.Evaluate([]*sdclient.Ticket{tk}, fixtureNow)
	if len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("%+v", ds)
	}
	want := []string{
		`<b>Urgent</b> &lt;img src=x onerror=alert(1)&gt; &amp; &#34;quotes&#34; (&lt;script&gt;HQ&lt;/script&gt;, &lt;x&gt;, y&amp;z)`,
		"<p>About \"&lt;img src=x onerror=alert(1)&gt; &amp; &#34;quotes&#34;\":</p>\n<p>&lt;i&gt;urgent&lt;/i&gt;</p>\n",
		"<b>" + markupSubject + "</b>",
		"Page: " + markupSubject,
		"Ticket #7 needs the on-call: " + markupSubject,
	}
	for i, a := range ds[0].Actions {
		if a.Text != want[i] {
			t.Errorf("%s: %q\nwant %q", a.Kind, a.Text, want[i])
		}
	}
}

// The reminder of the example file quotes the subject in its reply: a
// subject with markup reaches the requester's e-mail as text.
func TestExamplePendingReminderEscapesSubject(t *testing.T) {
	s := loadExample(t)
	tk := ticket(104, func(t *sdclient.Ticket) {
		t.Status = sdclient.StatusPending
		t.Subject = markupSubject
		t.UpdatedAt = fixtureNow.Add(-4 * 24 * time.Hour)
	})
	ds := s.EvaluateRule(s.Rule("pending-reminder"), []*sdclient.Ticket{tk}, fixtureNow)
	if len(ds) != 1 || ds[0].Err != nil || len(ds[0].Actions) != 1 {
		t.Fatalf("%+v", ds)
	}
	text := ds[0].Actions[0].Text
	if strings.Contains(text, "<img") || !strings.Contains(text, `on "&lt;img src=x onerror=alert(1)&gt; &amp; &#34;quotes&#34;".`) {
		t.Errorf("reply:\n%s", text)
	}
}

// A mention built from ticket data names a user or a group, never Slack
// markup or everyone in the channel; what the author writes is kept.
func TestMentionValuesNeutralised(t *testing.T) {
	tests := []struct {
		mention string
		field   any
		want    string
	}{
		{"{{ ticket.custom_fields.who }}", "U0123ABC", "U0123ABC"},
		{"{{ ticket.custom_fields.who }}", "ana@example.com", "ana@example.com"},
		{"@{{ ticket.custom_fields.who }}", "it-desk", "@it-desk"},
		{"<@{{ ticket.custom_fields.who }}>", "U0123ABC", "<@U0123ABC>"},
		{"<!subteam^{{ ticket.custom_fields.who }}>", "S0123ABC", "<!subteam^S0123ABC>"},
		{"{{ ticket.custom_fields.who }}", "<!channel>", "channel"},
		{"{{ ticket.custom_fields.who }}", "<@U0123ABC>", "@U0123ABC"},
		{"<@{{ ticket.custom_fields.who }}>", "U1>|<!here", "<@U1|here>"},
		{"{{ ticket.custom_fields.who }}", " @Here ", ""},
		{"{{ ticket.custom_fields.who }}", "@channel", ""},
		{"@{{ ticket.custom_fields.who }}", "everyone", ""},
		{"@{{ ticket.custom_fields.who }}", "<!everyone>", ""},
		{"<!{{ ticket.custom_fields.who }}>", "here", ""},
		{"<!here> {{ ticket.custom_fields.who }}", "x", "<!here> x"},
		{"@here", nil, "@here"},
		{"<!channel>", nil, "<!channel>"},
	}
	for _, tt := range tests {
		t.Run(tt.mention, func(t *testing.T) {
			s := mustLoad(t, ruleFile(
				ruleHead("a"),
				"    actions: [{alert: {channel: oncall, text: \"t {{ ticket.custom_fields.who }}\", mention: '"+tt.mention+"'}}]"))
			ds := s.Evaluate([]*sdclient.Ticket{ticket(1, func(t *sdclient.Ticket) {
				t.CustomFields = map[string]any{"who": tt.field}
			})}, fixtureNow)
			if len(ds) != 1 || ds[0].Err != nil {
				t.Fatalf("%+v", ds)
			}
			a := ds[0].Actions[0]
			if a.Mention != tt.want {
				t.Errorf("mention %q, want %q", a.Mention, tt.want)
			}
			if want := "t " + formatValue(tt.field); a.Text != want {
				t.Errorf("alert text %q, want %q (unchanged)", a.Text, want)
			}
		})
	}
}

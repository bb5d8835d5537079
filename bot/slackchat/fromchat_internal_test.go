package slackchat

import "testing"

func TestPlainText(t *testing.T) {
	tests := map[string]string{
		"Printer &amp; scanner &lt;3 &gt; fax":                 "Printer & scanner <3 > fax",
		"see <https://x.example/a?b=1&amp;c=2|the doc> now":    "see the doc (https://x.example/a?b=1&c=2) now",
		"<https://x.example/>":                                 "https://x.example/",
		"<https://x.example/|https://x.example/>":              "https://x.example/",
		"hi <@U123> and <@U456|bob> in <#C1|it-desk> or <#C2>": "hi @U123 and @bob in #it-desk or #C2",
		"<!here> <!subteam^S1|@it-oncall> <!channel>":          "@here @it-oncall @channel",
		"<mailto:a@example.com|a@example.com>":                 "a@example.com (mailto:a@example.com)",
		"a &lt; b and c &gt; d":                                "a < b and c > d",
	}
	for in, want := range tests {
		if got := plainText(in); got != want {
			t.Errorf("plainText(%q) = %q; want %q", in, got, want)
		}
	}
}

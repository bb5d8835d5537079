package bot

import "testing"

func TestThreadReplyMark(t *testing.T) {
	for _, tc := range []struct {
		in, text string
		public   bool
	}{
		{"reply: on our way", "on our way", true},
		{"Reply:on our way", "on our way", true},
		{":speech_balloon: on our way", "on our way", true},
		{"  checked the logs ", "checked the logs", false},
		{"the reply: is coming", "the reply: is coming", false},
		{"reply:", "", true},
	} {
		text, public := threadReplyText(tc.in)
		if text != tc.text || public != tc.public {
			t.Errorf("threadReplyText(%q) = %q, %v; want %q, %v", tc.in, text, public, tc.text, tc.public)
		}
	}
}

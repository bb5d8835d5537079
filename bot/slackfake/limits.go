package slackfake

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// ErrMsgTooLong is Slack's answer to a message text over 40,000 characters.
const ErrMsgTooLong = "msg_too_long"

// maxMessageText is Slack's limit on a message's text.
const maxMessageText = 40000

// blockLimits checks blocks against Slack's documented Block Kit limits,
// which Slack enforces by refusing the whole message with invalid_blocks;
// it returns why the blocks break one, or "".
func blockLimits(raw json.RawMessage) string {
	return blocksWithin(raw, 50)
}

// blocksWithin is blockLimits with at most most blocks.
func blocksWithin(raw json.RawMessage, most int) string {
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "blocks are not a JSON array of objects"
	}
	if len(blocks) > most {
		return fmt.Sprintf("%d blocks, at most %d", len(blocks), most)
	}
	for i, b := range blocks {
		if id, _ := b["block_id"].(string); utf8.RuneCountInString(id) > 255 {
			return fmt.Sprintf("block %d: block_id over 255 characters", i)
		}
		if why := blockLimit(b); why != "" {
			return fmt.Sprintf("block %d (%v): %s", i, b["type"], why)
		}
	}
	return ""
}

func blockLimit(b map[string]any) string {
	switch b["type"] {
	case "section":
		if t, ok := b["text"].(map[string]any); ok {
			if why := textLimit(t, 3000); why != "" {
				return "text: " + why
			}
		}
		fs, _ := b["fields"].([]any)
		if len(fs) > 10 {
			return fmt.Sprintf("%d fields, at most 10", len(fs))
		}
		for _, f := range fs {
			f, _ := f.(map[string]any)
			if why := textLimit(f, 2000); why != "" {
				return "field: " + why
			}
		}
	case "header":
		t, _ := b["text"].(map[string]any)
		return textLimit(t, 150)
	case "context":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > 10 {
			return fmt.Sprintf("%d elements, 1 to 10", len(els))
		}
		for _, e := range els {
			e, _ := e.(map[string]any)
			if e["type"] == "image" {
				continue
			}
			if why := textLimit(e, 3000); why != "" {
				return "element: " + why
			}
		}
	case "actions":
		els, _ := b["elements"].([]any)
		if len(els) == 0 || len(els) > 25 {
			return fmt.Sprintf("%d elements, 1 to 25", len(els))
		}
		for _, e := range els {
			e, _ := e.(map[string]any)
			if e["type"] != "button" {
				continue
			}
			t, _ := e["text"].(map[string]any)
			if why := textLimit(t, 75); why != "" {
				return "button text: " + why
			}
			if id, _ := e["action_id"].(string); utf8.RuneCountInString(id) > 255 {
				return "button action_id over 255 characters"
			}
			if v, _ := e["value"].(string); utf8.RuneCountInString(v) > 2000 {
				return "button value over 2000 characters"
			}
		}
	}
	return ""
}

// textLimit checks a text object: 1 to max characters.
func textLimit(t map[string]any, max int) string {
	s, _ := t["text"].(string)
	if n := utf8.RuneCountInString(s); n == 0 || n > max {
		return fmt.Sprintf("text of %d characters, 1 to %d", n, max)
	}
	return ""
}

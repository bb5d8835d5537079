package slackfake_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// FuzzWebAPIRequest posts arbitrary bodies to the Web API: the fake must
// always answer Slack's JSON envelope ({"ok":bool,...} with an error when
// not ok) and never panic or hang.
func FuzzWebAPIRequest(f *testing.F) {
	f.Add("chat.postMessage", "application/x-www-form-urlencoded", "token=xoxb-fake&channel=C1&text=hi&blocks=%5B%5D")
	f.Add("chat.update", "application/x-www-form-urlencoded", "token=xoxb-fake&channel=C1&ts=1.2&blocks=%5Bnull%5D")
	f.Add("views.open", "application/json", `{"trigger_id":"1.2.3","view":{"type":"modal"}}`)
	f.Add("views.update", "application/json", `{"view_id":"V1","view":"{\"type\":\"modal\"}"}`)
	f.Add("conversations.history", "application/x-www-form-urlencoded", "token=xoxb-fake&channel=C1&limit=-1&latest=x")
	f.Add("users.lookupByEmail", "application/json", `[1,2]`)
	srv := slackfake.New(slackfake.WithUsers(alice))
	defer srv.Close()
	hc := &http.Client{}
	f.Fuzz(func(t *testing.T, method, ctype, body string) {
		req, err := http.NewRequest(http.MethodPost, srv.APIURL()+method, bytes.NewBufferString(body))
		if err != nil {
			t.Skip() // not a valid URL path
		}
		for _, r := range ctype {
			if r < 0x20 || r >= 0x7f {
				t.Skip() // net/http refuses such header values
			}
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+srv.BotToken())
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && resp.StatusCode != http.StatusOK {
			return // net/http or the router refused the request before the API saw it
		}
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
		}
		if _, ok := out["ok"].(bool); !ok {
			t.Fatalf("answer without ok: %v", out)
		}
		if ok := out["ok"].(bool); !ok {
			if e, _ := out["error"].(string); e == "" {
				t.Fatalf("ok:false without error: %v", out)
			}
		}
	})
}

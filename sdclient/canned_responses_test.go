package sdclient

import "testing"

func TestCannedResponses(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /canned_responses", "", "", 200, `{"canned_responses":[{"id":1,"title":"Thanks","content":"Thank you","content_html":"<p>Thank you</p>","folder_id":2}]}`)
	list, _, err := c.CannedResponses.List(t.Context(), nil)
	if err != nil || list[0].Title != "Thanks" || list[0].FolderID != 2 {
		t.Fatalf("list: %v", err)
	}
}

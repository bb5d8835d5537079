package sdclient

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestConversations(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /tickets/42/conversations", "page=2&per_page=10", "", 200,
		`{"conversations":[{"id":1,"ticket_id":42,"source":0,"private":false,"support_email":"help@x.com","bcc_emails":null},{"id":2,"ticket_id":42,"source":2,"private":true}]}`)
	route(t, mux, "POST /tickets/42/reply", "", `{"body":"We are on it."}`, 201, `{"conversation":{"id":3,"body":"We are on it.","to_emails":["ann@example.com"]}}`)
	route(t, mux, "POST /tickets/42/notes", "", `{"body":"paged","private":true}`, 201, `{"conversation":{"id":4,"private":true}}`)
	route(t, mux, "POST /tickets/43/notes", "", `{"body":"visible","private":false}`, 201, `{"conversation":{"id":5,"private":false}}`)
	route(t, mux, "PUT /conversations/4", "", `{"body":"edited"}`, 200, `{"conversation":{"id":4,"body":"edited"}}`)
	route(t, mux, "DELETE /conversations/3", "", "", 204, "")

	convs, _, err := c.Conversations.List(t.Context(), 42, &ListOptions{Page: 2, PerPage: 10})
	if err != nil || len(convs) != 2 || convs[0].Source != ConversationSourceEmail || *convs[0].SupportEmail != "help@x.com" || !convs[1].Private {
		t.Fatalf("list: %v %+v", err, convs)
	}
	r, _, err := c.Conversations.Reply(t.Context(), 42, &ReplyRequest{Body: "We are on it."})
	if err != nil || r.ID != 3 || r.ToEmails[0] != "ann@example.com" {
		t.Fatalf("reply: %v %+v", err, r)
	}
	n, _, err := c.Conversations.Note(t.Context(), 42, &NoteRequest{Body: "paged", Private: true})
	if err != nil || !n.Private {
		t.Fatalf("note: %v", err)
	}
	if _, _, err := c.Conversations.Note(t.Context(), 43, &NoteRequest{Body: "visible"}); err != nil {
		t.Fatalf("public note: %v", err)
	}
	u, _, err := c.Conversations.Update(t.Context(), 4, "edited")
	if err != nil || u.Body != "edited" {
		t.Fatalf("update: %v", err)
	}
	if resp, err := c.Conversations.Delete(t.Context(), 3); err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete: %v", err)
	}
	for i, err := range []error{
		func() error {
			_, _, err := c.Conversations.Reply(t.Context(), 42, &ReplyRequest{Body: "  "})
			return err
		}(),
		func() error { _, _, err := c.Conversations.Note(t.Context(), 42, nil); return err }(),
		func() error { _, _, err := c.Conversations.Update(t.Context(), 4, ""); return err }(),
		func() error { _, _, err := c.Conversations.List(t.Context(), 0, nil); return err }(),
		func() error { _, err := c.Conversations.Delete(t.Context(), -1); return err }(),
	} {
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func TestConversationsListAll(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/42/conversations", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "" {
			w.Header().Set("Link", `<https://x/api/v2/tickets/42/conversations?page=2>; rel="next"`)
			writeJSON(w, 200, `{"conversations":[{"id":1}]}`)
			return
		}
		writeJSON(w, 200, `{"conversations":[{"id":2}]}`)
	})
	var ids []int64
	for cv, err := range c.Conversations.ListAll(t.Context(), 42, nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cv.ID)
	}
	if fmt.Sprint(ids) != "[1 2]" {
		t.Errorf("ids = %v", ids)
	}
}

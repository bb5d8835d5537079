package sdclient

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"
)

// ConversationsService handles replies and notes on tickets.
type ConversationsService service

// ReplyRequest is the body of POST /tickets/{id}/reply: a public reply,
// e-mailed to the requester. Leave FromEmail empty to use the desk's
// default support address.
type ReplyRequest struct {
	Body      string   `json:"body"`
	FromEmail string   `json:"from_email,omitempty"`
	UserID    int64    `json:"user_id,omitempty"`
	CCEmails  []string `json:"cc_emails,omitempty"`
	BCCEmails []string `json:"bcc_emails,omitempty"`
}

// NoteRequest is the body of POST /tickets/{id}/notes. Private is always
// sent: true keeps the note internal, false shows it to the requester.
type NoteRequest struct {
	Body         string   `json:"body"`
	Private      bool     `json:"private"`
	Incoming     bool     `json:"incoming,omitempty"`
	UserID       int64    `json:"user_id,omitempty"`
	NotifyEmails []string `json:"notify_emails,omitempty"`
}

// List reads one page of a ticket's conversations
// (GET /tickets/{id}/conversations).
func (s *ConversationsService) List(ctx context.Context, ticketID int64, opts *ListOptions) ([]*Conversation, *Response, error) {
	op := fmt.Sprintf("list conversations of ticket %d", ticketID)
	return listChildren[Conversation](ctx, s.client, op, "ticket", ticketID, idPath("tickets", ticketID)+"/conversations", "conversations", opts)
}

// ListAll walks every page of a ticket's conversations.
func (s *ConversationsService) ListAll(ctx context.Context, ticketID int64, opts *ListOptions) iter.Seq2[*Conversation, error] {
	return listAllChildren(ctx, ticketID, opts, s.List)
}

// Reply sends a public reply (POST /tickets/{id}/reply); the desk e-mails it
// to the requester.
func (s *ConversationsService) Reply(ctx context.Context, ticketID int64, r *ReplyRequest) (*Conversation, *Response, error) {
	var text string
	if r != nil {
		text = r.Body
	}
	return s.post(ctx, fmt.Sprintf("reply to ticket %d", ticketID), ticketID, "reply", "reply", text, r)
}

// Note adds a note (POST /tickets/{id}/notes); see NoteRequest.Private.
func (s *ConversationsService) Note(ctx context.Context, ticketID int64, n *NoteRequest) (*Conversation, *Response, error) {
	var text string
	if n != nil {
		text = n.Body
	}
	return s.post(ctx, fmt.Sprintf("add note to ticket %d", ticketID), ticketID, "notes", "note", text, n)
}

// post sends a reply or a note (POST /tickets/{id}/{path}) whose text must
// not be empty; noun names it in errors.
func (s *ConversationsService) post(ctx context.Context, op string, ticketID int64, path, noun, text string, body any) (*Conversation, *Response, error) {
	if ticketID <= 0 {
		return nil, nil, invalid(op, "ticket id must be positive")
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil, invalid(op, "%s body is empty", noun)
	}
	return sendOne[Conversation](ctx, s.client, request{op: op, method: http.MethodPost, path: idPath("tickets", ticketID) + "/" + path, body: body}, "conversation")
}

// Update replaces the body of a note (PUT /conversations/{id}); the desk
// only lets notes be edited.
func (s *ConversationsService) Update(ctx context.Context, id int64, body string) (*Conversation, *Response, error) {
	op := fmt.Sprintf("update conversation %d", id)
	if id <= 0 {
		return nil, nil, invalid(op, "conversation id must be positive")
	}
	if strings.TrimSpace(body) == "" {
		return nil, nil, invalid(op, "body is empty")
	}
	return sendOne[Conversation](ctx, s.client, request{op: op, method: http.MethodPut, path: idPath("conversations", id), body: map[string]string{"body": body}}, "conversation")
}

// Delete removes a reply or note (DELETE /conversations/{id}, 204).
func (s *ConversationsService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "conversation", "conversations", id)
}

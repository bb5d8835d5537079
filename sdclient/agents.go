package sdclient

import (
	"context"
	"fmt"
	"net/http"
	"net/mail"
)

// GetByEmail finds the agent with an e-mail address (GET /agents?email=).
// When there is none the error matches ErrNotFound.
func (s *AgentsService) GetByEmail(ctx context.Context, email string) (*Agent, *Response, error) {
	op := "get agent by e-mail"
	if _, err := mail.ParseAddress(email); err != nil {
		return nil, nil, invalid(op, "%q is not an e-mail address", email)
	}
	agents, resp, err := list[Agent](ctx, s.editing.res.client, op, "agents", "agents", &AgentListOptions{Email: email})
	if err != nil {
		return nil, resp, err
	}
	if len(agents) == 0 {
		return nil, resp, fmt.Errorf("sdclient: %s: no agent with e-mail %s: %w", op, email, ErrNotFound)
	}
	return agents[0], resp, nil
}

// Me reads the agent who owns the API key (GET /agents/me); a cheap way to
// check the key.
func (s *AgentsService) Me(ctx context.Context) (*Agent, *Response, error) {
	return sendOne[Agent](ctx, s.editing.res.client, request{op: "get current agent", method: http.MethodGet, path: "agents/me"}, "agent")
}

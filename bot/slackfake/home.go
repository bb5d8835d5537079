package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
)

// ErrViewTooLarge is Slack's answer to a view over 250 kB.
const ErrViewTooLarge = "view_too_large"

// Slack's limits on a view (a Home tab or a modal): 100 blocks, 250 kB.
const (
	maxViewBlocks = 100
	maxViewBytes  = 250_000
)

// viewsPublish serves views.publish: it creates or replaces the Home tab
// of user_id (a user of the workspace), as Slack does: the view must be of
// type home, within the limits of a view's blocks, and hash, when given,
// must be the current one. A user's Home view keeps its id across
// publishes; each publish gets a new hash.
func (s *Server) viewsPublish(r *apiRequest) (map[string]any, apiError) {
	user := r.param("user_id")
	if _, ok := s.users[user]; !ok || user == "" {
		return nil, ErrInvalidArguments // Slack: invalid `user_id`
	}
	view, apiErr := viewArg(r)
	if apiErr != "" {
		return nil, apiErr
	}
	if str(view, "type") != "home" {
		return nil, ErrInvalidArguments
	}
	if len(mustJSON(view)) > maxViewBytes {
		return nil, ErrViewTooLarge
	}
	if why := viewBlockLimits(view["blocks"]); why != "" {
		return nil, ErrInvalidArguments // Slack names the failing block in response_metadata
	}
	v := s.homeViewLocked(user)
	if h := r.param("hash"); h != "" && (v == nil || h != v.hash) {
		return nil, ErrHashConflict
	}
	if v == nil {
		v = &storedView{id: s.nextIDLocked("V"), userID: user}
		v.rootID = v.id
		s.views[v.id] = v
	}
	v.view = view
	v.externalID = str(view, "external_id")
	v.hash = s.newHashLocked()
	s.recordViewLocked("views.publish", "", v)
	return map[string]any{"view": s.viewJSONLocked(v)}, ""
}

// viewBlockLimits is blockLimits for the blocks of a view (100, not 50).
func viewBlockLimits(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	return blocksWithin(raw, maxViewBlocks)
}

// homeViewLocked is the Home view published for user, nil when none.
func (s *Server) homeViewLocked(user string) *storedView {
	for _, v := range s.views {
		if v.userID == user && str(v.view, "type") == "home" {
			return v
		}
	}
	return nil
}

// HomeView is the Home tab last published for a user (its Raw is the
// view as the bot sent it); false when the bot published none.
func (s *Server) HomeView(userID string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.viewLog) - 1; i >= 0; i-- {
		if v := s.viewLog[i]; v.Method == "views.publish" && v.UserID == userID {
			return v, true
		}
	}
	return View{}, false
}

// AppHomeOpened delivers an events_api envelope with an app_home_opened
// event, as Slack sends when user opens the app's tab ("home" or
// "messages"): its event carries the user's DM channel with the app and,
// on the Home tab, the view last published for them.
func (s *Server) AppHomeOpened(ctx context.Context, userID, tab string) (*Envelope, error) {
	s.mu.Lock()
	s.seq++
	ts := fmt.Sprintf("%d.%06d", s.cfg.clock.Now().Unix(), s.seq)
	event := map[string]any{
		"type":     "app_home_opened",
		"user":     userID,
		"channel":  "D" + userID,
		"tab":      tab,
		"event_ts": ts,
	}
	if v := s.homeViewLocked(userID); v != nil && tab == "home" {
		event["view"] = s.viewJSONLocked(v)
	}
	payload := map[string]any{
		"token":      "fake-verification-token",
		"team_id":    s.cfg.teamID,
		"api_app_id": s.cfg.appID,
		"event":      event,
		"type":       "event_callback",
		"event_id":   fmt.Sprintf("Ev%08X", s.seq),
		"event_time": s.cfg.clock.Now().Unix(),
		"authorizations": []any{map[string]any{
			"enterprise_id": nil, "team_id": s.cfg.teamID, "user_id": s.cfg.botUserID,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
	}
	s.mu.Unlock()
	env := &Envelope{ID: newEnvelopeID(), Type: "events_api", Payload: mustJSON(payload), s: s}
	return env, s.deliver(ctx, env)
}

package slackfake

import (
	"encoding/json"
	"fmt"
	"time"
)

// trigger is a trigger_id handed out with an envelope.
type trigger struct {
	userID  string
	viewID  string // the view the interaction came from, for views.push
	created time.Time
	used    bool
}

// storedView is the live state of a view.
type storedView struct {
	id         string
	userID     string
	externalID string
	hash       string
	rootID     string
	previousID string
	view       map[string]json.RawMessage // as sent by the bot
}

// newTriggerLocked registers a trigger_id for a user.
func (s *Server) newTriggerLocked(userID, viewID string) string {
	s.seq++
	id := fmt.Sprintf("%d.%d.%s", 1000000+s.seq, s.cfg.clock.Now().Unix(), randomHex(10))
	s.triggers[id] = &trigger{userID: userID, viewID: viewID, created: s.cfg.clock.Now()}
	return id
}

// exchangeTriggerLocked validates and consumes a trigger_id.
func (s *Server) exchangeTriggerLocked(id string) (*trigger, apiError) {
	t, ok := s.triggers[id]
	switch {
	case id == "" || !ok:
		return nil, ErrInvalidTriggerID
	case t.used:
		return nil, ErrTriggerExchanged
	case s.cfg.clock.Since(t.created) > TriggerTTL:
		return nil, ErrExpiredTriggerID
	}
	t.used = true
	return t, ""
}

// viewArg decodes the "view" parameter, sent as a JSON object (JSON
// posts) or as a JSON string (form posts).
func viewArg(r *apiRequest) (map[string]json.RawMessage, apiError) {
	raw, ok := r.json["view"]
	if !ok {
		if !r.form.Has("view") {
			return nil, ErrInvalidArguments
		}
		raw = json.RawMessage(r.form.Get("view"))
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return nil, ErrInvalidArguments
	}
	var typ string
	_ = json.Unmarshal(v["type"], &typ)
	if typ != "modal" && typ != "home" {
		return nil, ErrInvalidArguments
	}
	return v, ""
}

func str(v map[string]json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(v[key], &s)
	return s
}

func (s *Server) newHashLocked() string {
	s.seq++
	return fmt.Sprintf("%d.%08x", s.cfg.clock.Now().Unix(), s.seq)
}

// viewJSONLocked renders a view as views.* answer it.
func (s *Server) viewJSONLocked(v *storedView) map[string]any {
	out := map[string]any{}
	for k, raw := range v.view {
		out[k] = raw
	}
	for _, k := range []string{"private_metadata", "callback_id", "external_id"} {
		if _, ok := out[k]; !ok {
			out[k] = ""
		}
	}
	if _, ok := out["blocks"]; !ok {
		out["blocks"] = []any{}
	}
	out["id"] = v.id
	out["team_id"] = s.cfg.teamID
	out["state"] = map[string]any{"values": map[string]any{}}
	out["hash"] = v.hash
	out["root_view_id"] = v.rootID
	if v.previousID != "" {
		out["previous_view_id"] = v.previousID
	}
	out["app_id"] = s.cfg.appID
	out["bot_id"] = s.cfg.botID
	out["app_installed_team_id"] = s.cfg.teamID
	return out
}

// recordViewLocked appends to the view log.
func (s *Server) recordViewLocked(method, triggerID string, v *storedView) {
	s.viewLog = append(s.viewLog, View{
		Method: method, ID: v.id, TriggerID: triggerID, UserID: v.userID,
		CallbackID: str(v.view, "callback_id"), PrivateMetadata: str(v.view, "private_metadata"),
		ExternalID: v.externalID, Hash: v.hash, RootViewID: v.rootID, PreviousViewID: v.previousID,
		Raw: mustJSON(v.view),
	})
	s.notifyLocked()
}

func (s *Server) openOrPush(r *apiRequest, push bool) (map[string]any, apiError) {
	view, apiErr := viewArg(r)
	if apiErr != "" {
		return nil, apiErr
	}
	triggerID := r.param("trigger_id")
	t, apiErr := s.exchangeTriggerLocked(triggerID)
	if apiErr != "" {
		return nil, apiErr
	}
	ext := str(view, "external_id")
	if ext != "" {
		for _, v := range s.views {
			if v.externalID == ext {
				return nil, "duplicate_external_id"
			}
		}
	}
	v := &storedView{id: s.nextIDLocked("V"), userID: t.userID, externalID: ext, hash: s.newHashLocked(), view: view}
	v.rootID = v.id
	method := "views.open"
	if push {
		method = "views.push"
		if from, ok := s.views[t.viewID]; ok {
			v.rootID, v.previousID = from.rootID, from.id
		}
	}
	s.views[v.id] = v
	s.recordViewLocked(method, triggerID, v)
	return map[string]any{"view": s.viewJSONLocked(v)}, ""
}

func (s *Server) viewsOpen(r *apiRequest) (map[string]any, apiError) {
	return s.openOrPush(r, false)
}

func (s *Server) viewsPush(r *apiRequest) (map[string]any, apiError) {
	return s.openOrPush(r, true)
}

func (s *Server) viewsUpdate(r *apiRequest) (map[string]any, apiError) {
	view, apiErr := viewArg(r)
	if apiErr != "" {
		return nil, apiErr
	}
	var v *storedView
	if id := r.param("view_id"); id != "" {
		v = s.views[id]
	} else if ext := r.param("external_id"); ext != "" {
		for _, cand := range s.views {
			if cand.externalID == ext {
				v = cand
			}
		}
	} else {
		return nil, ErrInvalidArguments
	}
	if v == nil {
		return nil, ErrViewNotFound
	}
	if h := r.param("hash"); h != "" && h != v.hash {
		return nil, ErrHashConflict
	}
	if ext := str(view, "external_id"); ext == "" && v.externalID != "" {
		view["external_id"] = mustJSON(v.externalID)
	}
	v.view = view
	v.hash = s.newHashLocked()
	s.recordViewLocked("views.update", "", v)
	return map[string]any{"view": s.viewJSONLocked(v)}, ""
}

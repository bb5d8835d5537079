package slackfake

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tokenKind says which credential a request carried.
type tokenKind int

const (
	tokenNone tokenKind = iota
	tokenBot
	tokenApp
	tokenInvalid
)

// apiRequest is a decoded Web API call.
type apiRequest struct {
	method string
	form   url.Values
	json   map[string]json.RawMessage
	token  tokenKind
}

// limit reads the limit parameter of a listing: def when absent or 0,
// at most most; false when it is not a number or is negative.
func (r *apiRequest) limit(def, most int) (int, bool) {
	l := r.param("limit")
	if l == "" {
		return def, true
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 0 {
		return 0, false
	}
	if n == 0 {
		return def, true
	}
	return min(n, most), true
}

// param returns a parameter from the form or, for JSON posts, a JSON
// string field; a non-string JSON value is returned as its raw JSON.
func (r *apiRequest) param(name string) string {
	if r.form.Has(name) {
		return r.form.Get(name)
	}
	raw, ok := r.json[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// has reports whether the parameter was sent at all.
func (r *apiRequest) has(name string) bool {
	if r.form.Has(name) {
		return true
	}
	_, ok := r.json[name]
	return ok
}

// apiError is an ok:false answer.
type apiError string

// apiHandler serves one method; it runs with s.mu held.
type apiHandler func(s *Server, r *apiRequest) (map[string]any, apiError)

var apiMethods = map[string]apiHandler{
	"apps.connections.open": (*Server).appsConnectionsOpen,
	"auth.test":             (*Server).authTest,
	"users.info":            (*Server).usersInfo,
	"users.lookupByEmail":   (*Server).usersLookupByEmail,
	"usergroups.list":       (*Server).usergroupsList,
	"usergroups.users.list": (*Server).usergroupsUsersList,
	"conversations.open":    (*Server).conversationsOpen,
	"conversations.history": (*Server).conversationsHistory,
	"chat.postMessage":      (*Server).chatPostMessage,
	"chat.postEphemeral":    (*Server).chatPostEphemeral,
	"chat.update":           (*Server).chatUpdate,
	"chat.delete":           (*Server).chatDelete,
	"views.open":            (*Server).viewsOpen,
	"views.push":            (*Server).viewsPush,
	"views.update":          (*Server).viewsUpdate,
	"views.publish":         (*Server).viewsPublish,         // home.go
	"conversations.replies": (*Server).conversationsReplies, // fromchat.go
	"chat.getPermalink":     (*Server).chatGetPermalink,
	"chat.unfurl":           (*Server).chatUnfurl,
}

// fault is an injected failure for the next call of a method.
type fault struct {
	retryAfter time.Duration // > 0 or rateLimit: answer 429
	rateLimit  bool
	status     int // an HTTP 5xx status to answer
	err        string
}

// ResponseURLMethod is the method name under which faults for response_url
// posts are injected (RateLimitNext, ServerErrorNext, FailNext).
const ResponseURLMethod = "response_url"

// ServerErrorNext makes the next n calls of method answer with HTTP status
// (a 5xx) without acting on them, as Slack does when it has a bad moment.
func (s *Server) ServerErrorNext(method string, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], fault{status: status})
	}
}

// takeFault pops the next injected fault of method.
func (s *Server) takeFault(method string) (fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.faults[method]
	if len(fs) == 0 {
		return fault{}, false
	}
	s.faults[method] = fs[1:]
	return fs[0], true
}

// RateLimitNext makes the next n calls of method answer HTTP 429 with a
// Retry-After header (whole seconds, rounded up), as Slack's rate limiter
// does; slack-go reports it as *slack.RateLimitedError.
func (s *Server) RateLimitNext(method string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], fault{rateLimit: true, retryAfter: retryAfter})
	}
}

// FailNext makes the next n calls of method answer {"ok":false,"error":errCode}.
func (s *Server) FailNext(method string, n int, errCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], fault{err: errCode})
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, req *http.Request) {
	method := req.PathValue("method")
	body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	call := Call{Method: method, ContentType: req.Header.Get("Content-Type")}
	ar := &apiRequest{method: method, form: url.Values{}}
	ctype, _, _ := mime.ParseMediaType(call.ContentType)
	switch ctype {
	case "application/json":
		call.JSON = redactJSON(body, s.cfg.botToken, s.cfg.appToken)
		if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &ar.json) != nil {
			s.answer(w, &call, http.StatusOK, nil, "invalid_json")
			return
		}
	default:
		if form, err := url.ParseQuery(string(body)); err == nil {
			ar.form = form
		}
	}
	for k, vs := range req.URL.Query() { // GET-style parameters
		if !ar.form.Has(k) {
			ar.form[k] = vs
		}
	}
	call.Form = redactForm(ar.form)
	token := ar.form.Get("token")
	if h := req.Header.Get("Authorization"); h != "" {
		call.Authorization = "Bearer REDACTED"
		if token == "" {
			token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(h), "Bearer"))
		}
	}
	switch token {
	case "":
		ar.token = tokenNone
	case s.cfg.botToken:
		ar.token = tokenBot
	case s.cfg.appToken:
		ar.token = tokenApp
	default:
		ar.token = tokenInvalid
	}

	handler, known := apiMethods[method]
	if !known {
		s.answer(w, &call, http.StatusOK, nil, ErrUnknownMethod)
		return
	}
	switch ar.token {
	case tokenNone:
		s.answer(w, &call, http.StatusOK, nil, ErrNotAuthed)
		return
	case tokenInvalid:
		s.answer(w, &call, http.StatusOK, nil, ErrInvalidAuth)
		return
	}
	if wantApp := method == "apps.connections.open"; wantApp != (ar.token == tokenApp) {
		s.answer(w, &call, http.StatusOK, nil, ErrNotAllowedTokenType)
		return
	}

	s.mu.Lock()
	if fs := s.faults[method]; len(fs) > 0 {
		f := fs[0]
		s.faults[method] = fs[1:]
		s.mu.Unlock()
		if f.rateLimit {
			secs := int(math.Ceil(f.retryAfter.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			s.answer(w, &call, http.StatusTooManyRequests, nil, ErrRateLimited)
			return
		}
		if f.status != 0 {
			s.answer(w, &call, f.status, nil, "service_unavailable")
			return
		}
		s.answer(w, &call, http.StatusOK, nil, apiError(f.err))
		return
	}
	if s.closed {
		s.mu.Unlock()
		s.answer(w, &call, http.StatusServiceUnavailable, nil, "service_unavailable")
		return
	}
	out, apiErr := handler(s, ar)
	// The call is recorded under the lock the handler ran in, so a test
	// woken by the message it posted already sees the call that posted it.
	s.recordLocked(&call, http.StatusOK, apiErr)
	s.mu.Unlock()
	s.write(w, http.StatusOK, out, apiErr)
}

// answer records the call and writes its Web API response.
func (s *Server) answer(w http.ResponseWriter, call *Call, status int, out map[string]any, apiErr apiError) {
	s.mu.Lock()
	s.recordLocked(call, status, apiErr)
	s.mu.Unlock()
	s.write(w, status, out, apiErr)
}

func (s *Server) recordLocked(call *Call, status int, apiErr apiError) {
	call.Status = status
	call.Error = string(apiErr)
	s.calls = append(s.calls, *call)
	s.notifyLocked()
}

// write writes a Web API response.
func (s *Server) write(w http.ResponseWriter, status int, out map[string]any, apiErr apiError) {
	if out == nil {
		out = map[string]any{}
	}
	if apiErr != "" {
		out = map[string]any{"ok": false, "error": string(apiErr)}
	} else {
		out["ok"] = true
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

// redactJSON replaces the accepted tokens wherever they occur in a body.
func redactJSON(body []byte, tokens ...string) json.RawMessage {
	out := slices.Clone(body)
	for _, t := range tokens {
		if t != "" {
			out = bytes.ReplaceAll(out, []byte(t), []byte("REDACTED"))
		}
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	return out
}

// ---- auth, users, conversations ----

func (s *Server) appsConnectionsOpen(_ *apiRequest) (map[string]any, apiError) {
	ticket := randomHex(16)
	s.tickets[ticket] = true
	wsURL := "ws" + strings.TrimPrefix(s.URL, "http") + "/link/?ticket=" + ticket + "&app_id=" + s.cfg.appID
	return map[string]any{"url": wsURL}, ""
}

func (s *Server) authTest(_ *apiRequest) (map[string]any, apiError) {
	return map[string]any{
		"url":     "https://" + s.cfg.teamName + ".slack.com/",
		"team":    s.cfg.teamName,
		"user":    s.cfg.botUserName,
		"team_id": s.cfg.teamID,
		"user_id": s.cfg.botUserID,
		"bot_id":  s.cfg.botID,
	}, ""
}

func (s *Server) usersInfo(r *apiRequest) (map[string]any, apiError) {
	u, ok := s.users[r.param("user")]
	if !ok {
		return nil, ErrUserNotFound
	}
	return map[string]any{"user": s.userJSONLocked(u)}, ""
}

func (s *Server) usersLookupByEmail(r *apiRequest) (map[string]any, apiError) {
	email := strings.TrimSpace(r.param("email"))
	if email == "" {
		return nil, ErrInvalidArguments
	}
	for _, u := range s.users {
		if !u.Deleted && u.Email != "" && strings.EqualFold(u.Email, email) {
			return map[string]any{"user": s.userJSONLocked(u)}, ""
		}
	}
	return nil, ErrUsersNotFound
}

// usergroupsList answers as Slack does: the workspace's groups sorted by
// id, without disabled groups and member lists unless asked for.
func (s *Server) usergroupsList(r *apiRequest) (map[string]any, apiError) {
	withUsers := r.param("include_users") == "true" || r.param("include_users") == "1"
	withDisabled := r.param("include_disabled") == "true" || r.param("include_disabled") == "1"
	withCount := r.param("include_count") == "true" || r.param("include_count") == "1"
	out := []map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(s.groups)) {
		g := s.groups[id]
		if g.Disabled && !withDisabled {
			continue
		}
		j := map[string]any{
			"id":           g.ID,
			"team_id":      s.cfg.teamID,
			"is_usergroup": true,
			"name":         g.Name,
			"handle":       g.Handle,
			"date_delete":  0,
		}
		if g.Disabled {
			j["date_delete"] = s.cfg.clock.Now().Unix()
		}
		if withUsers {
			j["users"] = append([]string{}, g.Users...)
		}
		if withCount {
			j["user_count"] = len(g.Users)
		}
		out = append(out, j)
	}
	return map[string]any{"usergroups": out}, ""
}

// usergroupsUsersList answers as Slack does: the member ids of one group;
// an unknown group, or a disabled one unless include_disabled is set, is
// no_such_subteam.
func (s *Server) usergroupsUsersList(r *apiRequest) (map[string]any, apiError) {
	id := r.param("usergroup")
	if id == "" {
		return nil, "missing_argument"
	}
	g, ok := s.groups[id]
	withDisabled := r.param("include_disabled") == "true" || r.param("include_disabled") == "1"
	if !ok || (g.Disabled && !withDisabled) {
		return nil, "no_such_subteam"
	}
	return map[string]any{"users": append([]string{}, g.Users...)}, ""
}

func (s *Server) conversationsOpen(r *apiRequest) (map[string]any, apiError) {
	if ch := r.param("channel"); ch != "" {
		return map[string]any{"channel": map[string]any{"id": ch}, "no_op": true, "already_open": true}, ""
	}
	var ids []string
	for id := range strings.SplitSeq(r.param("users"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, "users_list_not_supplied"
	}
	for _, id := range ids {
		if _, ok := s.users[id]; !ok {
			return nil, ErrUserNotFound
		}
	}
	var chID string
	if len(ids) == 1 {
		chID = "D" + ids[0]
	} else {
		sorted := slices.Sorted(slices.Values(ids))
		chID = "G" + strings.Join(sorted, "")
	}
	already := s.ims[chID]
	s.ims[chID] = true
	channel := map[string]any{"id": chID}
	if r.param("return_im") == "true" && len(ids) == 1 {
		channel["is_im"] = true
		channel["user"] = ids[0]
		channel["created"] = s.cfg.clock.Now().Unix()
		channel["is_open"] = true
	}
	out := map[string]any{"channel": channel}
	if already {
		out["no_op"] = true
		out["already_open"] = true
	}
	return out, ""
}

package sdsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const apiPrefix = "/api/v2"

// maxBody bounds request bodies.
const maxBody = 1 << 20

// fieldError is one entry of a validation error body.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Code    string `json:"code"`
}

type validationBody struct {
	Description string       `json:"description"`
	Errors      []fieldError `json:"errors"`
}

type codeMessage struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func codeBody(code, msg string) codeMessage { return codeMessage{code, msg} }

// reply is what a handler answers.
type reply struct {
	status   int
	body     any
	location string // path of a created resource (made absolute)
	next     string // raw query of the next page, for the Link header
	allow    string
}

func success(body any) reply { return reply{status: http.StatusOK, body: body} }

func created(body any, path string) reply {
	return reply{status: http.StatusCreated, body: body, location: path}
}

func noContent() reply { return reply{status: http.StatusNoContent} }

func notFound(what string) reply {
	return reply{status: http.StatusNotFound, body: codeBody("not_found", what+" not found")}
}

func invalid(errs ...fieldError) reply {
	return reply{status: http.StatusBadRequest, body: validationBody{"Validation failed", errs}}
}

func invalidValue(field, msg string) reply {
	return invalid(fieldError{field, msg, "invalid_value"})
}

func conflict(field, msg string) reply {
	return reply{status: http.StatusConflict, body: validationBody{"Validation failed", []fieldError{{field, msg, "duplicate_value"}}}}
}

// call is one authenticated request inside a handler; handlers run with the
// desk's lock held.
type call struct {
	d      *Desk
	st     *state
	r      *http.Request
	q      url.Values
	agent  *Agent
	now    time.Time
	params []string
	body   map[string]json.RawMessage
}

// id parses the i-th path parameter; ok is false when it is not a number.
func (c *call) id(i int) (int64, bool) {
	n, err := strconv.ParseInt(c.params[i], 10, 64)
	return n, err == nil && n > 0
}

type handler func(c *call) reply

type route struct {
	pattern []string // literal segments or "*"
	methods map[string]handler
}

// routes is ordered so that literal segments win over "*" ones.
func (d *Desk) routes() []route {
	r := func(p string, m map[string]handler) route { return route{strings.Split(p, "/"), m} }
	type H = map[string]handler
	return []route{
		r("tickets", H{"GET": listTickets, "POST": createTicket}),
		r("tickets/filter", H{"GET": filterTickets}),
		r("tickets/*", H{"GET": viewTicket, "PUT": updateTicket, "DELETE": deleteTicket}),
		// The documentation's curl example restores with PUT; its header, the
		// vendor schema and the vendor SDK's tests use GET: both are served
		// (sdclient/decisions.md).
		r("tickets/*/restore", H{"PUT": restoreTicket, "GET": restoreTicket}),
		r("tickets/*/conversations", H{"GET": listConversations}),
		r("tickets/*/reply", H{"POST": createReply}),
		r("tickets/*/notes", H{"POST": createNote}),
		r("tickets/*/time_entries", H{"GET": listTimeEntries}),
		r("conversations/*", H{"PUT": updateConversation, "DELETE": deleteConversation}),
		r("agents", H{"GET": listAgents, "POST": createAgent}),
		r("agents/me", H{"GET": viewMe}),
		r("agents/*", H{"GET": viewAgent, "PUT": updateAgent}),
		r("requesters", H{"GET": listRequesters, "POST": createRequester}),
		r("requesters/*", H{"GET": viewRequester, "PUT": updateRequester}),
		r("groups", H{"GET": listGroups, "POST": createGroup}),
		r("groups/*", H{"GET": viewGroup, "PUT": updateGroup, "DELETE": deleteGroup}),
		r("departments", H{"GET": listDepartments, "POST": createDepartment}),
		r("departments/*", H{"GET": viewDepartment, "PUT": updateDepartment, "DELETE": deleteDepartment}),
		r("assets", H{"GET": listAssets, "POST": createAsset}),
		r("assets/*", H{"GET": viewAsset, "PUT": updateAsset, "DELETE": deleteAsset}),
		r("changes", H{"GET": listChanges, "POST": createChange}),
		r("changes/filter", H{"GET": filterChanges}),
		r("changes/*", H{"GET": viewChange, "PUT": updateChange, "DELETE": deleteChange}),
		r("problems", H{"GET": listProblems, "POST": createProblem}),
		r("problems/*", H{"GET": viewProblem, "PUT": updateProblem, "DELETE": deleteProblem}),
		r("releases", H{"GET": listReleases, "POST": createRelease}),
		r("releases/*", H{"GET": viewRelease, "PUT": updateRelease, "DELETE": deleteRelease}),
		r("solutions/categories", H{"GET": listCategories}),
		r("solutions/folders", H{"GET": listFolders}),
		r("solutions/articles", H{"GET": listArticles}),
		r("products", H{"GET": listProducts}),
		r("workspaces", H{"GET": listWorkspaces}),
		r("vendors", H{"GET": listVendors}),
		r("ticket_fields", H{"GET": listFormFields}),
		r("ticket_form_fields", H{"GET": listFormFields}),
		r("canned_responses", H{"GET": listCannedResponses}),
	}
}

func match(routes []route, segs []string) (*route, []string) {
	for i := range routes {
		p := routes[i].pattern
		if len(p) != len(segs) {
			continue
		}
		var params []string
		okay := true
		for j, s := range p {
			if s == "*" {
				params = append(params, segs[j])
			} else if s != segs[j] {
				okay = false
				break
			}
		}
		if okay {
			return &routes[i], params
		}
	}
	return nil, nil
}

// Handler returns the desk's HTTP handler, serving the API under /api/v2.
// It works behind any server and is safe for concurrent requests.
func (d *Desk) Handler() http.Handler {
	routes := d.routes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.serve(routes, w, r) })
}

func (d *Desk) serve(routes []route, hw http.ResponseWriter, r *http.Request) {
	entry := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Time: d.now()}
	logged := false
	w := &statusRecorder{ResponseWriter: hw, onStatus: func(code int) {
		entry.Status, logged = code, true
		d.traffic.record(entry)
	}}
	defer func() {
		if !logged { // dropped, or the client gave up
			d.traffic.record(entry)
		}
	}()
	w.Header().Set("X-Freshservice-Api-Version", "latest=v2; requested=v2")
	// The desk's own clock, as every origin server with a clock sends it
	// (RFC 9110 6.6.1): deskbot starts its change feed from it.
	w.Header().Set("Date", entry.Time.UTC().Format(http.TimeFormat))

	if lat := d.traffic.getLatency(); lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-d.traffic.done:
			t.Stop()
		}
	}
	var dropAfter *Fault
	if f := d.traffic.takeFault(r); f != nil {
		entry.Fault = f.Kind
		if f.Kind != FaultDropAfter {
			d.serveFault(w, r, f)
			return
		}
		dropAfter = f
	}
	entry.Cost = requestCost(r)
	if !d.traffic.rate(w.Header(), d.now(), entry.Cost) {
		writeJSON(w, http.StatusTooManyRequests, codeBody("rate_limit_exceeded", "You have exceeded the limit of requests per minute"))
		entry.Cost = 0
		return
	}
	agent := d.authenticate(r)
	if agent == nil {
		writeJSON(w, http.StatusUnauthorized, codeBody("invalid_credentials", "You have to be logged in to perform this action."))
		return
	}
	entry.AgentID = agent.ID

	rest, found := strings.CutPrefix(r.URL.Path, apiPrefix+"/")
	if !found {
		writeJSON(w, http.StatusNotFound, codeBody("not_found", "no such path: "+r.URL.Path))
		return
	}
	rt, params := match(routes, strings.Split(strings.TrimSuffix(rest, "/"), "/"))
	if rt == nil {
		writeJSON(w, http.StatusNotFound, codeBody("not_found", "no such path: "+r.URL.Path))
		return
	}
	h, found := rt.methods[r.Method]
	if !found {
		allow := make([]string, 0, len(rt.methods))
		for m := range rt.methods {
			allow = append(allow, m)
		}
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, codeBody("method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+"; use "+strings.Join(allow, ", ")))
		return
	}
	if a := r.Header.Get("Accept"); a != "" && !acceptsJSON(a) {
		writeJSON(w, http.StatusNotAcceptable, codeBody("invalid_accept_header", "Accept must allow application/json"))
		return
	}
	if r.Method != http.MethodGet && agent.ReadOnly {
		writeJSON(w, http.StatusForbidden, codeBody("access_denied", "You are not authorized to perform this action."))
		return
	}
	c := &call{d: d, r: r, q: r.URL.Query(), agent: agent, params: params}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		body, rep := readBody(r)
		if rep != nil {
			d.write(w, r, *rep)
			return
		}
		c.body = body
	}
	d.mu.Lock()
	c.st = &d.st
	c.now = d.now()
	rep := h(c)
	d.mu.Unlock()
	if dropAfter != nil {
		d.serveFault(w, r, dropAfter)
		return
	}
	d.write(w, r, rep)
}

func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		switch mt {
		case "application/json", "*/*", "application/*", "":
			return true
		}
	}
	return false
}

// readBody decodes a flat JSON object body. An empty body is an empty
// object (e.g. PUT /tickets/{id}/restore); a non-JSON Content-Type is 415.
func readBody(r *http.Request) (map[string]json.RawMessage, *reply) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		rep := invalid(fieldError{"", "could not read the request body", "invalid_json"})
		return nil, &rep
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		rep := reply{status: http.StatusUnsupportedMediaType, body: codeBody("invalid_content_type", "Content-Type must be application/json, got "+strconv.Quote(r.Header.Get("Content-Type")))}
		return nil, &rep
	}
	if len(raw) > maxBody {
		rep := invalid(fieldError{"", "request body is larger than 1 MiB", "invalid_json"})
		return nil, &rep
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		msg := "request body must be a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		rep := invalid(fieldError{"", msg, "invalid_json"})
		return nil, &rep
	}
	return body, nil
}

// authenticate resolves the Basic credential's user (the API key; the
// password is ignored) to an agent.
func (d *Desk) authenticate(r *http.Request) *Agent {
	h := r.Header.Get("Authorization")
	enc, found := strings.CutPrefix(h, "Basic ")
	if !found {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return nil
	}
	key, _, _ := strings.Cut(string(raw), ":")
	d.mu.Lock()
	defer d.mu.Unlock()
	id, found := d.st.keys[key]
	if !found || key == "" {
		return nil
	}
	a, found := d.st.agents.get(id)
	if !found || !a.Active {
		return nil
	}
	c := *a
	return &c
}

func (d *Desk) write(w http.ResponseWriter, r *http.Request, rep reply) {
	if rep.location != "" {
		w.Header().Set("Location", baseURL(r)+apiPrefix+rep.location)
	}
	if rep.next != "" {
		w.Header().Set("Link", "<"+baseURL(r)+r.URL.Path+"?"+rep.next+`>; rel="next"`)
	}
	if rep.allow != "" {
		w.Header().Set("Allow", rep.allow)
	}
	if rep.status == http.StatusNoContent {
		w.WriteHeader(rep.status)
		return
	}
	writeJSON(w, rep.status, rep.body)
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(codeBody("internal_error", "encode response: "+err.Error()))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ---- pagination --------------------------------------------------------

// pageParams reads page (>= 1) and per_page (1..100, default 30).
func (c *call) pageParams() (page, per int, rep *reply) {
	page, per = 1, 30
	if s := c.q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			r := invalidValue("page", "It should be a/an Positive Integer")
			return 0, 0, &r
		}
		page = n
	}
	if s := c.q.Get("per_page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			r := invalidValue("per_page", "It should be a Positive Integer less than or equal to 100")
			return 0, 0, &r
		}
		per = n
	}
	return page, per, nil
}

// paginate cuts one page and says the next page's query when there is one.
func paginate[T any](c *call, items []T, page, per int) ([]T, string) {
	start := (page - 1) * per
	if start >= len(items) {
		return []T{}, ""
	}
	end := min(start+per, len(items))
	next := ""
	if end < len(items) {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(page+1))
		q.Set("per_page", strconv.Itoa(per))
		next = strings.ReplaceAll(q.Encode(), "+", "%20")
	}
	return items[start:end], next
}

// listPage answers a paginated list: {plural: [...]} plus a Link header.
func listPage[T any](c *call, plural string, items []T) reply {
	page, per, rep := c.pageParams()
	if rep != nil {
		return *rep
	}
	pg, next := paginate(c, items, page, per)
	return reply{status: http.StatusOK, body: map[string]any{plural: pg}, next: next}
}

// ---- body fields -------------------------------------------------------

// fields reads a body against a set of allowed keys; unknown keys are
// invalid_field errors and wrongly typed values datatype_mismatch errors.
type fields struct {
	body map[string]json.RawMessage
	errs []fieldError
}

func (f *fields) has(k string) bool { _, ok := f.body[k]; return ok }

func (f *fields) isNull(k string) bool {
	v, ok := f.body[k]
	return ok && string(bytes.TrimSpace(v)) == "null"
}

func (f *fields) fail(field, msg, code string) { f.errs = append(f.errs, fieldError{field, msg, code}) }

func (f *fields) only(allowed ...string) {
	for _, k := range slices.Sorted(maps.Keys(f.body)) {
		if !slices.Contains(allowed, k) {
			f.fail(k, "Unexpected/invalid field in request", "invalid_field")
		}
	}
}

func (f *fields) decode(k string, v any, want string) bool {
	raw, present := f.body[k]
	if !present {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		f.fail(k, "It should be a/an "+want, "datatype_mismatch")
		return false
	}
	return true
}

func (f *fields) str(k string, dst *string) bool {
	if f.isNull(k) {
		*dst = ""
		return true
	}
	return f.decode(k, dst, "String")
}

func (f *fields) num(k string, dst *int) bool {
	if f.isNull(k) {
		f.fail(k, "It should be a/an Positive Integer", "datatype_mismatch")
		return false
	}
	var n int
	if !f.decode(k, &n, "Positive Integer") {
		return false
	}
	*dst = n
	return true
}

// id reads a nullable id: null (and 0) become 0.
func (f *fields) id(k string, dst *int64) bool {
	if f.isNull(k) {
		*dst = 0
		return true
	}
	var n int64
	if !f.decode(k, &n, "Positive Integer") {
		return false
	}
	if n < 0 {
		f.fail(k, "It should be a/an Positive Integer", "datatype_mismatch")
		return false
	}
	*dst = n
	return true
}

func (f *fields) strs(k string, dst *[]string) bool {
	if f.isNull(k) {
		*dst = []string{}
		return true
	}
	var s []string
	if !f.decode(k, &s, "Array of Strings") {
		return false
	}
	*dst = nonNil(s)
	return true
}

func (f *fields) boolean(k string, dst *bool) bool { return f.decode(k, dst, "Boolean") }

func (f *fields) time(k string, dst *time.Time) bool {
	if f.isNull(k) {
		*dst = time.Time{}
		return true
	}
	var s string
	if !f.decode(k, &s, "date-time (YYYY-MM-DDTHH:MM:SSZ)") {
		return false
	}
	t, err := parseTime(s)
	if err != nil {
		f.fail(k, "It should be in the 'valid date-time' format (YYYY-MM-DDTHH:MM:SSZ)", "invalid_value")
		return false
	}
	*dst = t
	return true
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return norm(t), nil
		}
	}
	return time.Time{}, fmt.Errorf("parse time %q: want YYYY-MM-DDTHH:MM:SSZ", s)
}

// patch applies a flat JSON body to a record generically: keys must be the
// record's own JSON fields, read-only keys are refused, and the values must
// decode into the field's type.
func patch[T any](cur *T, body map[string]json.RawMessage, readOnly ...string) (*T, []fieldError) {
	raw, err := json.Marshal(cur)
	if err != nil {
		return nil, []fieldError{{"", err.Error(), "internal_error"}}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	var errs []fieldError
	for _, k := range slices.Sorted(maps.Keys(body)) {
		switch {
		case slices.Contains(readOnly, k):
			errs = append(errs, fieldError{k, "This field is read-only", "readonly_field"})
		case m[k] == nil:
			errs = append(errs, fieldError{k, "Unexpected/invalid field in request", "invalid_field"})
		default:
			var probe T
			one, _ := json.Marshal(map[string]json.RawMessage{k: body[k]})
			if err := json.Unmarshal(one, &probe); err != nil {
				var te *json.UnmarshalTypeError
				msg := "It has an invalid value"
				if errors.As(err, &te) {
					msg = "It should be a/an " + te.Type.String()
				}
				errs = append(errs, fieldError{k, msg, "datatype_mismatch"})
				continue
			}
			m[k] = body[k]
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	raw, _ = json.Marshal(m)
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, []fieldError{{"", err.Error(), "invalid_value"}}
	}
	return &out, nil
}

// decodeFilterQuery reads the query parameter of the filter endpoints from
// the raw query string with path unescaping, so "%20" is a space and "+"
// stays a literal "+", which the filter grammar rejects: the real desk wants
// spaces encoded as %20.
func decodeFilterQuery(raw string) (string, bool) {
	for _, part := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		if k != "query" {
			continue
		}
		s, err := url.PathUnescape(v)
		if err != nil {
			return v, true
		}
		return s, true
	}
	return "", false
}

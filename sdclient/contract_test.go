package sdclient_test

//go:generate go run ./internal/schemadigest -in ../../shared/reference/freshservice-v2.0.1.swagger.yml -licence ../../shared/reference/freshservice-v2.0.1.swagger.LICENSE -out testdata/contract/digest.json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/deskbot/deskbot/sdclient"
)

// The contract check, after go-github's openapi_operations.yaml: every
// operation a client method names must be an operation of the vendor's
// schema (testdata/contract/digest.json, generated from the reference copy by
// internal/schemadigest) or a listed exception, and every request the client
// sends in the end-to-end tests and every response sdsim serves there is
// validated against the digest (see contractTransport, installed by e2e).
// The digest is a JSON Schema document; the validator is
// santhosh-tekuri/jsonschema. Objects are closed (a field the schema does not
// name fails) and every field may be null (the desk sends blank fields as
// null): that is our reading, applied here, not in the digest. The
// exceptions below are the decisions of decisions.md, by name and reason.

// routeAlias maps one of our operations ("METHOD /path" with {} for ids) to
// the vendor schema's, or to "" when the schema has no such operation.
type routeAlias struct {
	vendor string // "" = not in the schema: requests and responses unchecked
	reason string
}

var routeAliases = map[string]routeAlias{
	"GET /tickets/filter":      {"", "not in the schema; description: GET /tickets/filter"},
	"GET /changes/filter":      {"", "not in the schema; description: GET /changes/filter"},
	"GET /agents/me":           {"", "not in the schema; freshservice-api.md §1 (used by independent clients)"},
	"GET /ticket_form_fields":  {"", "not in the schema; description lists it"},
	"GET /ticket_fields":       {"", "not in the schema (only POST /ticket_fields/sources); description lists it"},
	"GET /workspaces":          {"", "not in the schema; the real API lists workspaces (decisions.md, after the table)"},
	"PUT /tickets/{}/restore":  {"GET /tickets/{}/restore", "decision 6: docs curl uses PUT, schema GET; sdsim serves both"},
	"PUT /conversations/{}":    {"PUT /tickets/{}/conversations/{}", "decision 7: description says /conversations/{id}"},
	"DELETE /conversations/{}": {"DELETE /tickets/{}/conversations/{}", "decision 7: description says /conversations/{id}"},
	"GET /groups":              {"GET /agent_groups", "decision 4: description says /groups"},
	"POST /groups":             {"POST /agent_groups", "decision 4"},
	"GET /groups/{}":           {"GET /agent_groups/{}", "decision 4"},
	"PUT /groups/{}":           {"PUT /agent_groups/{}", "decision 4"},
	"DELETE /groups/{}":        {"DELETE /agent_groups/{}", "decision 4"},
	"GET /problems/{}":         {"GET /problem/{}", "decision 16: schema says /problem/{id}"},
	"PUT /problems/{}":         {"PUT /problem/{}", "decision 16"},
	"DELETE /problems/{}":      {"DELETE /problem/{}", "decision 16"},
	"GET /releases/{}":         {"GET /release/{}", "decision 16: schema says /release/{id}"},
	"PUT /releases/{}":         {"PUT /release/{}", "decision 16"},
	"DELETE /releases/{}":      {"DELETE /release/{}", "decision 16"},
}

// fieldPatch sets one property of a digest schema before it is compiled:
// an envelope key or a field whose name or type we decided differently, or a
// field the documentation has and the schema lacks.
type fieldPatch struct {
	def, prop string
	schema    any // nil: any value
	reason    string
}

func ref(def string) map[string]any { return map[string]any{"$ref": "#/$defs/def." + def} }
func arrayOf(s any) map[string]any  { return map[string]any{"type": "array", "items": s} }

var (
	intArray  = arrayOf(map[string]any{"type": "integer"})
	strArray  = arrayOf(map[string]any{"type": "string"})
	anyObject = map[string]any{"type": "object"}
)

// extra lists fields the documentation's examples show and the schema lacks,
// by schema definition; they may carry any JSON value.
var extra = map[string]struct {
	fields []string
	reason string
}{
	"ticket": {[]string{"workspace_id", "urgency", "impact", "requested_for_id", "responder_id", "group_id", "department_id",
		"email_config_id", "sla_policy_id", "category", "sub_category", "item_category", "deleted", "to_emails",
		"resolution_notes", "resolution_notes_html", "created_within_business_hours", "approval_status", "approval_status_name",
		"email", "conversations", "requester", "requested_for", "stats", "problem", "assets", "related_tickets"},
		"docs #ticket_attributes, #view_a_ticket (include= embeds); description ticket fields"},
	"conversation":      {[]string{"private", "support_email"}, "docs #list_all_conversations; description: the private flag"},
	"reply":             {[]string{"incoming", "private", "source", "support_email"}, "docs #create_a_reply"},
	"ticket_note":       {[]string{"ticket_id", "source", "support_email", "from_email", "to_emails", "cc_emails", "bcc_emails"}, "docs #add_note"},
	"agent":             {[]string{"department_ids", "address", "time_format", "background_information", "can_see_all_tickets_from_associated_departments", "member_of_pending_approval", "observer_of_pending_approval", "workspace_ids", "custom_fields"}, "docs #agent_attributes, #view_an_agent; description: workspace_ids"},
	"requester":         {[]string{"is_agent", "time_format", "created_at", "updated_at"}, "docs #requester_attributes (decision 8: created_at, not created_time)"},
	"agent_group":       {[]string{"unassigned_for", "workspace_id", "leaders", "members_pending_approval", "observers_pending_approval", "leaders_pending_approval"}, "docs #view_a_group"},
	"department":        {[]string{"workspace_id"}, "docs #view_a_department"},
	"asset":             {[]string{"workspace_id"}, "docs #view_an_asset"},
	"change":            {[]string{"workspace_id"}, "docs #view_a_change"},
	"problem":           {[]string{"workspace_id", "description", "description_text"}, "docs #view_a_problem"},
	"release":           {[]string{"workspace_id", "description", "description_text"}, "docs #view_a_release"},
	"solution_category": {[]string{"visible_in_portals", "workspace_id", "created_at", "updated_at"}, "docs #view_list_of_solution_categories"},
	"solution_folder":   {[]string{"workspace_id", "created_at", "updated_at", "approval_settings", "manage_by_group_ids", "department_ids"}, "docs #view_list_of_solution_folder"},
	"solution_article": {[]string{"workspace_id", "created_at", "updated_at", "keywords", "agent_id", "approval_status", "review_date", "modified_by", "modified_at", "inserted_into_tickets", "url", "attachments"},
		"docs #view_list_of_solution_article (decision 9: created_at, keywords)"},
	"product":         {[]string{"status", "mode_of_procurement", "description_text", "created_at", "updated_at"}, "docs #view_a_product (decision 10: status and mode_of_procurement are strings)"},
	"vendor":          {[]string{"address", "custom_fields", "created_at", "updated_at"}, "docs #view_a_vendor (decision 11: address nested)"},
	"canned_response": {[]string{"workspace_id"}, "docs #show_a_canned_response"},
	"time_entry":      {[]string{"workspace_id"}, "docs #view_a_time_entry"},
}

var patches = []fieldPatch{
	// The error body (err.1, the {"errors": [...]} of every 4xx and 5xx).
	{"err.1", "description", map[string]any{"type": "string"}, "freshservice-api.md §3: docs #filter_agents show {\"description\":\"Validation failed\",\"errors\":[...]}; the schema's own def.BadRequest (GET /assets 400) has description"},
	{"err.1", "code", map[string]any{"type": "string"}, "freshservice-api.md §3: 401/403 bodies are {\"code\",\"message\"} in the Freshworks family (docs \"Error Codes\" list the codes)"},
	{"err.1", "message", map[string]any{"type": "string"}, "freshservice-api.md §3: 401/403 bodies are {\"code\",\"message\"}, as the 429 and 5xx answers of the Freshworks family"},
	{"op.GET /tickets/{ticket_id}.200", "ticket", ref("ticket"), "decision 15: schema types the view envelope as tickets[]; SDK updateTicket200 and docs use ticket{}"},
	{"op.GET /agent_groups.200", "groups", arrayOf(ref("agent_group")), "decisions 4, 15: schema names the list envelope departments"},
	{"op.GET /agent_groups/{agent_group_id}.200", "group", ref("agent_group"), "decision 4: docs #view_a_group envelope group"},
	{"op.POST /agent_groups.200", "group", ref("agent_group"), "decision 4: docs #create_a_group envelope group"},
	{"op.PUT /agent_groups/{agent_group_id}.200", "group", ref("agent_group"), "decision 4: docs #update_a_group envelope group"},
	{"op.POST /tickets/{ticket_id}/notes.201", "conversation", ref("conversation"), "docs #add_note: a note comes back as a conversation; the schema's note lacks private, ticket_id, to_emails"},
	{"op.GET /assets.200", "assets", arrayOf(ref("asset")), "decision 15: schema names the list envelope asset (one object); docs #list_all_assets: assets[]"},
	{"op.GET /products.200", "products", arrayOf(ref("product")), "decision 15: schema names the list envelope product; docs #list_all_products: products[]"},
	{"op.GET /vendors.200", "vendors", arrayOf(ref("vendor")), "decision 15: schema names the list envelope vendor; docs #list_all_vendors: vendors[]"},
	{"op.GET /solutions/categories.200", "categories", arrayOf(ref("solution_category")), "decision 1: docs envelope categories"},
	{"op.GET /solutions/folders.200", "folders", arrayOf(ref("solution_folder")), "decision 1: docs envelope folders"},
	{"op.GET /solutions/articles.200", "articles", arrayOf(ref("solution_article")), "decision 1: docs envelope articles"},
	{"def.solution_folder", "visibility", map[string]any{"type": "integer"}, "decision 2: docs examples send and return an integer"},
	{"def.agent_group", "members", intArray, "decision 3: docs examples use numbers"},
	{"def.agent_group", "observers", intArray, "decision 3"},
	{"def.agent_group", "leaders", intArray, "decision 3"},
	{"def.agent", "roles", arrayOf(map[string]any{"type": "object"}), "docs #agent_attributes: roles[].role_id, assignment_scope, groups (same as role_assignment)"},
	{"def.time_entry", "note", map[string]any{"type": "string"}, "schema format text"},
	{"def.ticket", "custom_fields", anyObject, "custom field values are any JSON"},
	{"def.canned_response", "attachments", arrayOf(ref("attachment")), "schema form"},
	{"def.attachment", "created_at", nil, "docs examples carry created_at/updated_at"},
	{"def.attachment", "updated_at", nil, "docs examples"},
	{"def.conversation", "bcc_emails", strArray, "schema form; null allowed"},
}

type digestOp struct {
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Request   string            `json:"request"`
	Responses map[string]string `json:"responses"`
	Errors    map[string]string `json:"errors"` // 4xx/5xx status -> body
}

type contract struct {
	ops     map[string]digestOp // "METHOD /path/{}" -> op
	schemas map[string]*jsonschema.Schema
}

var templateParam = regexp.MustCompile(`\{[^}]*\}`)

func normalize(method, path string) string {
	return method + " " + templateParam.ReplaceAllString(path, "{}")
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	raw, err := os.ReadFile(filepath.Join("testdata", "contract", "digest.json"))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("digest: %w", err)
	}
	var ops []digestOp
	b, _ := json.Marshal(doc["operations"])
	if err := json.Unmarshal(b, &ops); err != nil {
		return nil, fmt.Errorf("digest operations: %w", err)
	}
	defs, _ := doc["$defs"].(map[string]any)
	all := slices.Clone(patches)
	for def, e := range extra {
		for _, f := range e.fields {
			all = append(all, fieldPatch{"def." + def, f, nil, e.reason})
		}
	}
	for _, p := range all {
		s, ok := defs[p.def].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("patch %s.%s: no such schema in the digest", p.def, p.prop)
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
		}
		if p.schema == nil {
			props[p.prop] = map[string]any{}
		} else {
			props[p.prop] = p.schema
		}
	}
	// Operation schemas get keys without '/' and ' ' for JSON pointers.
	c := &contract{ops: map[string]digestOp{}, schemas: map[string]*jsonschema.Schema{}}
	safe := map[string]string{}
	for k, v := range defs {
		if strings.HasPrefix(k, "op.") || strings.HasPrefix(k, "err.") {
			nk := fmt.Sprintf("op%d", len(safe))
			safe[k] = nk
			delete(defs, k)
			defs[nk] = v
		}
	}
	for _, v := range defs {
		closeAndNull(v)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("digest.json", doc); err != nil {
		return nil, err
	}
	compile := func(key string) error {
		if key == "" || c.schemas[key] != nil {
			return nil
		}
		s, err := comp.Compile("digest.json#/$defs/" + safe[key])
		if err != nil {
			return fmt.Errorf("compile %s: %w", key, err)
		}
		c.schemas[key] = s
		return nil
	}
	for _, op := range ops {
		c.ops[normalize(op.Method, op.Path)] = op
		if err := compile(op.Request); err != nil {
			return nil, err
		}
		for _, r := range op.Responses {
			if err := compile(r); err != nil {
				return nil, err
			}
		}
		for _, r := range op.Errors {
			if err := compile(r); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
})

// closeAndNull closes every object schema that names its properties and lets
// every property be null.
func closeAndNull(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if _, set := m["additionalProperties"]; !set {
			m["additionalProperties"] = false
		}
		for k, p := range props {
			closeAndNull(p)
			props[k] = map[string]any{"anyOf": []any{map[string]any{"type": "null"}, p}}
		}
	}
	if it, ok := m["items"]; ok {
		closeAndNull(it)
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, x := range all {
			closeAndNull(x)
		}
	}
}

// lookup finds the vendor operation for one of ours; ok is false when the
// operation is neither in the digest nor excepted.
func (c *contract) lookup(ours string) (op digestOp, checked, ok bool) {
	if a, found := routeAliases[ours]; found {
		if a.vendor == "" {
			return digestOp{}, false, true
		}
		op, ok = c.ops[a.vendor]
		return op, ok, ok
	}
	op, ok = c.ops[ours]
	return op, ok, ok
}

// template turns a request path into our operation form: numeric segments
// become {}.
func template(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = "{}"
		}
	}
	return method + " /" + strings.Join(segs, "/")
}

// contractTransport validates each exchange the client has with sdsim: of
// one that succeeds (2xx), the request body against the operation's request
// schema and the response body against its response schema; of one that
// fails (4xx, 5xx), the error body against the operation's error schema
// (validateError).
type contractTransport struct {
	t     testing.TB
	inner http.RoundTripper
}

func (ct *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := ct.inner.RoundTrip(req)
	if err != nil || resp.StatusCode/100 == 3 {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		// A body cut short (a dropped connection) is the client's
		// business, not the contract's: hand it on as it came.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(respBody), errReader{err}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	path := req.URL.Path
	if i := strings.Index(path, "/api/v2/"); i >= 0 {
		path = path[i+len("/api/v2"):]
	}
	check := validateExchange
	if resp.StatusCode >= 400 {
		check = func(method, path string, status int, _, respBody []byte) []string {
			return validateError(method, path, status, respBody)
		}
	}
	for _, v := range check(req.Method, path, resp.StatusCode, reqBody, respBody) {
		ct.t.Errorf("contract: %s", v)
	}
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// contractOp is the operation of the contract that method and path
// call, by its template (ours); problem says why there is none.
func contractOp(method, path string) (c *contract, ours string, op digestOp, checked bool, problem []string) {
	c, err := loadContract()
	if err != nil {
		return nil, "", digestOp{}, false, []string{err.Error()}
	}
	ours = template(method, path)
	op, checked, ok := c.lookup(ours)
	if !ok {
		return nil, ours, digestOp{}, false, []string{ours + ": no operation in the digest and no listed exception"}
	}
	return c, ours, op, checked, nil
}

// validateError checks the body of a 4xx or 5xx answer against the error
// schema the operation gives that status, else its first error schema
// (the vendor lists the common statuses, not 404 or 409 everywhere). An
// operation the schema lacks, or one without error schemas, is unchecked;
// so is an empty body.
func validateError(method, path string, status int, body []byte) []string {
	c, ours, op, checked, problem := contractOp(method, path)
	if problem != nil {
		return problem
	}
	if !checked || len(op.Errors) == 0 || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	key := op.Errors[fmt.Sprint(status)]
	if key == "" {
		key = op.Errors[slices.Sorted(maps.Keys(op.Errors))[0]]
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []string{fmt.Sprintf("%s: %d error body: %v", ours, status, err)}
	}
	if err := c.schemas[key].Validate(v); err != nil {
		return []string{fmt.Sprintf("%s: %d error body: %v", ours, status, err)}
	}
	return nil
}

func validateExchange(method, path string, status int, reqBody, respBody []byte) []string {
	c, ours, op, checked, problem := contractOp(method, path)
	if problem != nil {
		return problem
	}
	if !checked {
		return nil
	}
	var out []string
	check := func(what, key string, body []byte) {
		if len(bytes.TrimSpace(body)) == 0 {
			return
		}
		if key == "" {
			out = append(out, fmt.Sprintf("%s: %s body, but the digest has none", ours, what))
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %s body: %v", ours, what, err))
			return
		}
		if err := c.schemas[key].Validate(v); err != nil {
			out = append(out, fmt.Sprintf("%s: %s: %v", ours, what, err))
		}
	}
	check("request", op.Request, reqBody)
	// The schema's 2xx codes are loose (200 for creates the docs answer
	// 201): the body of the same code is used, else the first 2xx body.
	respKey := op.Responses[fmt.Sprint(status)]
	if respKey == "" {
		for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
			if op.Responses[code] != "" {
				respKey = op.Responses[code]
				break
			}
		}
	}
	if len(bytes.TrimSpace(respBody)) > 0 && respKey == "" && len(op.Responses) == 0 {
		out = append(out, fmt.Sprintf("%s: response body, but the digest lists no 2xx response", ours))
	} else {
		check("response", respKey, respBody)
	}
	return out
}

// opInDoc finds "(METHOD /path" in a method's doc comment, the way go-github
// names each method's operation.
var opInDoc = regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) (/[^\s),;?]*)`)

// TestContractMethods: every exported method of a service names its
// operation in its doc comment, and that operation is in the digest or a
// listed exception. ListAll* and FilterAll walk the pages of their page
// method and are checked through it.
func TestContractMethods(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	n := 0
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			recv, ok := star.X.(*ast.Ident)
			if !ok || !strings.HasSuffix(recv.Name, "Service") {
				continue
			}
			name := strings.TrimSuffix(recv.Name, "Service") + "." + fn.Name.Name
			if strings.HasPrefix(fn.Name.Name, "ListAll") || fn.Name.Name == "FilterAll" {
				continue
			}
			n++
			m := opInDoc.FindAllStringSubmatch(fn.Doc.Text(), -1)
			if len(m) == 0 {
				t.Errorf("%s: its doc comment names no operation (METHOD /path)", name)
				continue
			}
			for _, sm := range m {
				ours := normalize(sm[1], sm[2])
				if _, _, ok := c.lookup(ours); !ok {
					t.Errorf("%s: %s is not in the digest and not a listed exception", name, ours)
				}
			}
		}
	}
	// The methods the services have from the generic resource types.
	for name, op := range sdclient.ResourceOperations() {
		n++
		method, path, _ := strings.Cut(op, " ")
		if _, _, ok := c.lookup(normalize(method, path)); !ok {
			t.Errorf("%s: %s is not in the digest and not a listed exception", name, normalize(method, path))
		}
	}
	if n < 50 {
		t.Errorf("found only %d service methods", n)
	}
}

// TestContractExceptionsUsed keeps the exception lists honest: every alias
// names a digest operation, every patch a digest schema (loadContract fails
// otherwise).
func TestContractExceptionsUsed(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	for ours, a := range routeAliases {
		if a.reason == "" {
			t.Errorf("%s: no reason", ours)
		}
		if a.vendor != "" {
			if _, ok := c.ops[a.vendor]; !ok {
				t.Errorf("%s: alias %s is not in the digest", ours, a.vendor)
			}
		}
	}
	for _, p := range patches {
		if p.reason == "" {
			t.Errorf("%s.%s: no reason", p.def, p.prop)
		}
	}
	if len(c.ops) < 200 {
		t.Errorf("digest has %d operations", len(c.ops))
	}
}

// TestContractCatches shows the check failing on what it exists to catch.
func TestContractCatches(t *testing.T) {
	tests := []struct {
		name, method, path, req, resp string
		want                          string // substring of a violation; "" = none
	}{
		{"valid ticket", "GET", "/tickets/1", "", `{"ticket":{"id":1,"subject":"x","status":2,"tags":[],"responder_id":null}}`, ""},
		{"renamed field", "GET", "/tickets/1", "", `{"ticket":{"id":1,"subjekt":"x"}}`, "subjekt"},
		{"wrong type", "GET", "/tickets/1", "", `{"ticket":{"id":1,"status":"open"}}`, "status"},
		{"wrong envelope", "GET", "/agents/5", "", `{"agents":{"id":5}}`, "agents"},
		{"group members as strings", "GET", "/groups/3", "", `{"group":{"id":3,"members":["1"]}}`, "members"},
		{"unknown operation", "GET", "/tickets/1/associated-assets", "", `{}`, "no operation"},
		{"excepted operation", "GET", "/tickets/filter", "", `{"tickets":[],"total":0}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validateExchange(tt.method, tt.path, 200, []byte(tt.req), []byte(tt.resp))
			wantViolation(t, got, tt.want)
		})
	}
}

// wantViolation checks the violations got: none when want is "", else one
// mentioning want.
func wantViolation(t *testing.T, got []string, want string) {
	t.Helper()
	if want == "" {
		if len(got) > 0 {
			t.Errorf("violations: %v", got)
		}
		return
	}
	if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, want) }) {
		t.Errorf("want a violation mentioning %q, got %v", want, got)
	}
}

// TestContractCatchesErrorBodies: the desk's error bodies are held to the
// vendor's error schema (with the documented description, code and
// message), like its success bodies.
func TestContractCatchesErrorBodies(t *testing.T) {
	tests := []struct {
		name, method, path string
		status             int
		body               string
		want               string // substring of a violation; "" = none
	}{
		{"validation failed", "PUT", "/tickets/1", 400, `{"description":"Validation failed","errors":[{"field":"status","message":"It should be one of the choice value","code":"invalid_value"}]}`, ""},
		{"401 code and message", "GET", "/tickets/1", 401, `{"code":"invalid_credentials","message":"You have to be logged in to perform this action."}`, ""},
		{"404 not listed: the op's first error schema", "GET", "/tickets/1", 404, `{"code":"not_found","message":"ticket 1 not found"}`, ""},
		{"429 message", "GET", "/agents/5", 429, `{"message":"You have exceeded the limit of requests per minute"}`, ""},
		{"empty body", "DELETE", "/tickets/1", 404, ``, ""},
		{"unknown key", "GET", "/tickets/1", 400, `{"error":"bad"}`, "error"},
		{"errors not a list", "GET", "/tickets/1", 400, `{"errors":"bad"}`, "errors"},
		{"renamed item field", "PUT", "/tickets/1", 400, `{"errors":[{"fieldname":"status","code":"invalid_value"}]}`, "fieldname"},
		{"item code not a string", "PUT", "/tickets/1", 400, `{"errors":[{"field":"status","code":4}]}`, "code"},
		{"not JSON", "GET", "/tickets/1", 500, `<html>oops</html>`, "error body"},
		{"excepted operation", "GET", "/tickets/filter", 400, `{"anything":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validateError(tt.method, tt.path, tt.status, []byte(tt.body))
			wantViolation(t, got, tt.want)
		})
	}
}

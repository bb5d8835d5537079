package sdclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
)

const (
	defaultUserAgent   = "deskbot-sdclient/1"
	defaultRate        = 60
	defaultMaxAttempts = 4
	defaultBackoffBase = 500 * time.Millisecond
	defaultBackoffMax  = 30 * time.Second
	// defaultRetryAfter is used when a 429 carries no usable Retry-After:
	// the desk's window is a minute.
	defaultRetryAfter = 60 * time.Second
	maxErrorBody      = 1 << 20
	// defaultMaxResponse caps a 2xx body (WithMaxResponseBytes): a page of
	// 100 tickets with their descriptions is well under 1 MiB, so 32 MiB
	// only stops a desk or proxy gone wrong from filling the memory.
	defaultMaxResponse = 32 << 20
	// maxRetryAfterSecs caps an absurd Retry-After (a day) so it cannot
	// overflow a Duration; ctx deadlines bound real waits anyway.
	maxRetryAfterSecs = 86400
	apiPrefix         = "/api/v2"
)

// Client talks to one desk account. It is safe for concurrent use. A Client
// from New sends background requests, which may use the budget minus the
// reserve; Interactive returns a twin whose requests may use all of it and
// are served first.
type Client struct {
	base        string // the API root, ending in /api/v2/
	authHeader  string
	apiKey      string
	httpClient  *http.Client
	userAgent   string
	logger      *slog.Logger
	clock       clockwork.Clock
	sleep       func(ctx context.Context, d time.Duration) error
	maxAttempts int
	backoffBase time.Duration
	backoffMax  time.Duration
	limiter     *limiter
	listLimiter *limiter // ticket lists, when limited separately
	interactive bool
	maxResponse int64 // the largest 2xx body read and decoded
	// stop, when set (StopWith), ends the waits of requests not yet sent.
	stop context.Context

	// Services, one per resource.
	Tickets          *TicketsService
	Conversations    *ConversationsService
	Assets           *AssetsService
	Agents           *AgentsService
	Requesters       *RequestersService
	Groups           *GroupsService
	Departments      *DepartmentsService
	Changes          *ChangesService
	Problems         *ProblemsService
	Releases         *ReleasesService
	Solutions        *SolutionsService
	Products         *ProductsService
	Workspaces       *WorkspacesService
	Vendors          *VendorsService
	TicketFields     *TicketFieldsService
	TicketFormFields *TicketFormFieldsService
	TimeEntries      *TimeEntriesService
	CannedResponses  *CannedResponsesService
}

// service is the common part of every resource service.
type service struct{ client *Client }

// New returns a client for the desk at baseURL (the account's address; the
// client adds /api/v2) that authenticates with apiKey. Invalid arguments or
// options are reported as errors.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if apiKey == "" {
		return nil, errors.New("sdclient: new client: API key is empty")
	}
	if strings.ContainsAny(apiKey, ":\r\n\t ") {
		return nil, errors.New("sdclient: new client: API key must not contain ':' or white space")
	}
	cfg := config{
		rate:        defaultRate,
		maxAttempts: defaultMaxAttempts,
		userAgent:   defaultUserAgent,
		backoffBase: defaultBackoffBase,
		backoffMax:  defaultBackoffMax,
		maxResponse: defaultMaxResponse,
	}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sdclient: new client: nil option")
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sdclient: new client: %w", err)
	}
	if !cfg.given.reserve {
		cfg.reserve = max(1, cfg.rate/5)
	}
	if cfg.reserve >= cfg.rate {
		return nil, fmt.Errorf("sdclient: new client: reserve %d must be less than the rate %d per minute", cfg.reserve, cfg.rate)
	}
	if cfg.httpClient == nil {
		cfg.httpClient = &http.Client{Timeout: 60 * time.Second}
	}
	// A copy of the caller's client with the redirect policy (redirect.go).
	cfg.httpClient = withRedirectPolicy(cfg.httpClient, base)
	if cfg.metrics != nil {
		requests, err := registerRequests(cfg.metrics)
		if err != nil {
			return nil, fmt.Errorf("sdclient: new client: %w", err)
		}
		cfg.httpClient.Transport = instrument(cfg.httpClient.Transport, requests)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.clock == nil {
		cfg.clock = clockwork.NewRealClock()
	}
	c := &Client{
		base:        base.String(),
		apiKey:      apiKey,
		authHeader:  "Basic " + base64.StdEncoding.EncodeToString([]byte(apiKey+":X")),
		httpClient:  cfg.httpClient,
		userAgent:   cfg.userAgent,
		logger:      cfg.logger,
		clock:       cfg.clock,
		sleep:       cfg.sleep,
		maxAttempts: cfg.maxAttempts,
		backoffBase: cfg.backoffBase,
		backoffMax:  cfg.backoffMax,
		limiter:     newLimiter(cfg.clock, cfg.rate, cfg.reserve, time.Minute),
		maxResponse: cfg.maxResponse,
	}
	if cfg.listRate > 0 {
		c.listLimiter = newLimiter(cfg.clock, cfg.listRate, max(1, cfg.listRate/5), time.Minute)
	}
	if c.sleep == nil {
		c.sleep = c.clockSleep
	}
	c.initServices()
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url.Parse errors quote the input, which could hold credentials.
		return nil, errors.New("sdclient: new client: base URL is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("sdclient: new client: base URL must start with https:// (or http://), got scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("sdclient: new client: base URL has no host")
	}
	if u.User != nil {
		return nil, errors.New("sdclient: new client: base URL must not contain user info; pass the API key separately")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("sdclient: new client: base URL must not have a query or fragment")
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, apiPrefix) {
		p += apiPrefix
	}
	u.Path = p + "/"
	u.RawPath = ""
	return u, nil
}

func (c *Client) initServices() {
	s := service{client: c}
	c.Tickets = (*TicketsService)(&s)
	c.Conversations = (*ConversationsService)(&s)
	c.Solutions = (*SolutionsService)(&s)
	c.TicketFields = (*TicketFieldsService)(&s)
	c.TicketFormFields = (*TicketFormFieldsService)(&s)
	c.TimeEntries = (*TimeEntriesService)(&s)

	// The services of plain collections: what each lists, reads and
	// writes, and how a create body is checked (crud.go).
	agents := newResource(c, "agent", "agents")
	c.Agents = &AgentsService{listOf[Agent, AgentListOptions](agents), editOf[Agent](agents, checkAgent)}
	assets := newResource(c, "asset", "assets")
	c.Assets = &AssetsService{listOf[Asset, AssetListOptions](assets), editOf[Asset](assets, checkAsset), deleting{assets}}
	requesters := newResource(c, "requester", "requesters")
	c.Requesters = &RequestersService{listOf[Requester, RequesterListOptions](requesters), editOf[Requester](requesters, checkRequester)}
	groups := newResource(c, "group", "groups")
	c.Groups = &GroupsService{listOf[Group, ListOptions](groups), editOf[Group](groups, checkGroup), deleting{groups}}
	depts := newResource(c, "department", "departments")
	c.Departments = &DepartmentsService{listOf[Department, ListOptions](depts), editOf[Department](depts, checkDepartment), deleting{depts}}
	changes := newResource(c, "change", "changes")
	c.Changes = &ChangesService{listOf[Change, ChangeListOptions](changes), editOf[Change](changes, checkChange), deleting{changes}}
	problems := newResource(c, "problem", "problems")
	c.Problems = &ProblemsService{listOf[Problem, ListOptions](problems), editOf[Problem](problems, checkProblem), deleting{problems}}
	releases := newResource(c, "release", "releases")
	c.Releases = &ReleasesService{listOf[Release, ListOptions](releases), editOf[Release](releases, checkRelease), deleting{releases}}
	c.Products = &ProductsService{listOf[Product, ListOptions](newResource(c, "product", "products"))}
	c.Workspaces = &WorkspacesService{listOf[Workspace, ListOptions](newResource(c, "workspace", "workspaces"))}
	c.Vendors = &VendorsService{listOf[Vendor, ListOptions](newResource(c, "vendor", "vendors"))}
	canned := resource{client: c, plural: "canned responses", coll: "canned_responses", listKey: "canned_responses"}
	c.CannedResponses = &CannedResponsesService{listOf[CannedResponse, ListOptions](canned)}
}

// Interactive returns a client sharing this client's rate limiter, HTTP
// client and settings whose requests may use the whole budget, reserve
// included, and are served before waiting background requests. Use it for
// requests a person is waiting for (slash commands, button clicks).
func (c *Client) Interactive() *Client { return c.twin(true) }

// Background returns the background twin of an interactive client (c itself
// when it already is one).
func (c *Client) Background() *Client { return c.twin(false) }

// twin returns c, or a copy of it with its own services, whose requests are
// interactive or not.
func (c *Client) twin(interactive bool) *Client {
	if c.interactive == interactive {
		return c
	}
	t := *c
	t.interactive = interactive
	t.initServices()
	return &t
}

// BackgroundBudget is how many requests per minute background callers
// (polling) may send: the configured rate minus the interactive reserve.
// Schedulers plan their intervals with it.
func (c *Client) BackgroundBudget() int { return c.limiter.rate - c.limiter.reserve }

// BackgroundListBudget is how many ticket lists per minute background
// callers may send (see WithListRatePerMinute); 0 when listing has no
// budget of its own.
func (c *Client) BackgroundListBudget() int {
	if c.listLimiter == nil {
		return 0
	}
	return c.listLimiter.rate - c.listLimiter.reserve
}

// isTicketList reports whether a request lists tickets, which the desk
// limits separately from the rest.
func isTicketList(method, path string) bool {
	p := strings.Trim(path, "/")
	return method == http.MethodGet && (p == "tickets" || p == "tickets/filter")
}

// IsInteractive reports whether requests of c draw on the reserve.
func (c *Client) IsInteractive() bool { return c.interactive }

// BaseURL returns the API root the client sends to (ending in /api/v2/).
func (c *Client) BaseURL() string { return c.base }

// ListOptions selects a page of a list. Zero values leave the desk's
// defaults (page 1, 30 per page). PerPage must be within 1..100.
type ListOptions struct {
	Page    int `url:"page,omitempty"`
	PerPage int `url:"per_page,omitempty"`
}

func (o ListOptions) validate() error {
	if o.PerPage < 0 || o.PerPage > 100 {
		return fmt.Errorf("per_page must be between 1 and 100, got %d", o.PerPage)
	}
	if o.Page < 0 {
		return fmt.Errorf("page must be 1 or more, got %d", o.Page)
	}
	return nil
}

// Rate is the desk's account-wide rate state as reported on a response.
// Fields are -1 when the desk did not send the header.
type Rate struct {
	Total              int // X-Ratelimit-Total: the account's budget per minute
	Remaining          int // X-Ratelimit-Remaining
	UsedCurrentRequest int // X-Ratelimit-Used-CurrentRequest: credits this request cost
}

// Response wraps the desk's HTTP response (its body already consumed) with
// pagination and rate information.
type Response struct {
	*http.Response

	// NextPage is the page number of the next page from the Link header
	// (rel="next"), or 0 when there is none.
	NextPage int
	// NextURL is the raw next-page URL from the Link header, if any.
	NextURL string
	// Rate is the rate state the desk reported.
	Rate Rate
	// Attempts is how many requests were sent for this call (1 without
	// retries).
	Attempts int
}

func newResponse(r *http.Response, attempts int) *Response {
	resp := &Response{Response: r, Attempts: attempts, Rate: parseRate(r.Header)}
	resp.NextURL, resp.NextPage = parseLinkNext(r.Header.Values("Link"))
	return resp
}

func parseRate(h http.Header) Rate {
	return Rate{
		Total:              headerInt(h, "X-Ratelimit-Total"),
		Remaining:          headerInt(h, "X-Ratelimit-Remaining"),
		UsedCurrentRequest: headerInt(h, "X-Ratelimit-Used-CurrentRequest"),
	}
}

func headerInt(h http.Header, key string) int {
	v := strings.TrimSpace(h.Get(key))
	if v == "" {
		return -1
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || n < 0 {
		return -1
	}
	return n
}

// parseLinkNext finds rel="next" in Link header values, leniently: optional
// spaces, quoted or bare rel, several relations in one rel, any case.
func parseLinkNext(values []string) (string, int) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			segs := strings.Split(part, ";")
			target := strings.TrimSpace(segs[0])
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			target = target[1 : len(target)-1]
			isNext := false
			for _, p := range segs[1:] {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
					continue
				}
				val = strings.Trim(strings.TrimSpace(val), `"'`)
				for _, r := range strings.Fields(val) {
					if strings.EqualFold(r, "next") {
						isNext = true
					}
				}
			}
			if !isNext {
				continue
			}
			page := 0
			if u, err := url.Parse(target); err == nil {
				fmt.Sscanf(u.Query().Get("page"), "%d", &page)
			}
			return target, page
		}
	}
	return "", 0
}

// request describes one API call.
type request struct {
	op     string // "update ticket 42"
	method string
	path   string // relative to /api/v2/, no leading slash
	query  string // encoded query, no leading '?'
	body   any    // JSON body or nil
}

// requestCost is the credits the desk charges for a request: 1, plus 1 per
// include= embed when viewing one ticket and 2 per embed when listing
// tickets (freshservice-api.md, rate limits: include=conversations on a
// view costs 2). The limiter spends the same, so that the budget holds in
// credits, which is what the desk counts.
func requestCost(method, path, query string) int {
	if method != http.MethodGet || !strings.HasPrefix(path, "tickets") {
		return 1
	}
	q, err := url.ParseQuery(query)
	inc := q.Get("include")
	if err != nil || inc == "" {
		return 1
	}
	n := len(strings.Split(inc, ","))
	switch segs := strings.Split(strings.Trim(path, "/"), "/"); {
	case len(segs) == 1 && segs[0] == "tickets":
		return 1 + 2*n
	case len(segs) == 2 && segs[0] == "tickets" && segs[1] != "filter":
		return 1 + n
	}
	return 1
}

// do performs the call with rate limiting and retries and decodes a 2xx JSON
// body into out (when out is not nil).
func (c *Client) do(ctx context.Context, r request, out any) (*Response, error) {
	var payload []byte
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("sdclient: %s: encode request body: %w", r.op, err)
		}
		payload = b
	}
	target := c.base + r.path
	if r.query != "" {
		target += "?" + r.query
	}
	wctx, unhook := c.waitContext(ctx) // waits end when a stop (StopWith) does
	defer unhook()
	a := &attempt{
		c: c, ctx: ctx, wctx: wctx, r: r, out: out, payload: payload, target: target,
		apiPath: "/" + r.path,
		cost:    requestCost(r.method, r.path, r.query),
		listed:  c.listLimiter != nil && isTicketList(r.method, r.path),
	}
	for a.n = 1; ; a.n++ {
		resp, retry, err := a.try()
		if !retry {
			return resp, err
		}
	}
}

// attempt is one call of do across its attempts: each try spends budget,
// sends the request and reads the answer, and says whether to try again.
type attempt struct {
	c       *Client
	ctx     context.Context // the call's context: a request sent runs under it
	wctx    context.Context // ctx, also ended by a stop: waits run under it
	r       request
	out     any
	payload []byte
	target  string // the request's URL
	apiPath string // its path under /api/v2, for logs and errors
	cost    int    // the credits one attempt spends
	listed  bool   // spends from the ticket-list budget too
	n       int    // the attempt, from 1
	// applied: an earlier attempt of a request with effects may have taken
	// effect (a 5xx or a broken connection), so giving up is not ErrStopped.
	applied bool
}

// try makes one attempt: it waits for budget, sends the request and reads
// the answer.
func (a *attempt) try() (resp *Response, retry bool, err error) {
	if err := a.acquire(); err != nil {
		return nil, false, err
	}
	req, err := a.newRequest()
	if err != nil {
		return nil, false, err
	}
	c := a.c
	start := c.clock.Now()
	hresp, err := c.httpClient.Do(req)
	elapsed := c.clock.Since(start)
	var refused error // why a redirect was not followed (redirect.go)
	if err != nil && hresp != nil {
		// Only a refused redirect returns both (http.Client.Do): the
		// 3xx, its body closed, is the desk's answer.
		refused, err = err, nil
	}
	if err != nil {
		return a.transportFailed(err, elapsed)
	}
	resp = newResponse(hresp, a.n)
	c.logger.LogAttrs(a.ctx, slog.LevelDebug, "sdclient request",
		slog.String("method", a.r.method), slog.String("path", a.apiPath),
		slog.Int("status", hresp.StatusCode), slog.Int("attempt", a.n),
		slog.Duration("duration", elapsed), slog.Bool("interactive", c.interactive),
		slog.Int("rate_remaining", resp.Rate.Remaining))
	c.limiter.observe(resp.Rate)
	return a.answered(req, hresp, resp, refused)
}

// acquire spends the attempt's budget: a ticket list's first, then the
// client's. A wait cut short by a stop is ErrStopped, unless an earlier
// attempt may have been applied.
func (a *attempt) acquire() error {
	c := a.c
	if a.listed {
		if _, err := c.listLimiter.acquire(a.wctx, c.interactive, 1); err != nil {
			return a.budgetFailed(ErrListBudgetWait, err)
		}
	}
	if _, err := c.limiter.acquire(a.wctx, c.interactive, a.cost); err != nil {
		return a.budgetFailed(ErrBudgetWait, err)
	}
	return nil
}

// budgetFailed is the error of a wait for budget that gave up with err.
func (a *attempt) budgetFailed(budget, err error) error {
	if a.c.stopped(a.ctx) && !a.applied {
		return a.c.redact(fmt.Errorf("sdclient: %s: %w", a.r.op, ErrStopped))
	}
	return a.c.redact(budgetWait(a.r.op, budget, err, a.applied))
}

// newRequest builds the attempt's HTTP request, under the call's context.
func (a *attempt) newRequest() (*http.Request, error) {
	var body io.Reader
	if a.payload != nil {
		body = bytes.NewReader(a.payload)
	}
	req, err := http.NewRequestWithContext(withClass(a.ctx, a.c.interactive), a.r.method, a.target, body)
	if err != nil {
		return nil, a.c.redact(fmt.Errorf("sdclient: %s: build request: %w", a.r.op, err))
	}
	req.Header.Set("Authorization", a.c.authHeader)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", a.c.userAgent)
	if a.payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// transportFailed handles an attempt that got no answer: retried after a
// backoff when the request may be sent again, else the error.
func (a *attempt) transportFailed(err error, elapsed time.Duration) (*Response, bool, error) {
	c, r := a.c, a.r
	c.logger.LogAttrs(a.ctx, slog.LevelDebug, "sdclient request",
		slog.String("method", r.method), slog.String("path", a.apiPath),
		slog.Int("attempt", a.n), slog.Duration("duration", elapsed),
		slog.Bool("interactive", c.interactive), slog.String("error", c.redactString(err.Error())))
	if ctxErr := a.ctx.Err(); ctxErr != nil {
		return nil, false, c.redact(fmt.Errorf("sdclient: %s: %w", r.op, ctxErr))
	}
	if !idempotent(r.method) && !neverSent(err) {
		return &Response{Attempts: a.n}, false, c.redact(fmt.Errorf("sdclient: %s: %s %s: %w (%w)", r.op, r.method, a.apiPath, err, ErrNotRetried))
	}
	a.applied = a.applied || (r.method != http.MethodGet && !neverSent(err))
	if a.n < c.maxAttempts {
		if serr := c.sleep(a.wctx, c.backoff(a.n)); serr != nil {
			return nil, false, c.redact(fmt.Errorf("sdclient: %s: %s %s: %w (gave up waiting to retry: %v)", r.op, r.method, a.apiPath, err, serr))
		}
		return nil, true, nil
	}
	return &Response{Attempts: a.n}, false, c.redact(fmt.Errorf("sdclient: %s: %s %s: %w (after %d attempts)", r.op, r.method, a.apiPath, err, a.n))
}

// answered handles the desk's answer: a 2xx is decoded, a redirect not
// followed is an error, a 429 or a 5xx may be tried again.
func (a *attempt) answered(req *http.Request, hresp *http.Response, resp *Response, refused error) (*Response, bool, error) {
	c, r := a.c, a.r
	if hresp.StatusCode >= 200 && hresp.StatusCode < 300 {
		// Not retried even when too large: the same body would come
		// back, and a write has been applied.
		err := decodeBody(hresp, a.out, c.maxResponse)
		if errors.Is(err, ErrResponseTooLarge) {
			return resp, false, c.redact(fmt.Errorf("sdclient: %s: %w", r.op, err))
		}
		if err != nil {
			return resp, false, c.redact(fmt.Errorf("sdclient: %s: decode response: %w", r.op, err))
		}
		return resp, false, nil
	}
	if isRedirect(hresp.StatusCode) {
		return resp, false, c.redirectError(r, req, hresp, refused)
	}
	apiErr := c.newAPIError(r, hresp)
	switch {
	case hresp.StatusCode == http.StatusTooManyRequests:
		return a.rateLimited(hresp, resp, apiErr)
	case hresp.StatusCode >= 500:
		return a.serverFailed(resp, apiErr)
	}
	return resp, false, apiErr
}

// rateLimited handles a 429: every request of the client pauses for its
// Retry-After, and this one is tried again after it when attempts and the
// context's deadline allow.
func (a *attempt) rateLimited(hresp *http.Response, resp *Response, apiErr *APIError) (*Response, bool, error) {
	c := a.c
	wait, ok := parseRetryAfter(hresp.Header.Get("Retry-After"), deskNow(hresp.Header, c.clock.Now()))
	if !ok {
		wait = defaultRetryAfter
	}
	rlErr := &RateLimitError{APIError: apiErr, RetryAfter: wait, Rate: resp.Rate}
	until := c.limiter.pause(wait)
	if a.n >= c.maxAttempts {
		return resp, false, rlErr
	}
	if dl, has := a.ctx.Deadline(); has && c.clock.Now().Add(wait).After(dl) {
		return resp, false, rlErr
	}
	if err := c.sleep(a.wctx, wait); err != nil {
		if c.stopped(a.ctx) && !a.applied {
			return resp, false, c.redact(fmt.Errorf("sdclient: %s: %w (after %w)", a.r.op, ErrStopped, rlErr))
		}
		return resp, false, rlErr
	}
	c.limiter.resume(until)
	return resp, true, nil
}

// serverFailed handles a 5xx: an idempotent request is tried again after a
// backoff while attempts last; others are never sent again.
func (a *attempt) serverFailed(resp *Response, apiErr *APIError) (*Response, bool, error) {
	c, r := a.c, a.r
	if !idempotent(r.method) {
		return resp, false, fmt.Errorf("%w (%w)", apiErr, ErrNotRetried)
	}
	if a.n < c.maxAttempts {
		a.applied = a.applied || r.method != http.MethodGet
		if err := c.sleep(a.wctx, c.backoff(a.n)); err != nil {
			return resp, false, apiErr
		}
		return resp, true, nil
	}
	return resp, false, apiErr
}

// decodeBody decodes a 2xx body of at most limit bytes into out. A larger
// body fails with ErrResponseTooLarge after reading no more than limit+1
// bytes of it (none when its Content-Length says so); a body cut short is
// never decoded as if it were whole.
func decodeBody(hresp *http.Response, out any, limit int64) error {
	defer hresp.Body.Close()
	if out == nil || hresp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(hresp.Body, maxErrorBody))
		return nil
	}
	tooLarge := fmt.Errorf("%w of %s", ErrResponseTooLarge, byteSize(limit))
	if hresp.ContentLength > limit {
		return tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(hresp.Body, limit+1))
	if int64(len(data)) > limit {
		return tooLarge
	}
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty body")
		}
		return err
	}
	return nil
}

// byteSize prints a size in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// idempotent reports whether a failed request with this method may be sent
// again after a 5xx or a network error.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// neverSent reports whether a transport error proves the request never left
// (the connection could not be made), so even a POST may be sent again.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// backoff is exponential with jitter: a random duration in [d/2, d] where d
// doubles per attempt from backoffBase up to backoffMax.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffBase
	for i := 1; i < attempt && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(half+1)
}

func (c *Client) clockSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.Chan():
		return nil
	}
}

// parseRetryAfter reads Retry-After as delay-seconds (what the desk's
// documentation says it sends) or as a date: an HTTP-date (RFC 9110
// §10.2.3: IMF-fixdate, or the obsolete RFC 850 and asctime forms a
// recipient must accept) or an RFC 3339 date-time (the format the vendor's
// schema gives the header). A date is measured from now, which the caller
// takes from the desk's Date header when there is one (the desk's clock,
// not ours: they differ); a past date means at once. Either way the wait
// is capped at maxRetryAfterSecs.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var secs int64
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil && fmt.Sprint(secs) == v {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, maxRetryAfterSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return 0, false
		}
	}
	return min(max(t.Sub(now), 0), maxRetryAfterSecs*time.Second), true
}

// deskNow is the desk's clock at its answer (its Date header), or ours
// when it sent none or an unreadable one.
func deskNow(h http.Header, ours time.Time) time.Time {
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		return t
	}
	return ours
}

// redact makes sure an error's text never carries the API key or the Basic
// credential, whatever a transport or a proxy put in it.
func (c *Client) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if c.redactString(msg) == msg {
		return err
	}
	return &redactedError{err: err, msg: c.redactString(msg)}
}

func (c *Client) redactString(s string) string {
	cred := strings.TrimPrefix(c.authHeader, "Basic ")
	s = strings.ReplaceAll(s, cred, "[REDACTED]")
	return strings.ReplaceAll(s, c.apiKey, "[REDACTED]")
}

type redactedError struct {
	err error
	msg string
}

// Error is the error's text without the credentials.
func (e *redactedError) Error() string { return e.msg }

// Unwrap gives the error whose text was redacted.
func (e *redactedError) Unwrap() error { return e.err }

package statuspage

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/store"
)

//go:embed templates/*.html templates/*.css
var assets embed.FS

// Scheduler is the running scheduler as the pages read it
// (*scheduler.Scheduler implements it).
type Scheduler interface {
	// Memory is what the scheduler knows without a desk request: the
	// pages' views are built from it (view.go).
	Memory() scheduler.Memory
}

// Ledger is the state store as the pages read it (*store.Store
// implements it).
type Ledger interface {
	RecentFirings(ctx context.Context, f store.FiringFilter) ([]store.FiringRow, error)
	FiredPerHour(ctx context.Context, since time.Time, rule string) ([]store.HourCount, error)
	OpenEpisodes(ctx context.Context, rule string) ([]int64, error)
	OpenPages(ctx context.Context, limit int) ([]oncall.Page, error)
	// Leader is the replica that leads the scheduler on this state.
	Leader(ctx context.Context) (store.LeaderInfo, error)
	// LastBacktest is the last report `deskbot rules backtest` kept.
	LastBacktest(ctx context.Context) (store.Backtest, bool, error)
}

// Finding is one line of /readyz, as the overview shows it.
type Finding struct {
	Name, Status string
}

// Option configures New.
type Option func(*config)

type config struct {
	token    string
	loopback bool
	link     func(id int64) string
	findings func(ctx context.Context) []Finding
	leader   func() bool
	replica  string
	gatherer prometheus.Gatherer
	rules    func() *rules.Set
	now      func() time.Time
	logger   *slog.Logger
	agent    func() (name, email string, ok bool)
	commands *Commands
	names    func(ctx context.Context, member string) string
	mirror   Mirror
	rate     int // DESKBOT_DESK_RATE_PER_MIN
	budget   int // of it, the background's a minute
}

// WithToken sets DESKBOT_UI_TOKEN: off loopback the pages need it.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithLoopback says the pages are served on a loopback address (see
// IsLoopback): open to whoever can connect.
func WithLoopback(on bool) Option { return func(c *config) { c.loopback = on } }

// WithTicketLink links ticket ids to the desk (nil: no links).
func WithTicketLink(f func(id int64) string) Option { return func(c *config) { c.link = f } }

// WithFindings gives the overview /readyz's findings. f must not ask the
// desk: a page makes no desk request.
func WithFindings(f func(ctx context.Context) []Finding) Option {
	return func(c *config) { c.findings = f }
}

// WithLeader says whether this replica runs the scheduler, and names it.
func WithLeader(replica string, leads func() bool) Option {
	return func(c *config) { c.replica, c.leader = replica, leads }
}

// WithGatherer reads the desk's request counters from the metrics.
func WithGatherer(g prometheus.Gatherer) Option { return func(c *config) { c.gatherer = g } }

// WithRules gives the rules loaded when no scheduler runs them here.
func WithRules(f func() *rules.Set) Option { return func(c *config) { c.rules = f } }

// WithAgent gives the API key's agent as the start-up check read it (GET
// /agents/me): f must not ask the desk; ok is false while it is unknown.
func WithAgent(f func() (name, email string, ok bool)) Option {
	return func(c *config) { c.agent = f }
}

// WithCommands gives the chat commands answered (the overview counts the
// last hour's and their p99).
func WithCommands(c *Commands) Option { return func(cfg *config) { cfg.commands = c } }

// WithPersonNames names on-call members (a chat id or an e-mail) for
// /oncall: Run asks f in the background, once a minute, for the members on
// call now and next and for who acknowledged open pages, and the page
// shows the names it last answered, so that a page makes no request. f
// answers "" when it knows no name.
func WithPersonNames(f func(ctx context.Context, member string) string) Option {
	return func(c *config) { c.names = f }
}

// WithRequestBudget gives the desk's request budget a minute
// (DESKBOT_DESK_RATE_PER_MIN) and the background's part of it, for /plan.
func WithRequestBudget(rate, background int) Option {
	return func(c *config) { c.rate, c.budget = rate, background }
}

// WithClock sets the pages' clock (tests).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithLogger logs pages that failed to render.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// Handler serves the status pages. Mount it with Register.
type Handler struct {
	mu      sync.Mutex
	samples []sample          // the desk's request counters, a minute apart (requests.go)
	names   map[string]string // on-call members' names, by member (names.go)
	cfg     config
	sched   Scheduler // nil: no rules run here
	ledger  Ledger
	tmpl    *template.Template
	css     []byte
}

// New returns the pages over sched (nil when no rules are loaded) and
// ledger.
func New(sched Scheduler, ledger Ledger, opts ...Option) (*Handler, error) {
	if ledger == nil {
		return nil, errors.New("status pages: ledger is nil")
	}
	cfg := config{now: time.Now, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("status pages: nil option")
		}
		o(&cfg)
	}
	tmpl, err := template.New("").Funcs(funcs(cfg.link)).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("templates/style.css")
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, sched: sched, ledger: ledger, tmpl: tmpl, css: css}, nil
}

// Register mounts the pages on mux, each behind the access guard.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", h.guard(h.page("overview", h.overview)))
	mux.Handle("GET /rules", h.guard(h.page("rules", h.rulesPage)))
	mux.Handle("GET /rules/{name}", h.guard(h.page("rule", h.rulePage)))
	mux.Handle("GET /firings", h.guard(h.page("firings", h.firingsPage)))
	mux.Handle("GET /oncall", h.guard(h.page("oncall", h.oncallPage)))
	mux.Handle("GET /plan", h.guard(h.page("plan", h.planPage)))
	mux.Handle("GET /backtest", h.guard(h.page("backtest", h.backtestPage)))
	mux.Handle("GET /static/style.css", h.guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(h.css)
	})))
}

// errNotFound makes a page answer 404.
var errNotFound = errors.New("not found")

// page renders template name with the data build returns, whole or not at
// all (a failure is a plain 500, logged, never half a page).
func (h *Handler) page(name string, build func(r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := build(r)
		code := http.StatusOK
		if errors.Is(err, errNotFound) {
			code = http.StatusNotFound
			name, data = "notfound", notFound{base: base{Nav: nav(""), Now: h.cfg.now()}, Path: r.URL.Path}
		} else if err != nil {
			h.cfg.logger.Warn("status page failed", "page", name, "err", err)
			http.Error(w, "the page could not be built: "+err.Error(), http.StatusInternalServerError)
			return
		}
		var buf bytes.Buffer
		if err := h.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
			h.cfg.logger.Warn("status page failed", "page", name, "err", err)
			http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.WriteHeader(code)
		_, _ = buf.WriteTo(w)
	})
}

type notFound struct {
	base
	Path string
}

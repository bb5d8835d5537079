package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/prometheus/client_golang/prometheus"
)

// reloadStatus remembers how the last SIGHUP reload of the rules file went,
// for /metrics (deskbot_rules_reload_failures_total,
// deskbot_rules_last_reload_success) and the "rules" check of /readyz,
// which says "last reload failed at HH:MM: <first error>" while the old
// rules run on.
type reloadStatus struct {
	now      func() time.Time
	failures prometheus.Counter
	success  prometheus.Gauge

	mu       sync.Mutex
	failedAt time.Time // zero: the last reload (if any) succeeded
	first    string    // the first error of the failed reload
}

func newReloadStatus(reg prometheus.Registerer, now func() time.Time) *reloadStatus {
	r := &reloadStatus{
		now: now,
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "deskbot_rules_reload_failures_total",
			Help: "SIGHUP reloads of the rules file that failed (the old rules kept running).",
		}),
		success: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "deskbot_rules_last_reload_success",
			Help: "1 if the last reload of the rules file (or the start-up load) succeeded, 0 if it failed and the old rules run.",
		}),
	}
	r.success.Set(1)
	reg.MustRegister(r.failures, r.success)
	return r
}

// failed records a failed reload and its first error.
func (r *reloadStatus) failed(first string) {
	if r == nil {
		return
	}
	r.failures.Inc()
	r.success.Set(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedAt = r.now()
	r.first = firstLine(first)
}

// succeeded records a reload that swapped the new rules in.
func (r *reloadStatus) succeeded() {
	if r == nil {
		return
	}
	r.success.Set(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedAt, r.first = time.Time{}, ""
}

// check is the /readyz finding of a failed reload: degraded, since the old
// rules keep running; nil after a good one.
func (r *reloadStatus) check(context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failedAt.IsZero() {
		return nil
	}
	return degraded{fmt.Errorf("last reload failed at %s: %s; the old rules run", r.failedAt.Format("15:04"), r.first)}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// liveRules is the rules file and the set that runs: loaded at start,
// swapped on SIGHUP.
type liveRules struct {
	path    string // "": no rules file, automation is off
	loader  *rulesLoader
	set     atomic.Pointer[rules.Set]
	reloads *reloadStatus
}

// loadLiveRules loads DESKBOT_RULES (or rules.yaml) when there is one.
func loadLiveRules(ctx context.Context, cfg *config, client *sdclient.Client, sh *deskShared, cache fieldCache, reg *prometheus.Registry, logger *slog.Logger) (*liveRules, error) {
	path, err := rulesFile(cfg.Rules)
	if err != nil {
		return nil, err
	}
	live := &liveRules{path: path, loader: &rulesLoader{client: client, shared: sh, cache: cache, logger: logger}}
	if path == "" {
		logger.Info("no rules file (DESKBOT_RULES unset and no rules.yaml here): automation is off")
	} else {
		s, err := live.loader.load(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("DESKBOT_RULES: %w", err)
		}
		live.set.Store(s)
		logger.Info("rules loaded", "file", path, "rules", len(s.Rules()))
	}
	live.reloads = newReloadStatus(reg, time.Now)
	return live, nil
}

// check is the "rules" finding of /readyz.
func (l *liveRules) check(ctx context.Context) error {
	if l.path != "" && l.set.Load() == nil {
		return errors.New("not loaded")
	}
	return l.reloads.check(ctx)
}

// reloadRules swaps in a new rules file on SIGHUP; a bad file keeps the old
// rules, logs every error and records the failure in rs (/metrics,
// /readyz). A good reload is logged once, by the last line.
func reloadRules(ctx context.Context, logger *slog.Logger, loader *rulesLoader, path string, set *atomic.Pointer[rules.Set], sched *scheduler.Scheduler, oncallOn bool, rs *reloadStatus) {
	if path == "" {
		logger.Warn("SIGHUP: no rules file to reload")
		return
	}
	logger.Debug("SIGHUP: reloading the rules file", "file", path)
	s, err := loader.load(ctx, path)
	if err != nil {
		var le *rules.LoadError
		// The status first: whoever reads the log line finds it in
		// /metrics and /readyz already.
		if errors.As(err, &le) && len(le.Errors) > 0 {
			rs.failed(le.Errors[0].Error())
			for _, e := range le.Errors {
				logger.Error("SIGHUP: rules file has an error; keeping the old rules", "error", e.Error())
			}
		} else {
			rs.failed(err.Error())
			logger.Error("SIGHUP: cannot read the rules file; keeping the old rules", "file", path, "err", err)
		}
		return
	}
	if sched != nil {
		// The scheduler hands the new oncall: section to the escalator.
		if err := sched.Reload(s); err != nil {
			rs.failed(err.Error())
			logger.Error("SIGHUP: the new rules cannot run; keeping the old rules", "err", err)
			return
		}
		if !oncallOn && s.OnCall() != nil {
			logger.Warn("SIGHUP: the rules file now has an oncall: section; restart deskbot to turn on-call paging on")
		}
	} else {
		logger.Warn("SIGHUP: rules loaded, but the scheduler starts only at start-up; restart deskbot to run them")
	}
	set.Store(s)
	rs.succeeded()
	logger.Info("SIGHUP: rules reloaded", "file", path, "rules", len(s.Rules()))
}

// customFieldsTimeout bounds the read of the desk's custom fields before a
// rules file loads: a reload must not wait for a busy rate budget.
const customFieldsTimeout = 10 * time.Second

// rulesLoader loads the rules file with the desk's custom ticket fields
// declared, so that queries can filter on them. It reads them through the
// interactive budget (a reload is an operator waiting, and must not queue
// behind the scheduler's polls) within customFieldsTimeout; when they cannot
// be read it warns and uses the fields it read last, or, when it read none
// yet (a start while the desk is down), those the state store kept from
// the last read, so that neither a reload during a desk outage nor a start
// during one refuses a file that loaded before. Only the run loop uses it,
// so it needs no lock.
type rulesLoader struct {
	client *sdclient.Client
	shared *deskShared // nil: read the form's fields with client
	cache  fieldCache  // nil: none
	logger *slog.Logger
	last   map[string]filter.Kind
	// lastChoices are the desk's coded field choices read last.
	lastChoices map[string][]sdclient.FieldChoice
}

// fieldCache keeps the desk's custom ticket fields across starts
// (*store.Store, as a cursor).
type fieldCache interface {
	Cursor(ctx context.Context, name string) (string, bool, error)
	SetCursor(ctx context.Context, name, value string, now time.Time) error
}

// customFieldsCursor names the kept custom fields in the store.
const customFieldsCursor = "desk.custom_fields"

// formFields reads the ticket form's fields, once for the custom fields
// and the codes of a load, through the shared read when there is one.
func (l *rulesLoader) formFields(ctx context.Context) ([]*sdclient.FormField, error) {
	ctx, cancel := context.WithTimeout(ctx, customFieldsTimeout)
	defer cancel()
	if l.shared != nil {
		return l.shared.fields.get(ctx)
	}
	f, _, err := l.client.TicketFormFields.List(ctx, nil)
	return f, err
}

func (l *rulesLoader) load(ctx context.Context, path string) (*rules.Set, error) {
	fields, err := l.formFields(ctx)
	var custom map[string]filter.Kind
	if err == nil {
		custom = sdclient.CustomFieldsOf(fields)
	}
	switch {
	case err == nil:
		if !maps.Equal(custom, l.last) {
			l.keep(ctx, custom)
		}
		l.last = custom
	case l.last != nil:
		l.logger.Warn("cannot read the desk's custom ticket fields; using those read before", "err", err)
		custom = l.last
	default:
		if custom = l.kept(ctx); custom != nil {
			l.logger.Warn("cannot read the desk's custom ticket fields; using those kept from the last start", "err", err)
			l.last = custom
		} else {
			l.logger.Warn("cannot read the desk's custom ticket fields; queries cannot filter on them", "err", err)
		}
	}
	return rules.LoadFile(path, append(l.codes(fields, err), rules.WithCustomFields(custom))...)
}

// codes are the loader options with the desk's status, priority and source
// codes of the form's fields, which queries are checked against (the last
// ones read, or the built-in ones, when the desk could not say: err).
func (l *rulesLoader) codes(fields []*sdclient.FormField, err error) []rules.Option {
	var choices map[string][]sdclient.FieldChoice
	if err == nil {
		choices = sdclient.CodedChoicesOf(fields)
	} else {
		l.logger.Warn("cannot read the desk's ticket statuses; queries are checked against the built-in ones", "err", err)
		choices = l.lastChoices
	}
	l.lastChoices = choices
	return fieldChoiceOptions(choices)
}

// fieldChoiceOptions turns the desk's coded choices into loader options.
func fieldChoiceOptions(choices map[string][]sdclient.FieldChoice) []rules.Option {
	var opts []rules.Option
	for field, ch := range choices {
		opts = append(opts, rules.WithFieldChoices(field, ch))
	}
	return opts
}

// keep saves the custom fields for a later start; failing that is only
// said.
func (l *rulesLoader) keep(ctx context.Context, custom map[string]filter.Kind) {
	if l.cache == nil {
		return
	}
	b, err := json.Marshal(custom)
	if err == nil {
		err = l.cache.SetCursor(ctx, customFieldsCursor, string(b), time.Now())
	}
	if err != nil {
		l.logger.Warn("cannot keep the desk's custom ticket fields in the state store", "err", err)
	}
}

// kept reads the custom fields saved by keep (nil: none).
func (l *rulesLoader) kept(ctx context.Context) map[string]filter.Kind {
	if l.cache == nil {
		return nil
	}
	v, ok, err := l.cache.Cursor(ctx, customFieldsCursor)
	if err != nil || !ok {
		return nil
	}
	var custom map[string]filter.Kind
	if json.Unmarshal([]byte(v), &custom) != nil {
		return nil
	}
	return custom
}

// rulesFile resolves DESKBOT_RULES: the named file, or rules.yaml if present.
func rulesFile(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("DESKBOT_RULES: %w", err)
		}
		return configured, nil
	}
	if _, err := os.Stat("rules.yaml"); err == nil {
		return "rules.yaml", nil
	}
	return "", nil
}

// reloader reloads the rules file on SIGHUP.
type reloader struct {
	hup      chan os.Signal
	live     *liveRules
	sched    *scheduler.Scheduler
	oncallOn bool
	logger   *slog.Logger
}

// newReloader catches SIGHUP from now on (before any component runs, so
// that an early SIGHUP does not end the process), until its Run returns.
func newReloader(live *liveRules, sched *scheduler.Scheduler, oncallOn bool, logger *slog.Logger) reloader {
	r := reloader{hup: make(chan os.Signal, 1), live: live, sched: sched, oncallOn: oncallOn, logger: logger}
	signal.Notify(r.hup, syscall.SIGHUP)
	return r
}

func (r reloader) Run(ctx context.Context) error {
	defer signal.Stop(r.hup)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.hup:
			reloadRules(ctx, r.logger, r.live.loader, r.live.path, &r.live.set, r.sched, r.oncallOn, r.live.reloads)
		}
	}
}

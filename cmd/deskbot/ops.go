package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry returns a private Prometheus registry with the process and Go
// collectors and deskbot's build info.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "deskbot_build_info",
		Help: "Build information of the running deskbot; always 1.",
	}, []string{"version", "goversion"})
	info.WithLabelValues(version, runtime.Version()).Set(1)
	reg.MustRegister(info)
	return reg
}

// degraded is a /readyz finding that is shown but leaves the process
// ready: something works less well (a rule over its budget) while the rest
// serves on.
type degraded struct{ error }

// readyCheck is one named dependency /readyz reports on.
type readyCheck struct {
	name  string
	check func(ctx context.Context) error
}

// opsServer serves /healthz (the process is up), /readyz (every dependency
// answers) and /metrics.
type opsServer struct {
	srv *http.Server
	ln  net.Listener
	mux *http.ServeMux
}

func newOpsServer(ln net.Listener, reg *prometheus.Registry, checks []readyCheck, logger *slog.Logger) *opsServer {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		status := map[string]string{}
		code := http.StatusOK
		for _, c := range checks {
			var d degraded
			if err := c.check(ctx); errors.As(err, &d) {
				status[c.name] = "degraded: " + d.Error()
			} else if err != nil {
				status[c.name] = err.Error()
				code = http.StatusServiceUnavailable
			} else {
				status[c.name] = "ok"
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(status)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return &opsServer{
		ln:  ln,
		mux: mux,
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 5 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}
}

// mountPages adds the status pages (they guard themselves) beside the
// probes; call it before serve.
func (o *opsServer) mountPages(p interface{ Register(*http.ServeMux) }) { p.Register(o.mux) }

// Addr is the address actually listened on (useful with port 0).
func (o *opsServer) Addr() string { return o.ln.Addr().String() }

// serve runs until ctx ends, then shuts down gracefully.
func (o *opsServer) serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- o.srv.Serve(o.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := o.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// cachedCheck runs check at most once per okTTL while it passes, so that
// frequent /readyz probes do not spend the desk's request budget, and at most
// once per failTTL while it fails, so that a desk that is back is seen soon.
func cachedCheck(okTTL, failTTL time.Duration, now func() time.Time, check func(context.Context) error) func(context.Context) error {
	var (
		mu   sync.Mutex
		last time.Time
		err  error
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		ttl := okTTL
		if err != nil {
			ttl = failTTL
		}
		if !last.IsZero() && now().Sub(last) < ttl {
			return err
		}
		err, last = check(ctx), now()
		return err
	}
}

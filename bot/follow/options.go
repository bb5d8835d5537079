package follow

import "log/slog"

// Option configures NewThreads, NewDigests and NewDMs.
type Option func(*config)

type config struct {
	logger *slog.Logger
	dryRun bool
}

func newConfig(opts []Option) config {
	cfg := config{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// WithLogger logs to l (default: nowhere).
func WithLogger(l *slog.Logger) Option {
	return func(cfg *config) {
		if l != nil {
			cfg.logger = l
		}
	}
}

// WithDryRun logs what would be posted instead of posting it.
func WithDryRun(dry bool) Option { return func(cfg *config) { cfg.dryRun = dry } }

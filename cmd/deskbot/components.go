package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/deskbot/deskbot/scheduler"
)

// component is one part of the running process, started and stopped the
// same way as every other: Run serves until ctx ends, then winds down and
// returns nil; it returns early with nil when it is done while the rest
// runs on, with errStop when the whole process should stop, or with the
// error that stops it.
type component interface {
	Run(ctx context.Context) error
}

// errStop is what a component returns to stop the process without an
// error (the console closed by the person at it).
var errStop = errors.New("stop")

// runComponents runs every component until ctx ends or one of them stops
// the process, then says it is stopping, ends the components' context and
// waits for them to wind down. The components' context ends only then (not
// with ctx), so that every component stops after that line.
func runComponents(ctx context.Context, logger *slog.Logger, comps ...component) error {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, len(comps))
	for _, c := range comps {
		wg.Go(func() { errc <- c.Run(runCtx) })
	}
	runErr := waitForStop(ctx, errc, len(comps))
	logger.Info("stopping: finishing in-flight work; signal again to stop at once", "timeout", stopTimeout)
	cancel()
	wg.Wait()
	logger.Info("stopped")
	return runErr
}

// waitForStop waits until ctx ends, every one of n components is done, or
// one returns an error (errStop: no error).
func waitForStop(ctx context.Context, errc <-chan error, n int) error {
	for ; n > 0; n-- {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if errors.Is(err, errStop) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	<-ctx.Done()
	return nil
}

// Run serves the ops endpoints (component).
func (o *opsServer) Run(ctx context.Context) error { return o.serve(ctx) }

// chatRunner runs the chat transport. When the console's input ends, it
// decides whether the process stops: yes when no rules run or the person
// at a terminal pressed Ctrl-D; no when nobody is at a terminal (stdin is
// /dev/null in a container, or a pipe that ended) and rules run.
type chatRunner struct {
	chat     chatTransport
	console  bool // the console transport, not Slack
	rulesRun bool
	stdin    io.Reader
	logger   *slog.Logger
}

func (c chatRunner) Run(ctx context.Context) error {
	err := c.chat.Run(ctx)
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		return fmt.Errorf("chat: %w", err)
	case !c.console:
		return nil
	case !c.rulesRun:
		c.logger.Info("console input closed and no rules loaded: stopping")
		return errStop
	case isTerminal(c.stdin):
		// Ctrl-D at a terminal: the person leaves, rules or not.
		c.logger.Info("console closed (Ctrl-D): stopping")
		return errStop
	}
	c.logger.Info("console input closed; the rules keep running until SIGTERM or Ctrl-C")
	return nil
}

// schedulerRunner runs the rules scheduler (none without rules) once the
// desk has answered (deskUp closed: the scheduler starts by reading the
// desk's statuses), and stops it within stopTimeout, letting in-flight
// firings finish.
type schedulerRunner struct {
	sched  *scheduler.Scheduler
	deskUp <-chan struct{}
	logger *slog.Logger
}

func (r schedulerRunner) Run(ctx context.Context) error {
	if r.sched == nil {
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case <-r.deskUp:
	}
	if err := r.sched.Start(ctx); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := r.sched.Stop(sctx); err != nil {
		r.logger.Warn("scheduler did not stop cleanly", "err", err)
	}
	return nil
}

// isTerminal reports whether r is a terminal: a character device other
// than the null device (which is what a container without -i, or a
// service manager, gives as stdin).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

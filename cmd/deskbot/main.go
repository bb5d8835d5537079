package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	// Time zones of on-call schedules work in a static image without
	// zoneinfo.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// The first SIGINT/SIGTERM asks for a graceful stop; a second one (an
	// impatient Ctrl-C, an orchestrator's second TERM) ends the process at
	// once: the default action is restored before ctx ends, so before
	// anything can log that it is stopping.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Stop(sigs)
		cancel()
	}()
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		var ex exitError
		if errors.As(err, &ex) {
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "deskbot:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine folds a multi-line error (pgx lists every address it dialled on
// its own line, errors.Join joins with newlines) into the one line that
// start-up promises, so log collectors keep it as one event.
func oneLine(msg string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(msg), "\n") {
		switch {
		case i == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteString(" ")
		default:
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimSpace(l))
	}
	return b.String()
}

// exitError ends the process with code after the command printed its own
// diagnostics (rules check prints positioned errors, then exits 1).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

const usage = `deskbot puts an IT service desk into team chat and automates it.

Usage:
  deskbot [run]                        run the bot, the rules scheduler and /healthz /readyz /metrics
  deskbot rules check FILE             validate a rules file
  deskbot rules test FILE --tickets T  show which rules would fire on the tickets in T (JSON)
  deskbot rules why FILE --ticket N    explain every rule against one live ticket
  deskbot rules plan [FILE]            plan the rules on the desk: matches, first run, requests an hour
  deskbot sim [--addr A] [--tickets N] serve the desk simulator alone (100 requests a minute; --rate N)
  deskbot version                      print the version

Configuration comes from the environment (DESKBOT_DESK_URL, DESKBOT_DESK_API_KEY,
SLACK_BOT_TOKEN, SLACK_APP_TOKEN, DESKBOT_RULES, DESKBOT_STATE, ...; see the README).
With none set, deskbot runs an embedded desk simulator and a console chat.
Run 'deskbot COMMAND --help' for a command's flags.
`

// env is what every subcommand receives from run.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// run is the whole program.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	rest := args[1:]
	cmd := "run"
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "run":
		return cmdRun(ctx, e, rest)
	case "rules":
		return cmdRules(ctx, e, rest)
	case "sim":
		return cmdSim(ctx, e, rest)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "deskbot", version)
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// newFlags returns a flag set that reports errors instead of exiting and
// prints its usage with a one-line synopsis: to stdout when the user asked
// for it (-h, --help: `deskbot sim --help | less` works), else to stderr
// next to the error.
func newFlags(e env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&usageWriter{e: e})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: deskbot %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// usageWriter is a flag set's output: stderr, or stdout once parseFlags has
// seen a request for help.
type usageWriter struct {
	e    env
	help bool
}

func (w *usageWriter) Write(p []byte) (int, error) {
	if w.help {
		return w.e.stdout.Write(p)
	}
	return w.e.stderr.Write(p)
}

// asksHelp reports whether args ask for help before any "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// newLogger builds the process logger from DESKBOT_LOG_LEVEL / _FORMAT.
// JSON logs print durations as text ("15s", "1m30s") like text logs do,
// rather than as slog's default integer nanoseconds.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

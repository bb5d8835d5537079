// Command deskbot puts an IT service desk into team chat and automates it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "deskbot:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only hands it the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	_, _, _ = ctx, getenv, stdin
	_ = stderr
	if len(args) > 1 && args[1] == "version" {
		fmt.Fprintln(stdout, "deskbot", version)
		return nil
	}
	return fmt.Errorf("not wired yet")
}

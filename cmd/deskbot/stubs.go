package main

import (
	"context"
	"errors"
)

func cmdRun(ctx context.Context, e env, args []string) error { return errors.New("run: not wired yet") }
func cmdRulesWhy(ctx context.Context, e env, args []string) error {
	return errors.New("rules why: not wired yet")
}

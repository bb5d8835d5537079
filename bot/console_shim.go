package bot

import (
	"errors"
	"io"

	"github.com/deskbot/deskbot/bot/console"
)

// This file is a shim until the issue 12 merge: the console transport lives
// in package bot/console. cmd/deskbot still calls NewConsole; the lead
// deletes this file when cmd calls console.New.

// NewConsole builds the console transport.
//
// Deprecated: use console.New.
func NewConsole(router *Router, in io.Reader, out io.Writer, opts ...console.Option) (*console.Console, error) {
	if router == nil {
		return nil, errors.New("bot: NewConsole: nil router")
	}
	return console.New(router, in, out, opts...)
}

// Package routertest builds the real router for the tests of the
// transports (bot/console, bot/slackchat). It imports bot, so bot's own
// tests cannot use it (they have their own newTestRouter).
//
// What it may import: bot and bot/internal/chattest.
package routertest

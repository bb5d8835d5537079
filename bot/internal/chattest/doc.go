// Package chattest holds the fixtures that the tests of bot and of its
// transports share: chat users, a page, a grouped alert, and a check that
// a text holds given lines. It imports chat, oncall and sdclient only
// (never bot), so that bot's own tests can use it.
//
// What it may import: bot/chat, oncall and sdclient; never bot.
package chattest

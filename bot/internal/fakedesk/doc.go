// Package fakedesk is an in-memory bot.Desk for the tests of bot and its
// transports: a few agents, statuses, groups and tickets, with injected
// errors, delays and panics per operation, and a record of what was
// created, updated and written; also a desk simulator with a few people
// (Sim) and a real ticket mirror that counts its loads (Mirror).
//
// It never imports bot, so that bot's own tests can use it.
//
// What it may import: sdclient, sdclient/sdsim and store; never bot.
package fakedesk

// Package flight merges concurrent lookups of the same key into one call
// (a singleflight that never loses a panic). It is used by the router and
// the Slack transport; it imports nothing of deskbot.
//
// What it may import: the standard library only.
package flight

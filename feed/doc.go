// Package feed follows the desk's change feed into the local mirror of the
// open tickets and publishes each sync's changes to its subscribers.
package feed

// Package sdsim is an in-memory simulator of the service desk. It serves the
// desk's JSON API v2 under /api/v2 over real HTTP, with the real desk's
// envelopes, error bodies, pagination, rate-limit headers, filter language,
// soft deletes and search-index lag, so that deskbot's client, rules,
// scheduler and chat bot can be tested and demonstrated without a desk.
//
// A Desk is safe for concurrent use and works behind any http.Server;
// NewServer wraps one in a ready httptest server for tests.
//
// # What it owns
//
// The fake desk: its state (desk.go, model.go), the generated demo desk
// (generate.go: the same seed makes the same desk, byte for byte), the
// HTTP routes and the handlers of each resource (http.go, tickets.go,
// resources.go, catalog.go), and the traffic layer: rate limit, latency,
// injected faults and the request log (traffic.go). Its wire types repeat
// the client's on purpose, as a protocol fake must: TestWireTypesInStep
// keeps them in step with sdclient's.
//
// # What it may import
//
// Only sdclient/filter of deskbot (the filter language it evaluates), never
// sdclient itself, so that the client is tested against an independent
// reading of the protocol. Tests anywhere in deskbot may import it.
//
// # Patterns to copy
//
//   - A ready fake like httptest.Server: NewServer(opts...) returns a
//     server with URL and Close, plus inspection helpers (Requests,
//     AwaitRequests, Ticket, Conversations) and fault injection
//     (InjectFault) for assertions.
//   - Options as func(*config) (desk.go), applied by New.
//   - A generic kind per resource (resources.go): a resource states its
//     defaults, validation and ids; create, view, update, delete and list
//     are written once.
package sdsim

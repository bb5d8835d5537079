// Package sdclient is deskbot's client for the service desk's JSON API v2
// (a Freshservice-style API under {base_url}/api/v2).
//
// It is shaped like google/go-github: one Client with a service per resource
// (Tickets, Conversations, Agents, ...), every call takes a context first and
// returns (result, *Response, error), Response exposes pagination and rate
// state, and errors are typed (*APIError, *RateLimitError) with errors.Is
// sentinels. The client spends a per-minute request budget with a sliding
// window, keeps a reserve of it for interactive callers (see
// Client.Interactive), waits on 429 for Retry-After and never re-sends a POST
// that may have reached the desk. It decodes 2xx bodies up to a size limit
// (WithMaxResponseBytes) and follows redirects only for reads within the
// desk's origin, so the API key goes nowhere else (redirect.go).
//
// Where the vendor's own sources (its Swagger schema, its SDK's recorded
// example responses in testdata/vendor, its documentation's examples) differ
// from our API description or from each other, decisions.md in this
// directory records which form the client sends and accepts, and why: our
// description wins where it speaks, the vendor's examples outweigh its
// schema, and where nothing decides both forms are accepted.
//
// # What it owns
//
// The wire: the desk's resources as Go types (types.go), one service per
// resource (the plain collections in collections.go, the others and the
// plain ones' extra methods in a file each: tickets.go, conversations.go,
// agents.go, ...), the request budget (limiter.go), the
// retry, redirect and error policy (sdclient.go, redirect.go, errors.go),
// the request metrics (metrics.go: WithMetrics, InstrumentTransport) and
// the record view of a ticket for the filter language (record.go). Its
// sub-packages: filter, the filter-expression language; sdsim, the desk
// simulator, a protocol fake served over HTTP; internal/schemadigest, the
// tool that digests the vendor's schema for the contract test.
//
// # What it may import
//
// sdclient is the lowest floor of deskbot: it imports no deskbot package
// but its own sub-packages (filter), and third-party ones (clockwork,
// prometheus). Everything else (store, rules, oncall, scheduler, bot, cmd)
// may import it; nothing here may import them.
//
// # Patterns to copy
//
//   - The limiter (limiter.go): a sliding window counted in the desk's
//     credits, with a reserve for interactive callers served first, that
//     listens to the desk's own rate headers and 429s. Every wait takes a
//     context and an injectable clock, so tests drive it with a fake clock
//     instead of sleeping.
//   - The per-test server set-up (setup in sdclient_test.go): each test
//     starts its own httptest server with a mux under the API root and a
//     client with a generous budget and recorded sleeps; route asserts the
//     method, query and body of each call. Tests share nothing, so they
//     run in any order, and the contract test checks every exchange
//     against the vendor's schema.
//   - One functional-options style (options.go): Option is func(*config)
//     over an unexported config; options only record, New validates and
//     returns the error naming the option.
//   - A collection states only what differs (collections.go): its names,
//     request body, list options and create check; the generic listing,
//     editing and deleting types (crud.go) give the methods.
//   - Explicit views instead of context values: Interactive, Background
//     and StopWith return clients sharing the transport and limiter.
package sdclient

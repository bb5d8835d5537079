// Command schemadigest reduces the vendor's Swagger 2.0 description of the
// Freshservice API v2 (freshservice-v2.0.1.swagger.yml from the MIT-licensed
// freshworks/freshworks-api-sdk) to the facts sdclient's contract test checks:
// for every operation its method, path, request body, 2xx response bodies
// (envelope keys) and 4xx/5xx error bodies (one key per distinct body), and
// for every definition its field names and JSON types.
// Descriptions, examples, formats, enums and bounds are dropped. The output
// is one JSON Schema (draft 2020-12) document: each schema sits under $defs
// and "operations" lists which $defs key each request and response uses.
//
// Run from sdclient (see the go:generate line in contract_test.go):
//
//	go run ./internal/schemadigest -in ../../shared/reference/freshservice-v2.0.1.swagger.yml \
//		-licence ../../shared/reference/freshservice-v2.0.1.swagger.LICENSE -out testdata/contract/digest.json
package main

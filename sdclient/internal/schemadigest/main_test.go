package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDigest(t *testing.T) {
	src := `
swagger: "2.0"
info: {title: T, version: "1"}
paths:
  /api/v2/things/{thing_id}:
    get:
      parameters:
        - {name: thing_id, in: path, type: integer}
      responses:
        "200": {description: OK, schema: {type: object, properties: {thing: {$ref: "#/definitions/thing"}}}}
        "404": {description: gone, schema: {type: object}}
        "409": {description: in the way, schema: {type: object}}
        "429": {description: too many}
    put:
      parameters:
        - {name: thing, in: body, schema: {$ref: "#/definitions/thing"}}
      responses:
        "204": {description: done}
definitions:
  thing:
    type: object
    properties:
      id: {type: integer, format: int64, example: 3, description: The id}
      tags: {type: array, items: {type: string}}
      type: {type: string, enum: [a, b]}
`
	d, err := digest([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	got := string(b)
	for _, want := range []string{
		`{"method":"GET","path":"/things/{thing_id}","responses":{"200":"op.GET /things/{thing_id}.200"},"errors":{"404":"err.1","409":"err.1"}}`,
		`"err.1":{"type":"object"}`,
		`{"method":"PUT","path":"/things/{thing_id}","request":"op.PUT /things/{thing_id}.request","responses":{"204":""}}`,
		`"def.thing":{"properties":{"id":{"type":"integer"},"tags":{"items":{"type":"string"},"type":"array"},"type":{"type":"string"}},"type":"object"}`,
		`"op.GET /things/{thing_id}.200":{"properties":{"thing":{"$ref":"#/$defs/def.thing"}},"type":"object"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("digest lacks %s\n%s", want, got)
		}
	}
	for _, gone := range []string{"example", "description", "format", "enum", "429", "err.2"} {
		if strings.Contains(got, `"`+gone) {
			t.Errorf("digest keeps %q: %s", gone, got)
		}
	}
	if _, err := digest([]byte(`swagger: "3.0"`)); err == nil {
		t.Error("accepted a non-2.0 file")
	}
}

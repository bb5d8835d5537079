package testkit

import (
	"fmt"
	"strings"
)

// NoteRules is the rules file of the tests that need only rules by name,
// in the file's order: one rule a name, on every open ticket, writing the
// note of its name.
func NoteRules(names ...string) string {
	var b strings.Builder
	b.WriteString("version: 1\nrules:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  - name: %s\n    query: \"status:open\"\n    actions: [{note: %q}]\n", n, n)
	}
	return b.String()
}

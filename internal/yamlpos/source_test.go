package yamlpos

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestBlockParentIndents checks the indentation that an indentation
// indicator adds to, for block scalars in mappings and lists, anchored or
// not.
func TestBlockParentIndents(t *testing.T) {
	src := "a: |2\n   x\nl:\n  - &t |1\n    y\n  -   >2\n       z\nm: &s\n    - |3\n       w\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	src2 := NewSource([]byte(src))
	got := map[string]int{}
	for n, ind := range src2.blockParentIndents(&doc) {
		got[strings.TrimSpace(n.Value)] = ind
	}
	want := map[string]int{"x": 0, "y": 2, "z": 2, "w": 4}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("block scalar %q: parent indentation %d (found %v), want %d", k, g, ok, w)
		}
	}
}

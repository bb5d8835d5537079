package yamlpos

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Resolve follows aliases to the node they stand for (at most 100 deep).
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or a null scalar.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// Describe names the YAML type of a node for messages: a mapping, a list,
// nothing, the string "x", the number 3, the boolean true, or a value
// tagged "!!timestamp".
func Describe(n *yaml.Node) string {
	if d, ok := describeKnown(n); ok {
		return d
	}
	return fmt.Sprintf("a value tagged %q", n.Tag)
}

// describeKnown is Describe for the kinds and tags that have a name.
func describeKnown(n *yaml.Node) (string, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping", true
	case yaml.SequenceNode:
		return "a list", true
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing", true
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value), true
		case "!!int", "!!float":
			return "the number " + n.Value, true
		case "!!bool":
			return "the boolean " + n.Value, true
		}
		return "", false
	}
	return "an alias", true
}

// DescribeValue is Describe that names a scalar of any other tag by its
// tag and value: timestamp "2026-01-05".
func DescribeValue(n *yaml.Node) string {
	if d, ok := describeKnown(n); ok {
		return d
	}
	return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
}

// Describe is the package's Describe, or DescribeValue when the
// reporter's TagValues is set.
func (r *Reporter) Describe(n *yaml.Node) string {
	if r.TagValues {
		return DescribeValue(n)
	}
	return Describe(n)
}

// Pair is one key of a mapping and its value, aliases resolved.
type Pair struct{ Key, Val *yaml.Node }

// ByKey indexes pairs by key.
func ByKey(pairs []Pair) map[string]Pair {
	m := make(map[string]Pair, len(pairs))
	for _, p := range pairs {
		m[p.Key.Value] = p
	}
	return m
}

// Keys says which keys a mapping may hold, and how problems with them
// read.
type Keys struct {
	// Allowed lists the keys; nil allows any key.
	Allowed []string
	// Extra, when set, allows the keys it accepts beside Allowed.
	Extra func(key string) bool
	// Want, when set, replaces the list of Allowed in the unknown key
	// message (want one of WANT).
	Want string
	// Hint, when set, returns what to add to the unknown key message.
	Hint func(key string) string
	// ScopeDuplicates starts the duplicate key message with what names the
	// mapping (WHAT: duplicate key ...).
	ScopeDuplicates bool
	// UnknownTwice reports an unknown key written twice as unknown both
	// times; else the second is a duplicate key.
	UnknownTwice bool
}

// Strict reports whether Mapping read every key of n: no key was refused.
func Strict(n *yaml.Node, pairs []Pair) bool { return len(pairs)*2 == len(n.Content) }

// Mapping checks that n is a mapping whose keys are distinct plain
// scalars among keys, and returns its pairs in file order; what names n in
// messages. It reports false only when n is not a mapping; a refused key
// is reported and left out (see Strict).
func (r *Reporter) Mapping(n *yaml.Node, what string, keys Keys) ([]Pair, bool) {
	if n.Kind != yaml.MappingNode {
		r.Node(n, "%s: want a mapping, got %s", what, r.Describe(n))
		return nil, false
	}
	seen := map[string]int{}
	var out []Pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Resolve(n.Content[i]), Resolve(n.Content[i+1])
		if !r.badKey(k, what, keys, seen) {
			out = append(out, Pair{k, v})
		}
	}
	return out, true
}

// badKey reports the problem of key k of a mapping, if it has one; seen
// holds the line of each key read before.
func (r *Reporter) badKey(k *yaml.Node, what string, keys Keys, seen map[string]int) bool {
	if k.Kind != yaml.ScalarNode {
		r.Node(k, "%s: want a plain key, got %s", what, r.Describe(k))
		return true
	}
	if line, dup := seen[k.Value]; dup {
		if keys.ScopeDuplicates {
			r.Node(k, "%s: duplicate key %q (first at line %d)", what, k.Value, line)
		} else {
			r.Node(k, "duplicate key %q (first at line %d)", k.Value, line)
		}
		return true
	}
	if keys.allows(k.Value) {
		seen[k.Value] = k.Line
		return false
	}
	if !keys.UnknownTwice {
		seen[k.Value] = k.Line
	}
	want, hint := keys.Want, ""
	if want == "" {
		want = strings.Join(keys.Allowed, ", ")
	}
	if keys.Hint != nil {
		hint = keys.Hint(k.Value)
	}
	r.Node(k, "unknown key %q in %s (want one of %s)%s", k.Value, what, want, hint)
	return true
}

func (k Keys) allows(key string) bool {
	return k.Allowed == nil || slices.Contains(k.Allowed, key) || (k.Extra != nil && k.Extra(key))
}

// Str returns the value of a string scalar.
func (r *Reporter) Str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		r.Node(n, "%s: want a string, got %s", what, r.Describe(n))
		return "", false
	}
	return n.Value, true
}

// Int returns the value of an integer scalar.
func (r *Reporter) Int(n *yaml.Node, what string) (int64, bool) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		r.Node(n, "%s: want an integer, got %s", what, r.Describe(n))
		return 0, false
	}
	return v, true
}

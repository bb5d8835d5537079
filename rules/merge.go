package rules

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
)

// maxMergedPairs bounds the key/value pairs that merge keys may copy in a
// whole file. Merging shares nodes and expands every mapping once, so an
// alias bomb stays linear; a chain of mappings each merging the previous
// one still copies quadratically many pairs, and this cap stops it.
// yaml.v3's own alias guard does not help here: it only applies when
// decoding into Go values, never into a yaml.Node.
const maxMergedPairs = 100_000

// merger expands YAML 1.1 merge keys (<<) in a yaml.Node tree, in place,
// before the strict loader reads it: `<<: *a` or `<<: [*a, *b]` copies the
// pairs of the merged mappings whose keys the mapping does not write
// itself; of several merged mappings the earlier wins. The copied nodes
// keep their positions in the anchored mapping, so problems with a merged
// value point at where it is written, and the loader names the rule that
// merged it.
type merger struct {
	state  map[*yaml.Node]uint8 // mappings: mergeBusy while expanding, then mergeDone
	seen   map[*yaml.Node]bool  // nodes whose subtree walk has visited
	copied int                  // pairs copied so far
	errs   []mergeErr
}

const (
	mergeBusy = 1 + iota
	mergeDone
)

// mergeErr is a problem of a merge key, reported by the loader once it
// knows which rule (if any) the merge belongs to.
type mergeErr struct {
	n   *yaml.Node
	msg string
}

func newMerger() *merger {
	return &merger{state: map[*yaml.Node]uint8{}, seen: map[*yaml.Node]bool{}}
}

// take returns the problems found since the last take.
func (m *merger) take() []mergeErr {
	e := m.errs
	m.errs = nil
	return e
}

func (m *merger) errorf(n *yaml.Node, format string, args ...any) {
	m.errs = append(m.errs, mergeErr{n: n, msg: fmt.Sprintf(format, args...)})
}

// isMergeKey reports whether k is the merge key: a plain << (yaml.v3 tags
// it !!merge), not the string "<<".
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" &&
		(k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge" || k.Tag == "" || k.Tag == "!")
}

// walk expands the merge keys of every mapping reachable from n, aliases
// followed, each node once (so alias cycles end).
func (m *merger) walk(n *yaml.Node) {
	for n != nil && !m.seen[n] {
		m.seen[n] = true
		if n.Kind == yaml.AliasNode {
			n = n.Alias
			continue
		}
		if n.Kind == yaml.MappingNode {
			m.mapping(n)
		}
		for _, c := range n.Content {
			m.walk(c)
		}
		return
	}
}

// mapping expands the merge keys of mapping n (not of its values).
func (m *merger) mapping(n *yaml.Node) {
	if m.state[n] != 0 {
		return
	}
	m.state[n] = mergeBusy
	defer func() { m.state[n] = mergeDone }()
	has := false
	written := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			has = true
		} else if k := yamlpos.Resolve(n.Content[i]); k.Kind == yaml.ScalarNode {
			written[k.Value] = true
		}
	}
	if !has {
		return
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	var first *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			out = append(out, k, v)
			continue
		}
		if first != nil {
			m.errorf(k, "duplicate merge key <<: (first at line %d): merge several mappings with one <<: [*a, *b]", first.Line)
			continue
		}
		first = k
		for _, src := range m.sources(v) {
			for j := 0; j+1 < len(src.Content); j += 2 {
				sk := yamlpos.Resolve(src.Content[j])
				if sk.Kind == yaml.ScalarNode {
					if written[sk.Value] {
						continue // written in the mapping itself, or merged from an earlier one
					}
					written[sk.Value] = true
				}
				if m.copied >= maxMergedPairs {
					if m.copied == maxMergedPairs { // report once
						m.errorf(k, "merge key <<: the file merges more than %d keys in all: share fewer, larger mappings", maxMergedPairs)
						m.copied++
					}
					break
				}
				m.copied++
				out = append(out, src.Content[j], src.Content[j+1])
			}
		}
	}
	n.Content = out
}

// sources returns the mappings that merge value v names, their own merge
// keys expanded, reporting anything that is not a mapping.
func (m *merger) sources(v *yaml.Node) []*yaml.Node {
	const want = "merge key <<: wants a mapping or a list of mappings"
	r := yamlpos.Resolve(v)
	switch r.Kind {
	case yaml.MappingNode:
		if src := m.source(v); src != nil {
			return []*yaml.Node{src}
		}
		return nil
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, item := range r.Content {
			if ri := yamlpos.Resolve(item); ri.Kind != yaml.MappingNode {
				m.errorf(item, "%s, got a list holding %s", want, describeAlias(item))
				continue
			}
			if src := m.source(item); src != nil {
				out = append(out, src)
			}
		}
		return out
	}
	m.errorf(v, "%s, got %s", want, describeAlias(v))
	return nil
}

// source expands the merge keys of the mapping that n is or names; nil
// (with an error) when that mapping is still being expanded: a cycle.
func (m *merger) source(n *yaml.Node) *yaml.Node {
	r := yamlpos.Resolve(n)
	if m.state[r] == mergeBusy {
		m.errorf(n, "merge key <<: %s merges a mapping into itself (an alias cycle)", describeAlias(n))
		return nil
	}
	m.mapping(r)
	return r
}

// describeAlias describes n for messages, naming the alias it is written as.
func describeAlias(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		if r := yamlpos.Resolve(n); r.Kind != yaml.AliasNode {
			return fmt.Sprintf("*%s (%s)", n.Value, yamlpos.Describe(r))
		}
		return "*" + n.Value
	}
	return yamlpos.Describe(n)
}

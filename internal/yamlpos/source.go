package yamlpos

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Unmarshal parses data into doc. A panic of the YAML parser on hostile
// input becomes an error.
func Unmarshal(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(data, doc)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserProblems are the problems of libyaml's parser (as opposed to
// its scanner); yaml.v3 prints their line 0-based.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// SyntaxProblem splits an error of Unmarshal into the 1-based line it is
// on (1 when the error names none) and its message without yaml.v3's
// "yaml: line N: " prefix. yaml.v3 counts the lines of some parser errors
// from 0: SyntaxProblem counts them from 1, as the file's lines are.
func SyntaxProblem(err error) (line int, msg string) {
	line, msg = 1, err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return line, strings.TrimPrefix(msg, "yaml: ")
	}
	line, _ = strconv.Atoi(m[1])
	msg = m[2]
	if yamlParserProblems[msg] {
		line++
	}
	return line, msg
}

// SplitLines splits src at YAML's line breaks: \r\n, \r, \n, and the
// Unicode NEL, LS and PS, so that lines count as the parser counts them.
func SplitLines(src string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(src); {
		n := lineBreakAt(src, i)
		if n == 0 {
			i++
			continue
		}
		lines = append(lines, src[start:i])
		i += n
		start = i
	}
	return append(lines, src[start:])
}

// lineBreakAt returns the length in bytes of the line break at src[i:], 0
// when there is none.
func lineBreakAt(src string, i int) int {
	switch {
	case src[i] == '\n':
		return 1
	case src[i] == '\r':
		if i+1 < len(src) && src[i+1] == '\n' {
			return 2
		}
		return 1
	case strings.HasPrefix(src[i:], "\u0085"), strings.HasPrefix(src[i:], "\u2028"), strings.HasPrefix(src[i:], "\u2029"):
		_, n := utf8.DecodeRuneInString(src[i:])
		return n
	}
	return 0
}

// Source is the text of a YAML file, to position things inside its
// scalars.
type Source struct {
	lines []string
	// blockIndent holds, for each block scalar, the indentation of the
	// collection it is written in (-1 at the top level): with an
	// indentation indicator (|2) the text is indented that much more.
	blockIndent map[*yaml.Node]int
}

// NewSource returns the source of a file.
func NewSource(data []byte) *Source {
	return &Source{lines: SplitLines(string(data)), blockIndent: map[*yaml.Node]int{}}
}

// Lines returns the file's lines (SplitLines); the caller must not
// modify them.
func (s *Source) Lines() []string { return s.lines }

// Index records where the block scalars of doc, the file parsed, are
// written, for Pos. Call it before anything (merge keys) copies nodes
// into other collections.
func (s *Source) Index(doc *yaml.Node) { s.blockIndent = s.blockParentIndents(doc) }

// line returns the runes of 1-based line i, nil outside the file.
func (s *Source) line(i int) []rune {
	if i < 1 || i > len(s.lines) {
		return nil
	}
	return []rune(s.lines[i-1])
}

// blankFrom reports whether r holds only blanks from i on.
func blankFrom(r []rune, i int) bool {
	for ; i < len(r); i++ {
		if r[i] != ' ' && r[i] != '\t' {
			return false
		}
	}
	return true
}

// indent returns the number of leading blanks of r.
func indent(r []rune) int {
	i := 0
	for i < len(r) && (r[i] == ' ' || r[i] == '\t') {
		i++
	}
	return i
}

// blockParentIndents maps every block scalar under doc to the indentation
// (0-based column) of the block mapping or sequence it is written in, -1
// at the top level: what the YAML scanner adds an indentation indicator
// to. It runs before merge keys copy nodes into other mappings.
func (s *Source) blockParentIndents(doc *yaml.Node) map[*yaml.Node]int {
	out := map[*yaml.Node]int{}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for i, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				out[c] = s.parentIndent(n, i)
			}
			walk(c)
		}
	}
	walk(doc)
	return out
}

// parentIndent returns the indentation of collection n, for its block
// scalar n.Content[i].
func (s *Source) parentIndent(n *yaml.Node, i int) int {
	switch {
	case n.Kind == yaml.MappingNode && i%2 == 1:
		return n.Content[i-1].Column - 1 // the key's column
	case n.Kind == yaml.SequenceNode:
		return s.entryColumn(n)
	}
	return -1
}

// entryColumn returns the 0-based column of the - of the first item of
// block sequence n: the node's own position is its anchor's or tag's when
// it has one.
func (s *Source) entryColumn(n *yaml.Node) int {
	if len(n.Content) > 0 && n.Content[0].Line >= 1 && n.Content[0].Line <= len(s.lines) {
		first := n.Content[0]
		r := []rune(s.lines[first.Line-1])
		for i := min(first.Column-2, len(r)-1); i >= 0; i-- {
			if r[i] == '-' {
				return i
			}
			if r[i] != ' ' && r[i] != '\t' {
				break
			}
		}
	}
	return n.Column - 1
}

// blockHeader finds the header (| or >) of block scalar n: its line, and
// its indentation indicator (0 when there is none). The node's position
// is that of its anchor or tag when it has one, which may be on an earlier
// line than the header.
func (s *Source) blockHeader(n *yaml.Node) (line, indicator int) {
	col := n.Column - 1
	for line = n.Line; line >= 1 && line <= len(s.lines); line, col = line+1, 0 {
		if at, found := headerIn([]rune(s.lines[line-1]), col); found {
			return line, at
		}
	}
	return n.Line, 0
}

// headerIn looks for a block scalar's header in r from column col on,
// past blanks, anchors and tags: found, with its indentation indicator
// (0 when there is none), or not on this line (a comment or the end).
func headerIn(r []rune, col int) (indicator int, found bool) {
	for i := col; i < len(r); i++ {
		switch r[i] {
		case ' ', '\t':
			continue
		case '#':
			return 0, false // a comment: on to the next line
		case '|', '>':
			for j := i + 1; j < len(r) && j <= i+2; j++ {
				if r[j] >= '1' && r[j] <= '9' {
					return int(r[j] - '0'), true
				}
			}
			return 0, true
		}
		// An anchor or a tag: skip to the blank after it.
		for i < len(r) && r[i] != ' ' && r[i] != '\t' {
			i++
		}
	}
	return 0, false
}

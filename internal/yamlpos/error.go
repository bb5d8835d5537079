package yamlpos

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem of a YAML file, positioned in the file.
type Error struct {
	File string
	Line int // 1-based
	Col  int // 1-based
	// Scope names the part of the file the problem is in, such as
	// rule "a" or oncall schedule "x"; empty for none.
	Scope string
	Msg   string
}

// Error formats the problem as FILE:LINE:COL: SCOPE: message (without the
// scope part when Scope is empty).
func (e Error) Error() string {
	if e.Scope != "" {
		return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Scope, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Unscoped returns the problem with its scope moved into the message:
// Msg reads SCOPE: message. Error is the same.
func (e Error) Unscoped() Error {
	if e.Scope != "" {
		e.Msg = e.Scope + ": " + e.Msg
		e.Scope = ""
	}
	return e
}

// KnownNames lists the names a reference may take, for a message about
// one that is unknown: "known: a, b" sorted, or "none are defined". It
// sorts names in place.
func KnownNames(names []string) string {
	if len(names) == 0 {
		return "none are defined"
	}
	sort.Strings(names)
	return "known: " + strings.Join(names, ", ")
}

// Sort orders errs by position in the file, keeping the order of problems
// at one position.
func Sort(errs []Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

var lineBreaks = strings.NewReplacer("\r\n", `\r\n`, "\n", `\n`, "\r", `\r`, "\u0085", `\u0085`, "\u2028", `\u2028`, "\u2029", `\u2029`)

// Reporter collects the problems of one file. Its zero value, with File
// set, is ready to use.
type Reporter struct {
	// File names the file in messages.
	File string
	// Scope is given to every problem reported while it is set.
	Scope string
	// TagValues names scalars of other tags by tag and value in messages
	// (DescribeValue) rather than by tag (Describe).
	TagValues bool
	errs      []Error
}

// At reports a problem at line and col (1-based; smaller values count as
// 1). One problem, one line: a line break in the message is quoted.
func (r *Reporter) At(line, col int, format string, args ...any) {
	msg := lineBreaks.Replace(fmt.Sprintf(format, args...))
	r.Add(Error{File: r.File, Line: max(line, 1), Col: max(col, 1), Scope: r.Scope, Msg: msg})
}

// Node reports a problem at node n.
func (r *Reporter) Node(n *yaml.Node, format string, args ...any) {
	r.At(n.Line, n.Column, format, args...)
}

// Add reports a problem as it is.
func (r *Reporter) Add(e Error) { r.errs = append(r.errs, e) }

// Len returns how many problems were reported so far.
func (r *Reporter) Len() int { return len(r.errs) }

// Errors returns the problems, sorted by position.
func (r *Reporter) Errors() []Error {
	Sort(r.errs)
	return r.errs
}

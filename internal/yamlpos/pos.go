package yamlpos

import (
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// RuneOffset converts byte offset pos of s (clamped to s) to a rune
// offset, as Pos takes it.
func RuneOffset(s string, pos int) int {
	pos = min(max(pos, 0), len(s))
	return utf8.RuneCountInString(s[:pos])
}

// Pos maps a rune offset in the value of scalar n to its line and column
// in the file. It walks the scalar's source as the YAML scanner reads it:
// block scalars (| and >) start on the line after their indicator, a quoted
// scalar's text after its quote; escapes (\" \t \u00e9, or a doubled quote in single
// quotes) are several source characters for one of the value; a line break
// folded into a space, blank lines folded into line feeds, the indentation
// and trailing blanks of continued lines, and an escaped line break are
// followed back to the source.
func (s *Source) Pos(n *yaml.Node, off int) (line, col int) {
	off = max(off, 0)
	w := s.walker(n)
	for guard := 0; guard <= len(s.lines); guard++ {
		r := s.line(w.line)
		if r == nil {
			break
		}
		ls := w.scanLine(r, off)
		if ls.found {
			return w.line, ls.col
		}
		if off == w.v || ls.last {
			return w.line, ls.end + 1
		}
		next := w.line + 1
		for next <= len(s.lines) && blankFrom(s.line(next), 0) {
			next++
		}
		w.v += w.breakWidth(r, s.line(next), next-w.line-1, ls.escapedBreak)
		if off < w.v {
			return w.line, ls.end + 1
		}
		w.line = next
		w.start = w.bindent
		if !w.block {
			w.start = indent(s.line(next))
		}
	}
	return n.Line, n.Column
}

// scalarWalk follows the source of a scalar, line by line.
type scalarWalk struct {
	block, literal, folded, double, single bool
	line                                   int // 1-based line being read
	start                                  int // 0-based rune column of the text on that line
	bindent                                int // a block scalar's indentation
	v                                      int // value offset reached
}

// walker starts the walk of scalar n at its first character.
func (s *Source) walker(n *yaml.Node) *scalarWalk {
	w := &scalarWalk{
		literal: n.Style&yaml.LiteralStyle != 0,
		folded:  n.Style&yaml.FoldedStyle != 0,
		double:  n.Style&yaml.DoubleQuotedStyle != 0,
		single:  n.Style&yaml.SingleQuotedStyle != 0,
		line:    n.Line,
		start:   n.Column - 1,
	}
	w.block = w.literal || w.folded
	switch {
	case w.block:
		header, indicator := s.blockHeader(n)
		w.line = header + 1
		w.bindent = s.blockIndentation(n, w.line, indicator)
		w.start = w.bindent
	case w.double || w.single:
		w.start++
	}
	return w
}

// blockIndentation returns the indentation every line of block scalar n
// shares: the enclosing collection's plus the header's indentation
// indicator (|2), or else that of its first non-blank line (from line
// first); more indentation is part of the text.
func (s *Source) blockIndentation(n *yaml.Node, first, indicator int) int {
	if parent, known := s.blockIndent[n]; indicator > 0 && known {
		return max(parent, 0) + indicator
	}
	for i := first; i <= len(s.lines); i++ {
		if r := s.line(i); !blankFrom(r, 0) {
			return indent(r)
		}
	}
	return 0
}

// lineScan is what scanLine found on one line.
type lineScan struct {
	found        bool // the offset is on the line, at col
	col          int  // 1-based
	end          int  // 0-based end of the line's text
	last         bool // a closing quote ends the scalar on this line
	escapedBreak bool // the line ends in an escaped line break
}

// scanLine reads the text of line r: up to the closing quote, or the end
// of the line less (outside block scalars) its trailing blanks. It stops
// at value offset off.
func (w *scalarWalk) scanLine(r []rune, off int) lineScan {
	end := len(r)
	if !w.block {
		for end > w.start && (r[end-1] == ' ' || r[end-1] == '\t') {
			end--
		}
	}
	for i := w.start; i < end; {
		width, closing, escapedBreak := w.char(r, i, end)
		if closing || escapedBreak {
			return lineScan{end: i, last: closing, escapedBreak: escapedBreak}
		}
		if off == w.v {
			return lineScan{found: true, col: i + 1}
		}
		w.v++
		i += width
	}
	return lineScan{end: end}
}

// char reads the source character r[i] (the text ends at end): how many
// source characters make one of the value, or that it is the closing
// quote, or an escaped line break.
func (w *scalarWalk) char(r []rune, i, end int) (width int, closing, escapedBreak bool) {
	switch {
	case w.double && r[i] == '"', w.single && r[i] == '\'' && (i+1 >= len(r) || r[i+1] != '\''):
		return 1, true, false
	case w.double && r[i] == '\\' && i+1 >= end:
		return 1, false, true
	case w.double && r[i] == '\\':
		return escapeWidth(r[i+1]), false, false
	case w.single && r[i] == '\'':
		return 2, false, false
	}
	return 1, false, false
}

// escapeWidth returns the length of a double-quoted escape \c...
func escapeWidth(c rune) int {
	switch c {
	case 'x':
		return 4
	case 'u':
		return 6
	case 'U':
		return 10
	}
	return 2
}

// breakWidth returns what the line break after line r is in the value:
// nothing when escaped; else a line feed per blank line that follows, or
// one space (a line feed in literal blocks and around more-indented lines
// of folded ones) when none does. next is the next non-blank line.
func (w *scalarWalk) breakWidth(r, next []rune, blanks int, escapedBreak bool) int {
	switch {
	case escapedBreak:
		return 0
	case w.literal:
		return 1 + blanks
	case w.folded && (indent(r) > w.bindent || indent(next) > w.bindent):
		return 1 + blanks
	case blanks > 0:
		return blanks
	}
	return 1
}

package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest expression the desk accepts: the text between the
// outer double quotes, counted in bytes (never fewer than its characters, so
// a query within it is within the desk's limit however the desk counts).
const MaxLen = 512

// dquoteHint explains a stray double quote.
const dquoteHint = " (the whole query goes inside one pair of double quotes; quote values with single quotes)"

// maxDepth bounds the nesting of parentheses.
const maxDepth = 100

// ErrTooLong is wrapped by the errors of CheckLen, Encode and ParseQuoted
// when an expression is longer than MaxLen.
var ErrTooLong = errors.New("filter expression too long")

// SyntaxError is a parse error at a byte offset of the source.
type SyntaxError struct {
	// Pos is the 0-based byte offset of the problem.
	Pos int
	// Msg says what was expected and what was found.
	Msg string
	// Err is an underlying cause such as ErrTooLong, or nil.
	Err error
}

// Error returns "filter: column N: MSG", N being Pos+1.
func (e *SyntaxError) Error() string { return fmt.Sprintf("filter: column %d: %s", e.Pos+1, e.Msg) }

// Unwrap returns the underlying cause, if any.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Parse parses a filter expression (the text that goes between the query's
// outer double quotes). Errors are *SyntaxError.
func Parse(src string) (Expr, error) {
	return parse(src, 0, len(src))
}

// ParseQuoted parses a query as the desk receives it after URL-decoding: the
// whole "..." including the outer double quotes. Error positions count from
// the opening quote, and so do the terms' Pos. An expression longer than
// MaxLen between the quotes is an error wrapping ErrTooLong.
func ParseQuoted(q string) (Expr, error) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, &SyntaxError{Pos: 0, Msg: `the query must be enclosed in double quotes, e.g. query="status:2 AND priority:4"`}
	}
	if n := len(q) - 2; n > MaxLen {
		return nil, &SyntaxError{Pos: 0, Msg: fmt.Sprintf("query is %d characters long; the desk accepts at most %d between the double quotes", n, MaxLen), Err: ErrTooLong}
	}
	return parse(q, 1, len(q)-1)
}

type parser struct {
	src   string
	pos   int
	end   int
	depth int
}

func parse(src string, start, end int) (Expr, error) {
	p := &parser{src: src, pos: start, end: end}
	e, err := p.expr(-1)
	if err != nil {
		return nil, err
	}
	// expr returns at end of input or at a ')' it did not consume.
	if p.pos < p.end {
		return nil, p.errf(p.pos, "unbalanced ')'")
	}
	return e, nil
}

func (p *parser) errf(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// isBareChar reports whether c may appear in an unquoted value.
func isBareChar(c byte) bool {
	return isIdentChar(c) || c == '-' || c == '.' || c == '@' || c == '+' || c == ':'
}

func (p *parser) skipSpace() {
	for p.pos < p.end && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

// describe names what is at pos for an error message: end of input, space,
// a word such as "AND", or one character such as ")".
func (p *parser) describe(pos int) string {
	if pos >= p.end {
		return "end of input"
	}
	c := p.src[pos]
	switch {
	case c == ' ':
		return "space"
	case c == '\t':
		return "tab"
	case c == '\n' || c == '\r':
		return "newline"
	case isBareChar(c) && c != ':':
		i := pos
		for i < p.end && isBareChar(p.src[i]) && p.src[i] != ':' && i-pos < 40 {
			i++
		}
		return strconv.Quote(p.src[pos:i])
	}
	if c == '"' {
		return `'"'`
	}
	r, _ := utf8.DecodeRuneInString(p.src[pos:p.end])
	return strconv.Quote(string(r))
}

// word returns the identifier at pos (possibly empty).
func (p *parser) word(pos int) string {
	i := pos
	for i < p.end && isIdentChar(p.src[i]) {
		i++
	}
	return p.src[pos:i]
}

// expr parses operands joined by one kind of connective, up to end of input
// or an unconsumed ')'. open is the offset of the '(' that began this group,
// or -1 at the top level.
func (p *parser) expr(open int) (Expr, error) {
	after := "" // what the next operand follows, for messages
	if open >= 0 {
		after = "'('"
	}
	first, err := p.operand(after)
	if err != nil {
		return nil, err
	}
	var (
		exprs  []Expr
		conn   string // "AND" or "OR" once seen
		connAt int
	)
	for {
		p.skipSpace()
		if p.pos >= p.end || p.src[p.pos] == ')' {
			break
		}
		at := p.pos
		w := p.word(at)
		switch {
		case w == "AND" || w == "OR":
		case strings.EqualFold(w, "and") || strings.EqualFold(w, "or"):
			return nil, p.errf(at, "expected AND or OR, found %q (the keywords are uppercase)", w)
		default:
			want := "AND, OR or end of input"
			if open >= 0 {
				want = "AND, OR or ')'"
			}
			msg := fmt.Sprintf("expected %s after a term, found %s", want, p.describe(at))
			if p.src[at] == '"' {
				msg += dquoteHint
			}
			return nil, &SyntaxError{Pos: at, Msg: msg}
		}
		if conn == "" {
			conn, connAt = w, at
			exprs = append(exprs, first)
		} else if w != conn {
			return nil, p.errf(at, "%s after %s (column %d) at the same level: an OR group combined with AND must be parenthesized, e.g. a:1 AND (b:2 OR c:3)", w, conn, connAt+1)
		}
		p.pos += len(w)
		x, err := p.operand(w)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, x)
	}
	if conn == "" {
		return first, nil
	}
	if conn == "AND" {
		return normalize(&And{Exprs: exprs}), nil
	}
	return normalize(&Or{Exprs: exprs}), nil
}

// operand parses a term or a parenthesized group. after names what precedes
// it ("AND", "'('", or "" at the start) for messages.
func (p *parser) operand(after string) (Expr, error) {
	p.skipSpace()
	ctx := ""
	if after != "" {
		ctx = " after " + after
	}
	if p.pos >= p.end {
		return nil, p.errf(p.pos, "expected a term or '('%s, found end of input", ctx)
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		open := p.pos
		p.depth++
		if p.depth > maxDepth {
			return nil, p.errf(open, "parentheses nested more than %d deep", maxDepth)
		}
		p.pos++
		x, err := p.expr(open)
		if err != nil {
			return nil, err
		}
		if p.pos >= p.end {
			return nil, p.errf(p.pos, "expected ')' to close '(' at column %d, found end of input", open+1)
		}
		p.pos++ // ')'
		p.depth--
		return x, nil
	case isIdentStart(c):
		return p.term()
	case c == '"':
		return nil, p.errf(p.pos, "expected a term or '('%s, found '\"'%s", ctx, dquoteHint)
	}
	return nil, p.errf(p.pos, "expected a term or '('%s, found %s", ctx, p.describe(p.pos))
}

// term parses field:value, field:>value or field:<value.
func (p *parser) term() (Expr, error) {
	start := p.pos
	field := p.word(start)
	if field == "AND" || field == "OR" {
		return nil, p.errf(start, "expected a term, found %s", field)
	}
	p.pos += len(field)
	if p.pos >= p.end || p.src[p.pos] != ':' {
		at := p.pos
		if at < p.end && isSpace(p.src[at]) {
			p.skipSpace()
			if p.pos < p.end && p.src[p.pos] == ':' {
				return nil, p.errf(at, "expected ':' right after field %q, found space (remove the space before ':')", field)
			}
			at = p.pos
		}
		return nil, p.errf(at, "expected ':' after field %q, found %s", field, p.describe(at))
	}
	p.pos++
	p.skipSpace()
	op := OpEq
	if p.pos < p.end {
		switch p.src[p.pos] {
		case '>':
			op = OpGte
			p.pos++
		case '<':
			op = OpLte
			p.pos++
		}
		if op != OpEq {
			p.skipSpace()
		}
	}
	v, err := p.value(field, op)
	if err != nil {
		return nil, err
	}
	return &Term{Field: field, Op: op, Value: v, Pos: start}, nil
}

// value parses the value of a term and checks what follows it.
func (p *parser) value(field string, op Op) (Value, error) {
	at := p.pos
	lead := field + op.String()
	if at >= p.end {
		return Value{}, p.errf(at, "expected a value after %q, found end of input", lead)
	}
	var (
		v   Value
		err error
	)
	switch c := p.src[at]; {
	case c == '\'':
		v, err = p.quoted()
	case isBareChar(c) && c != ':':
		v, err = p.bare(lead)
	default:
		msg := fmt.Sprintf("expected a value after %q, found %s", lead, p.describe(at))
		switch {
		case c == '=' && op != OpEq:
			msg += " (:> and :< are already inclusive; there is no >=)"
		case c == '"':
			msg += " (quote values with single quotes)"
		}
		return Value{}, &SyntaxError{Pos: at, Msg: msg}
	}
	if err != nil {
		return Value{}, err
	}
	if p.pos < p.end {
		if c := p.src[p.pos]; !isSpace(c) && c != ')' {
			msg := fmt.Sprintf("expected a space, ')' or end of input after the value of %q, found %s", field, p.describe(p.pos))
			if c == '"' {
				msg += dquoteHint
			}
			return Value{}, &SyntaxError{Pos: p.pos, Msg: msg}
		}
	}
	return v, nil
}

// quoted parses a single-quoted string with \' and \\ escapes and classifies
// it: a date or datetime becomes KindDate, anything else KindString.
func (p *parser) quoted() (Value, error) {
	start := p.pos
	p.pos++
	var b []byte // only when there are escapes
	from := p.pos
	for {
		if p.pos >= p.end {
			return Value{}, p.errf(start, "unterminated string starting at column %d", start+1)
		}
		c := p.src[p.pos]
		switch c {
		case '\'':
			s := p.src[from:p.pos]
			if b != nil {
				s = string(append(b, s...))
			}
			p.pos++
			v, err := classifyDate(s)
			if err != nil {
				return Value{}, p.errf(start, "%v", err)
			}
			return v, nil
		case '"':
			return Value{}, p.errf(p.pos, "double quote in the string starting at column %d: the desk wraps the whole query in double quotes, so a value cannot contain '\"'", start+1)
		case '\\':
			if p.pos+1 >= p.end {
				return Value{}, p.errf(start, "unterminated string starting at column %d", start+1)
			}
			n := p.src[p.pos+1]
			if n != '\'' && n != '\\' {
				r, _ := utf8.DecodeRuneInString(p.src[p.pos+1 : p.end])
				return Value{}, p.errf(p.pos, "invalid escape \\%c in the string starting at column %d: only \\' and \\\\ are allowed", r, start+1)
			}
			b = append(b, p.src[from:p.pos]...)
			b = append(b, n)
			p.pos += 2
			from = p.pos
		default:
			p.pos++
		}
	}
}

// bare parses an unquoted value: an integer, a date or datetime, null, true,
// false, or else a word.
func (p *parser) bare(lead string) (Value, error) {
	start := p.pos
	for p.pos < p.end && isBareChar(p.src[p.pos]) {
		p.pos++
	}
	s := p.src[start:p.pos]
	switch {
	case s == "AND" || s == "OR":
		return Value{}, p.errf(start, "expected a value after %q, found %s", lead, s)
	case isInteger(s):
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, p.errf(start, "number %s is out of range", s)
		}
		return Number(n), nil
	case strings.EqualFold(s, "null"):
		return Null(), nil
	case strings.EqualFold(s, "true"):
		return Bool(true), nil
	case strings.EqualFold(s, "false"):
		return Bool(false), nil
	}
	v, err := classifyDate(s)
	if err != nil {
		return Value{}, p.errf(start, "%v", err)
	}
	if v.Kind == KindString {
		v = Word(s)
	}
	return v, nil
}

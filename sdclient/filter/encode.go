package filter

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// LengthError says an expression is longer than MaxLen. It wraps ErrTooLong.
type LengthError struct {
	// Len is the length of the canonical text, in bytes.
	Len int
}

// Error says how long the expression is and what the limit is.
func (e *LengthError) Error() string {
	return fmt.Sprintf("filter: query is %d characters long; the desk accepts at most %d", e.Len, MaxLen)
}

// Unwrap returns ErrTooLong.
func (e *LengthError) Unwrap() error { return ErrTooLong }

// CheckLen returns a *LengthError if the canonical text of e is longer than
// MaxLen, the desk's limit; callers check after expanding macros, which can
// make a short query long.
func CheckLen(e Expr) error {
	if e == nil {
		return nil
	}
	if n := len(e.String()); n > MaxLen {
		return &LengthError{Len: n}
	}
	return nil
}

// Encode returns the value to put after query= in a GET /tickets/filter URL:
// the canonical text of e wrapped in double quotes and percent-encoded, with
// %20 for spaces (never '+'). It fails on an empty expression, on text longer
// than MaxLen (a *LengthError), and on anything that would not reach the desk
// intact: a field name that is not an identifier, a value containing '"'
// (which would end the outer quotes), an unquoted word (an unexpanded macro
// such as status:open). Encode does not check fields against a schema; see Schema.Validate.
func Encode(e Expr) (string, error) {
	n := normalize(e)
	if n == nil {
		return "", errors.New("filter: encode: empty expression")
	}
	for _, t := range Terms(n) {
		if !isIdentifier(t.Field) {
			return "", fmt.Errorf("filter: encode: invalid field name %q: want a letter or '_' followed by letters, digits or '_'", t.Field)
		}
		if t.Value.Kind == KindWord {
			return "", fmt.Errorf("filter: encode: unquoted value %s in %s: quote strings, and expand deskbot macros such as status:open before sending", t.Value.Str, t.Field)
		}
		if s, ok := t.Value.asText(); ok && strings.Contains(s, `"`) {
			return "", fmt.Errorf("filter: encode: the value of %s contains '\"', which would end the query's outer double quotes", t.Field)
		}
	}
	var b strings.Builder
	writeExpr(&b, n, false)
	text := b.String()
	if len(text) > MaxLen {
		return "", &LengthError{Len: len(text)}
	}
	back, err := Parse(text)
	if err != nil {
		return "", fmt.Errorf("filter: encode: %s does not read back: %w", text, err)
	}
	if !samePrint(n, back) {
		return "", fmt.Errorf("filter: encode: %s does not read back as the same expression", text)
	}
	return strings.ReplaceAll(url.QueryEscape(`"`+text+`"`), "+", "%20"), nil
}

// samePrint reports whether two normalized trees have the same shape and
// equal terms, where a String holding a date may read back as that Date.
func samePrint(a, b Expr) bool {
	return equalBy(a, b, func(x, y Value) bool {
		return x.Equal(y) || (x.Kind == KindString && x.String() == y.String())
	})
}

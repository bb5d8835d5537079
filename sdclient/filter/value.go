package filter

import (
	"strconv"
	"strings"
	"time"
)

// Kind says what sort of literal a Value holds. The parser keeps the kind it
// saw (a quoted '4' is a KindString); Schema.Validate and Eval coerce it
// against the field.
type Kind int

// The value kinds.
const (
	// KindNull is the literal null: the field has no value.
	KindNull Kind = iota
	// KindNumber is an integer, bare (4) or negative (-4).
	KindNumber
	// KindString is a single-quoted string ('Incident', and also '4').
	KindString
	// KindDate is a 'yyyy-mm-dd' date (DateOnly) or an RFC3339 datetime.
	KindDate
	// KindBool is true or false.
	KindBool
	// KindWord is a bare word that is none of the above, such as the open
	// of the deskbot macro status:open. It parses so that macros can be
	// expanded with Rewrite, but Schema.Validate rejects it and Eval never
	// matches it.
	KindWord
)

// String names the kind for messages.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindDate:
		return "date"
	case KindBool:
		return "bool"
	case KindWord:
		return "word"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one literal of the language: the right-hand side of a term, and
// what a Record reports for a field.
type Value struct {
	Kind Kind
	// Num is the number of a KindNumber.
	Num int64
	// Str is the text of a KindString or KindWord.
	Str string
	// Time is the instant of a KindDate, in UTC. With DateOnly it is
	// midnight starting the day, and the value stands for that whole day.
	Time     time.Time
	DateOnly bool
	// Bool is the truth of a KindBool.
	Bool bool
}

// Null returns the null value (no value assigned).
func Null() Value { return Value{Kind: KindNull} }

// Number returns an integer value.
func Number(n int64) Value { return Value{Kind: KindNumber, Num: n} }

// String returns a string value; it prints single-quoted.
func String(s string) Value { return Value{Kind: KindString, Str: s} }

// Bool returns a boolean value.
func Bool(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// Word returns a bare word (KindWord), as the parser makes for status:open.
func Word(w string) Value { return Value{Kind: KindWord, Str: w} }

// Date returns the date-only value for a UTC day; it stands for the whole day.
func Date(y int, m time.Month, d int) Value {
	return Value{Kind: KindDate, Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), DateOnly: true}
}

// DateTime returns an exact instant; it is kept in UTC.
func DateTime(t time.Time) Value { return Value{Kind: KindDate, Time: t.UTC()} }

// Equal reports whether two values are the same literal (same kind and
// content; instants compare with time.Time.Equal).
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KindNull:
		return true
	case KindNumber:
		return v.Num == w.Num
	case KindString, KindWord:
		return v.Str == w.Str
	case KindDate:
		return v.DateOnly == w.DateOnly && v.Time.Equal(w.Time)
	case KindBool:
		return v.Bool == w.Bool
	}
	return false
}

// String returns the value's canonical text: null, 42, 'text' (with \' and
// \\ escaped), '2024-01-31', '2024-01-31T09:00:00Z', true, or the bare word.
func (v Value) String() string {
	var b strings.Builder
	v.appendTo(&b)
	return b.String()
}

func (v Value) appendTo(b *strings.Builder) {
	switch v.Kind {
	case KindNull:
		b.WriteString("null")
	case KindNumber:
		var buf [20]byte
		b.Write(strconv.AppendInt(buf[:0], v.Num, 10))
	case KindString:
		b.WriteByte('\'')
		for i := 0; i < len(v.Str); i++ {
			c := v.Str[i]
			if c == '\'' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte('\'')
	case KindDate:
		b.WriteByte('\'')
		if v.DateOnly {
			b.WriteString(v.Time.UTC().Format(time.DateOnly))
		} else {
			b.WriteString(v.Time.UTC().Format(time.RFC3339Nano))
		}
		b.WriteByte('\'')
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case KindWord:
		b.WriteString(v.Str)
	default:
		b.WriteString("<invalid value>")
	}
}

// asInt returns the integer a number, or a string holding only an integer,
// stands for.
func (v Value) asInt() (int64, bool) {
	switch v.Kind {
	case KindNumber:
		return v.Num, true
	case KindString:
		if isInteger(v.Str) {
			n, err := strconv.ParseInt(v.Str, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// asTime returns the instant a date, or a string holding a date or RFC3339
// datetime, stands for, and whether it covers a whole day.
func (v Value) asTime() (t time.Time, dateOnly, ok bool) {
	switch v.Kind {
	case KindDate:
		return v.Time, v.DateOnly, true
	case KindString:
		if d, err := classifyDate(v.Str); err == nil && d.Kind == KindDate {
			return d.Time, d.DateOnly, true
		}
	}
	return time.Time{}, false, false
}

// asBool returns the truth a bool, or the string 'true' / 'false', stands for.
func (v Value) asBool() (bool, bool) {
	switch v.Kind {
	case KindBool:
		return v.Bool, true
	case KindString:
		switch {
		case strings.EqualFold(v.Str, "true"):
			return true, true
		case strings.EqualFold(v.Str, "false"):
			return false, true
		}
	}
	return false, false
}

// asText returns the text a string or a date (as written canonically) stands for.
func (v Value) asText() (string, bool) {
	switch v.Kind {
	case KindString:
		return v.Str, true
	case KindDate:
		if v.DateOnly {
			return v.Time.UTC().Format(time.DateOnly), true
		}
		return v.Time.UTC().Format(time.RFC3339Nano), true
	}
	return "", false
}

// isInteger reports whether s is an optional '-' followed by ASCII digits.
func isInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// looksLikeDate reports whether s starts with dddd-dd-dd.
func looksLikeDate(s string) bool {
	if len(s) < 10 {
		return false
	}
	for i := 0; i < 10; i++ {
		c := s[i]
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// classifyDate returns a KindDate for a 'yyyy-mm-dd' date or an RFC3339
// datetime, an error for text shaped like one that is not valid, and a
// KindString value when s is not date-shaped at all.
func classifyDate(s string) (Value, error) {
	if !looksLikeDate(s) || (len(s) > 10 && s[10] != 'T' && s[10] != 't') {
		return String(s), nil
	}
	if len(s) == 10 {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return Value{}, dateError{s, "a valid date yyyy-mm-dd"}
		}
		return Value{Kind: KindDate, Time: t, DateOnly: true}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Value{}, dateError{s, "an RFC3339 datetime such as 2024-01-31T09:00:00Z"}
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return Value{}, dateError{s, "a datetime between years 0000 and 9999 in UTC"}
	}
	return DateTime(t), nil
}

type dateError struct{ text, want string }

// Error says what the date should look like.
func (e dateError) Error() string {
	return "invalid date " + strconv.Quote(e.text) + ": want " + e.want
}

package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr/vm"
)

// template is a text with `{{ expr }}` placeholders, compiled at load.
type template struct {
	src   string
	parts []tmplPart
}

type tmplPart struct {
	lit  string
	expr *compiled // nil for a literal part
	off  int       // rune offset of expr's source in the template
}

// parseTemplate compiles src. Errors carry rune offsets into src.
func parseTemplate(src string) (*template, []exprError) {
	t := &template{src: src}
	var errs []exprError
	rest, base := src, 0 // base: rune offset of rest in src
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if rest != "" {
				t.parts = append(t.parts, tmplPart{lit: rest})
			}
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tmplPart{lit: rest[:i]})
		}
		open := base + runeLen(rest[:i])
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			errs = append(errs, exprError{Off: open, Msg: "unclosed {{ in template (want {{ expression }})"})
			break
		}
		code := rest[i+2 : i+2+j]
		codeOff := open + 2
		if strings.TrimSpace(code) == "" {
			errs = append(errs, exprError{Off: open, Msg: "empty {{ }} in template"})
		} else {
			c, cerrs := compileExpr(code, false)
			for _, e := range cerrs {
				e.Off += codeOff
				e.Msg = "template: " + e.Msg
				errs = append(errs, e)
			}
			if c != nil {
				t.parts = append(t.parts, tmplPart{expr: c, off: codeOff})
			}
		}
		consumed := rest[:i+2+j+2]
		base += runeLen(consumed)
		rest = rest[len(consumed):]
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return t, nil
}

func runeLen(s string) int { return len([]rune(s)) }

// render expands the template for one environment.
func (t *template) render(m *vm.VM, env any) (string, error) {
	if t == nil {
		return "", nil
	}
	if len(t.parts) == 1 && t.parts[0].expr == nil {
		return t.parts[0].lit, nil
	}
	var b strings.Builder
	b.Grow(len(t.src) + 32)
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := m.Run(p.expr.prog, env)
		if err != nil {
			return "", p.expr.runError(err)
		}
		b.WriteString(formatValue(v))
	}
	return b.String(), nil
}

// formatValue renders a template value: times as RFC3339 in their own
// location (the ticket's times and now() are in UTC; a time the template
// converted with In keeps its offset), durations rounded to the minute
// (2h5m), nil as nothing.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.Format(time.RFC3339)
	case time.Duration:
		return formatDuration(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []string:
		return strings.Join(x, ", ")
	default:
		return fmt.Sprint(v)
	}
}

// formatDuration prints a duration for people: rounded to the minute
// (2h5m, 45m, 0m), with days from 24 hours on (1d2h5m), and to the hour
// from two days on (8d3h), where minutes are noise; negative durations keep
// their sign.
func formatDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	const day = 24 * time.Hour
	d = d.Round(time.Minute)
	if d >= 2*day {
		d = d.Round(time.Hour)
	}
	days, rest := d/day, d%day
	h, m := rest/time.Hour, (rest%time.Hour)/time.Minute
	var b strings.Builder
	b.WriteString(sign)
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 || (days == 0 && h == 0) {
		fmt.Fprintf(&b, "%dm", m)
	}
	return b.String()
}

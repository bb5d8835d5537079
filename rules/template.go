package rules

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr/vm"
)

// template is a text with `{{ expr }}` placeholders, compiled at load.
type template struct {
	src   string
	parts []tmplPart
	kind  textKind
}

// textKind says where a text goes, and so how the values of its {{ }}
// are written into it; the author's own text is kept as written.
type textKind uint8

const (
	// textChat is the text of an alert or a page: chat text, which the
	// bot escapes as a whole for Slack.
	textChat textKind = iota
	// textHTML is the body of a note or a reply: HTML on the desk, shown
	// to agents and e-mailed to the requester. Values are HTML-escaped,
	// so that a subject such as <img src=x onerror=...> shows as text.
	textHTML
	// textMention is an alert's mention. Values lose <, > and !, so that
	// ticket data cannot write Slack markup (<!channel>, <@U...>), and a
	// mention that a value turns into @here, @channel or @everyone is
	// dropped: a value may name a user or a group, not everyone.
	textMention
	// textPlain is a value of set: (a type, a category, a tag, a custom
	// field): values are written as they are.
	textPlain
)

// mentionValue removes from a value what could make Slack markup of it.
var mentionValue = strings.NewReplacer("<", "", ">", "", "!", "")

// format formats value v for a text of kind k.
func (k textKind) format(v any) string {
	s := formatValue(v)
	switch k {
	case textHTML:
		return html.EscapeString(s)
	case textMention:
		return mentionValue.Replace(s)
	}
	return s
}

// specialMentions counts the mentions of everyone in a channel in a
// rendered mention: the whole of it @here, @channel or @everyone (which
// the bot turns into <!here>...), or <!here>, <!channel>, <!everyone>.
func specialMentions(s string) int {
	s = strings.ToLower(strings.TrimSpace(s))
	n := strings.Count(s, "<!here") + strings.Count(s, "<!channel") + strings.Count(s, "<!everyone")
	if s == "@here" || s == "@channel" || s == "@everyone" {
		n++
	}
	return n
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
		v, err := p.expr.run(m, env)
		if err != nil {
			return "", err
		}
		b.WriteString(t.kind.format(v))
	}
	out := b.String()
	if t.kind == textMention && specialMentions(out) > specialMentions(t.literal()) {
		return "", nil // a value made it a mention of everyone
	}
	return out, nil
}

// literal is the author's own text of t: t without its {{ }}.
func (t *template) literal() string {
	var b strings.Builder
	for _, p := range t.parts {
		b.WriteString(p.lit)
	}
	return b.String()
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

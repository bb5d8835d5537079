package bot

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"
)

// argKind is the shape of one argument in the command table.
type argKind int

const (
	argID      argKind = iota // a ticket number, N or #N
	argText                   // the rest of the line, required
	argOptText                // the rest of the line, optional
	argPage                   // an optional "page N" at the end
)

// argSpec names one argument for the usage line.
type argSpec struct {
	kind argKind
	name string
}

func (a argSpec) usage() string {
	if a.kind == argOptText || a.kind == argPage {
		return "[" + a.name + "]"
	}
	return a.name
}

// ParsedCommand is a slash command split into its command name and typed
// arguments, before any desk call.
type ParsedCommand struct {
	// Name is the table name: "ticket new", "ticket show", "assign", ...
	Name string
	// ID is the ticket number, for commands that take one.
	ID int64
	// Text is the free text after the fixed arguments, trimmed.
	Text string
	// Page is the page asked for with "page N" (0: none asked, the first).
	Page int
}

// UsageError says that a command line does not fit its usage; the message
// names what was expected.
type UsageError struct {
	Command string // table name ("ticket note"); empty when unknown
	Usage   string // the usage line of the command, or the command list
	Reason  string
}

// Error says what is wrong and how the command is used.
func (e *UsageError) Error() string {
	if e.Usage == "" {
		return e.Reason
	}
	return e.Reason + "; usage: " + e.Usage
}

// ParseCommand parses a slash command ("/ticket" or "/assign", with or
// without the slash) and its text against the command table.
func ParseCommand(slash, text string) (ParsedCommand, error) {
	return parseWith(commandTable(), slash, text)
}

func parseWith(table []*command, slash, text string) (ParsedCommand, error) {
	slash = strings.TrimPrefix(strings.TrimSpace(slash), "/")
	if !utf8.ValidString(text) {
		return ParsedCommand{}, &UsageError{Reason: "command text is not valid UTF-8"}
	}
	if n := utf8.RuneCountInString(text); n > chat.MaxCommandText {
		return ParsedCommand{}, &UsageError{Reason: fmt.Sprintf("command text is too long (%d characters, at most %d)", n, chat.MaxCommandText)}
	}
	text = strings.TrimSpace(text)
	cmd, rest, err := findCommand(table, slash, text)
	if err != nil {
		return ParsedCommand{}, err
	}
	return parseArgs(cmd, rest)
}

// findCommand is the command of the table that slash and the first word
// of text name, and the text after it.
func findCommand(table []*command, slash, text string) (*command, string, error) {
	if w, r := splitWord(text); slash == "assign" && strings.EqualFold(w, "list") && lookup(table, "ticket agents") != nil {
		// /assign list [words] is /ticket agents [words]: whom to assign to.
		return lookup(table, "ticket agents"), r, nil
	}
	if !hasSubcommands(table, slash) {
		cmd := lookup(table, slash)
		if cmd == nil {
			return nil, "", &UsageError{Reason: fmt.Sprintf("unknown command /%s", slash)}
		}
		return cmd, text, nil
	}
	sub, r := splitWord(text)
	sub = strings.ToLower(sub)
	if sub == "" {
		sub = "help"
	}
	cmd := lookup(table, slash+" "+sub)
	if cmd == nil && text == "" {
		// A bare /oncall is a command of its own.
		cmd = lookup(table, slash)
	}
	if cmd == nil {
		return nil, "", &UsageError{Reason: fmt.Sprintf("unknown command /%s %s", slash, sub), Usage: commandList(table, slash)}
	}
	return cmd, r, nil
}

// parseArgs reads cmd's arguments from rest.
func parseArgs(cmd *command, rest string) (ParsedCommand, error) {
	p := ParsedCommand{Name: cmd.name}
	fail := func(format string, a ...any) (ParsedCommand, error) {
		return ParsedCommand{}, &UsageError{Command: cmd.name, Usage: cmd.usage(), Reason: fmt.Sprintf(format, a...)}
	}
	for _, a := range cmd.args {
		switch a.kind {
		case argID:
			w, r := splitWord(rest)
			if w == "" {
				return fail("missing ticket number %s", a.name)
			}
			id, err := parseTicketID(w)
			if err != nil {
				return fail("%q is not a ticket number", w)
			}
			p.ID, rest = id, r
		case argText:
			if rest == "" {
				return fail("missing %s", a.name)
			}
			p.Text, rest = rest, ""
		case argOptText:
			p.Text, rest = rest, ""
		case argPage:
			if w, r := splitWord(rest); strings.EqualFold(w, "page") {
				n, err := strconv.Atoi(r)
				if err != nil || n < 1 || n > maxPage {
					return fail("%q is not a page number: pages are 1 to %d", r, maxPage)
				}
				p.Page, rest = n, ""
			}
		}
	}
	if rest != "" {
		return fail("unexpected %q", chat.Truncate(rest, 40))
	}
	return p, nil
}

// parseTicketID accepts 42 or #42; ids are positive.
func parseTicketID(s string) (int64, error) {
	s = strings.TrimPrefix(s, "#")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, errors.New("not a ticket number")
	}
	return id, nil
}

// splitWord cuts the first whitespace-separated word off s.
func splitWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

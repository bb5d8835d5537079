package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/deskbot/deskbot/oncall"
)

// Console is the chat transport for a terminal: the same Router over a
// reader and a writer. A person types "/ticket new Printer on fire" and
// reads the answer; alerts print as text cards. The caller is the desk API
// key's own agent (Desk.Me) unless WithConsoleEmail names someone else.
type Console struct {
	router *Router
	in     io.Reader
	email  string

	mu     sync.Mutex // serialises writes to out
	out    io.Writer
	alerts map[string]bool
}

var (
	_ Notifier     = (*Console)(nil)
	_ Directory    = (*Console)(nil)
	_ oncall.Pager = (*Console)(nil)
)

// ConsoleOption configures a Console.
type ConsoleOption func(*Console)

// WithConsoleEmail makes the console act as the person with this e-mail.
func WithConsoleEmail(email string) ConsoleOption {
	return func(c *Console) { c.email = email }
}

// NewConsole builds a console transport.
func NewConsole(router *Router, in io.Reader, out io.Writer, opts ...ConsoleOption) (*Console, error) {
	if router == nil || in == nil || out == nil {
		return nil, errors.New("bot: NewConsole: nil router, reader or writer")
	}
	c := &Console{router: router, in: in, out: out, alerts: make(map[string]bool)}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// consoleUser is the chat user id of the person at the console.
const consoleUser = "console"

// Email implements Directory: the configured e-mail, else the API key's
// own agent. Only the console user is known.
func (c *Console) Email(ctx context.Context, userID string) (string, error) {
	if userID != consoleUser {
		return "", fmt.Errorf("unknown console user %q; name people by e-mail", userID)
	}
	c.mu.Lock()
	email := c.email
	c.mu.Unlock()
	if email != "" {
		return email, nil
	}
	me, err := c.router.desk.Me(ctx)
	if err != nil {
		return "", fmt.Errorf("get the API key's agent: %w", err)
	}
	c.mu.Lock()
	c.email = me.Email
	c.mu.Unlock()
	return me.Email, nil
}

// Ready is always true: the console needs no connection.
func (c *Console) Ready() bool { return true }

// Run reads commands line by line until the input ends or ctx is done.
func (c *Console) Run(ctx context.Context) error {
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		errc <- readLines(c.in, maxLineBytes, func(line string) bool {
			select {
			case lines <- line:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	c.printf("deskbot console: type /ticket help (Ctrl-D to leave)\n")
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if err != nil {
				return fmt.Errorf("read console: %w", err)
			}
			return nil
		case line := <-lines:
			c.line(ctx, line)
		}
	}
}

// maxLineBytes bounds a console line: the longest command in characters,
// each up to four bytes, plus the command word.
const maxLineBytes = utf8.UTFMax*maxCommandText + 64

// tooLongLine stands for a line over maxLineBytes, which is never read
// into memory whole.
const tooLongLine = "\x00too long"

// readLines calls emit with each line of r, without its end of line, until
// r ends or emit returns false; a line over max bytes is skipped and
// emitted as tooLongLine, so that one pasted log does not end the console.
func readLines(r io.Reader, max int, emit func(string) bool) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		var buf []byte
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !tooLong && len(buf)+len(chunk) > max {
				tooLong, buf = true, nil
			}
			if !tooLong {
				buf = append(buf, chunk...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(buf) > 0 || tooLong {
			line := strings.TrimRight(string(buf), "\r\n")
			if tooLong {
				line = tooLongLine
			}
			if !emit(line) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// line runs one typed line.
func (c *Console) line(ctx context.Context, line string) {
	if line == tooLongLine {
		c.printf("that line is too long; a command takes at most %d characters\n", maxCommandText)
		return
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	if line == "help" || line == "?" {
		line = "/ticket help"
	}
	cmd, text := splitWord(line)
	if !strings.HasPrefix(cmd, "/") {
		c.printf("commands start with /ticket, /assign or /oncall; try /ticket help\n")
		return
	}
	resp := c.router.Handle(ctx, Request{Command: cmd, Text: text, UserID: consoleUser, TeamID: consoleUser, ChannelID: consoleUser, Users: c})
	if resp.Form != nil {
		resp = failed("the console has no forms; type /ticket new <subject>")
	}
	c.printResponse(resp)
}

func (c *Console) printResponse(resp Response) {
	var b strings.Builder
	if resp.Card == nil || resp.Text != resp.Card.Title {
		b.WriteString(resp.Text + "\n")
	}
	if resp.Card != nil {
		b.WriteString(resp.Card.Text() + "\n")
	}
	c.printf("%s", b.String())
}

func (c *Console) printf(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format, a...)
}

// Alert prints the alert as a text card.
func (c *Console) Alert(ctx context.Context, m AlertMessage) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("print alert: %w", err)
	}
	card := c.router.ticketCard(ctx, m.Ticket)
	card.Buttons = nil
	card.Headline = fmt.Sprintf("ALERT %s: %s", m.Channel, m.Text)
	if m.Mention != "" {
		card.Headline += " (" + m.Mention + ")"
	}
	card.Notes = append(card.Notes, fmt.Sprintf("rule %s · act with /assign %d me, /ticket resolve %d", m.Rule, m.Ticket.ID, m.Ticket.ID))
	c.mu.Lock()
	c.alerts[m.Channel+"\x00"+m.Key] = true
	c.mu.Unlock()
	c.printf("%s\n", card.Text())
	return nil
}

// AlertGroup prints the alerts of g as one text message naming every
// ticket, and remembers each alert's key.
func (c *Console) AlertGroup(_ context.Context, g AlertGroupMessage) error {
	if err := g.check(); err != nil {
		return fmt.Errorf("print alert group: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ALERT %s: rule %s, %d tickets in one message", g.Channel, g.Rule, len(g.Alerts))
	var mentions []string
	for _, a := range g.Alerts {
		if a.Mention != "" && !slices.Contains(mentions, a.Mention) {
			mentions = append(mentions, a.Mention)
		}
	}
	if len(mentions) > 0 {
		b.WriteString(" (" + strings.Join(mentions, " ") + ")")
	}
	b.WriteString(":\n")
	for _, a := range g.Alerts {
		b.WriteString("  " + consoleGroupLine(a) + "\n")
	}
	b.WriteString("  act with /ticket show N, /assign N me, /ticket resolve N\n")
	c.mu.Lock()
	for _, a := range g.Alerts {
		c.alerts[g.Channel+"\x00"+a.Key] = true
	}
	c.mu.Unlock()
	c.printf("%s", b.String())
	return nil
}

// consoleGroupLine is one ticket's line of a grouped alert: the rule's
// text when it names the ticket's number and subject, else the number,
// the subject and the text.
func consoleGroupLine(a AlertMessage) string {
	text := strings.Join(strings.Fields(a.Text), " ")
	if ticketNumberAt(text, a.Ticket.ID) >= 0 && strings.Contains(text, a.Ticket.Subject) {
		return text
	}
	line := fmt.Sprintf("#%d %s", a.Ticket.ID, a.Ticket.Subject)
	if text != "" {
		line += " — " + text
	}
	return line
}

// Page implements oncall.Pager: it prints the page; acknowledge it with
// /oncall ack N.
func (c *Console) Page(_ context.Context, r oncall.PageRequest) error {
	what := "paged"
	if r.Retry {
		what = fmt.Sprintf("paged again (attempt %d)", r.Attempt)
	}
	c.printf("PAGE %s: %s %s (level %d of %s%s): %s\n  (ticket #%d · acknowledge with /oncall ack %d)\n",
		r.Channel, what, r.Target, r.Level+1, r.Page.Policy, roundSuffix(r.Round), r.Text, r.TicketID, r.TicketID)
	return nil
}

// PageStopped implements oncall.StopNotifier: it prints why a page stopped
// without anyone acknowledging it.
func (c *Console) PageStopped(_ context.Context, p oncall.Page) error {
	why := "nobody acknowledged; " + exhaustedWhy(p)
	if p.Resolved() {
		why = "the ticket was resolved"
	}
	c.printf("PAGE STOPPED %s (ticket #%d): %s\n", p.Key, p.TicketID, why)
	return nil
}

var _ oncall.StopNotifier = (*Console)(nil)

// AlreadyAlerted reports whether this console printed the alert.
func (c *Console) AlreadyAlerted(_ context.Context, channel, key string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alerts[channel+"\x00"+key], nil
}

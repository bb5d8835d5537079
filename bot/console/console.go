package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// Router is what the console needs of the bot's router (*bot.Router): it
// is declared here, by its consumer, so that this package does not import
// bot.
type Router interface {
	// Dispatch runs one command and answers it.
	Dispatch(ctx context.Context, caller chat.Caller, cmd chat.Command) chat.Reply
	// KeyAgent is the desk agent who owns the desk API key.
	KeyAgent(ctx context.Context) (*sdclient.Agent, error)
	// AlertCard is an alert's ticket card with its buttons.
	AlertCard(ctx context.Context, m chat.AlertMessage) *chat.Card
}

// Console is the chat transport for a terminal: the bot's Router over a
// reader and a writer. A person types "/ticket new Printer on fire" and
// reads the answer; alerts print as text cards. The caller is the desk API
// key's own agent (Desk.Me) unless WithEmail names someone else.
type Console struct {
	router Router
	in     io.Reader
	email  string

	mu      sync.Mutex // serialises writes to out
	out     io.Writer
	alerts  map[string]bool
	digests int // digests printed: each one's ts
	typed   int // lines typed so far: an answer to an earlier one is labelled

	// Commands run side by side (a slow one does not hold up the next);
	// running are the done channels of those not finished, which a button
	// press waits for: it refers to the cards they print.
	cmds    sync.WaitGroup
	running []chan struct{}

	// The buttons of the cards printed, by number: typing the number (or
	// /press N) presses it. Numbers only grow, so that a card printed
	// meanwhile (an alert) never changes what a number means.
	choices    map[int]chat.Button
	nextChoice int
}

// maxConsoleChoices bounds the buttons the console remembers; the oldest
// numbers are forgotten first.
const maxConsoleChoices = 1000

var (
	_ chat.Notifier  = (*Console)(nil)
	_ chat.Directory = (*Console)(nil)
	_ oncall.Pager   = (*Console)(nil)
)

// Option configures a Console.
type Option func(*config)

// config is what the console options set.
type config struct {
	email string
}

// WithEmail makes the console act as the person with this e-mail.
func WithEmail(email string) Option {
	return func(c *config) { c.email = email }
}

// New builds a console transport.
func New(router Router, in io.Reader, out io.Writer, opts ...Option) (*Console, error) {
	if router == nil || in == nil || out == nil {
		return nil, errors.New("console: New: nil router, reader or writer")
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Console{router: router, in: in, out: out, email: cfg.email, alerts: make(map[string]bool), choices: make(map[int]chat.Button), nextChoice: 1}, nil
}

// consoleUser is the chat user id of the person at the console.
const consoleUser = "console"

// Email implements chat.Directory: the configured e-mail, else the API key's
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
	me, err := c.router.KeyAgent(ctx)
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
	defer c.cmds.Wait() // every answer is printed before Run returns
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
			c.start(ctx, line)
		}
	}
}

// start runs a typed line in its own goroutine. It waits for the lines
// typed before it, so that lines typed (or piped) together act in order (a
// show after the new that made the ticket), but at most commandPatience: a
// slow command (a desk that takes seconds) then no longer holds up the
// next one, whose answer may come first; each answer is printed whole, and
// labelled with its line when another line was typed since. A button
// press waits for the commands typed before it however long they take:
// its number refers to the cards they print.
func (c *Console) start(ctx context.Context, line string) {
	c.mu.Lock()
	c.typed++
	a := &answer{c: c, n: c.typed, line: strings.TrimSpace(line)}
	before := slices.Clone(c.running)
	_, press := pressNumber(a.line)
	done := make(chan struct{})
	c.running = append(c.running, done)
	c.mu.Unlock()
	c.cmds.Go(func() {
		defer c.finished(done)
		var patience <-chan time.Time
		if !press {
			t := time.NewTimer(commandPatience)
			defer t.Stop()
			patience = t.C
		}
	wait:
		for _, d := range before {
			select {
			case <-d:
			case <-patience:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		c.line(ctx, a, line)
	})
}

// commandPatience is how long a typed line waits for the ones before it
// before it runs beside them.
const commandPatience = time.Second

// finished forgets a command that has printed its answer.
func (c *Console) finished(done chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(done)
	c.running = slices.DeleteFunc(c.running, func(d chan struct{}) bool { return d == done })
}

// pressNumber reports whether line presses a button (a number, or /press
// N), and which.
func pressNumber(line string) (int, bool) {
	if n, ok := choiceNumber(line); ok {
		return n, true
	}
	if rest, ok := strings.CutPrefix(line, "/press"); ok && (rest == "" || unicode.IsSpace(rune(rest[0]))) {
		n, _ := choiceNumber(rest)
		return n, true
	}
	return 0, false
}

// answer prints the answer to one typed line.
type answer struct {
	c    *Console
	n    int    // the line's number among those typed
	line string // as typed, trimmed
}

// printf prints the answer in one write, labelled "» LINE" when another
// line was typed after this one.
func (a *answer) printf(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	c := a.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.typed > a.n {
		text = "» " + a.line + "\n" + text
	}
	fmt.Fprint(c.out, text)
}

// maxLineBytes bounds a console line: the longest command in characters,
// each up to four bytes, plus the command word.
const maxLineBytes = utf8.UTFMax*chat.MaxCommandText + 64

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

// line runs one typed line and prints its answer through a.
func (c *Console) line(ctx context.Context, a *answer, line string) {
	if line == tooLongLine {
		a.printf("that line is too long; a command takes at most %d characters\n", chat.MaxCommandText)
		return
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	if line == "help" || line == "?" {
		line = "/ticket help"
	}
	if n, ok := choiceNumber(line); ok {
		c.press(ctx, a, n)
		return
	}
	cmd, text := line, ""
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		cmd, text = line[:i], strings.TrimSpace(line[i:])
	}
	if cmd == "/home" {
		c.home(ctx, a)
		return
	}
	if cmd == "/press" {
		n, ok := choiceNumber(text)
		if !ok {
			a.printf("usage: /press N, N being the number of a button, e.g. [1]\n")
			return
		}
		c.press(ctx, a, n)
		return
	}
	if !strings.HasPrefix(cmd, "/") {
		a.printf("commands start with /ticket, /assign or /oncall; try /ticket help\n")
		return
	}
	resp := c.router.Dispatch(ctx, c.caller(), chat.Command{Slash: cmd, Text: text})
	if resp.Form != nil {
		resp = chat.Reply{Text: "the console has no forms; type /ticket new <subject>", Failed: true}
	}
	if cmd == "/ticket" && (text == "" || strings.EqualFold(text, "help")) && !resp.Failed {
		// The console's own commands belong to "every chat command" too.
		resp.Text += "\n" + consoleHelp
	}
	c.printResponse(a, resp)
}

// consoleHelp lists the commands only the console has.
const consoleHelp = `console only:
• /home — your Home tab, as Slack shows it: your tickets
• /press N (or just N) — press button [N] of a card above
• help or ? — this list; Ctrl-D leaves`

func (c *Console) printResponse(a *answer, resp chat.Reply) {
	var b strings.Builder
	if resp.Card == nil || resp.Text != resp.Card.Title {
		b.WriteString(resp.Text + "\n")
	}
	if resp.Card != nil {
		b.WriteString(c.cardText(resp.Card) + "\n")
	}
	a.printf("%s", b.String())
}

// cardText renders a card as text, its buttons numbered for press.
func (c *Console) cardText(card *chat.Card) string {
	cp := *card
	buttons := cp.Buttons
	cp.Buttons = nil
	text := cp.Text()
	if line := c.numbered(buttons); line != "" {
		text += "\n" + line
	}
	return text
}

// numbered gives each button a number to press it by and returns the
// line listing them: "  [1] Assign to me  [2] Resolve  (type a number to
// press it)"; "" for no buttons.
func (c *Console) numbered(buttons []chat.Button) string {
	if len(buttons) == 0 {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.WriteString(" ")
	for _, bt := range buttons {
		n := c.nextChoice
		c.nextChoice++
		c.choices[n] = bt
		delete(c.choices, n-maxConsoleChoices)
		fmt.Fprintf(&b, " [%d] %s", n, bt.Label)
	}
	b.WriteString("  (type a number to press it)")
	return b.String()
}

// choiceNumber reads a button number: "3" or "[3]".
func choiceNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// press presses button n of a card printed before, as a click on Slack
// would, and prints what it did.
func (c *Console) press(ctx context.Context, a *answer, n int) {
	c.mu.Lock()
	bt, ok := c.choices[n]
	c.mu.Unlock()
	if !ok {
		a.printf("there is no button [%d]; press one of the numbers listed under a card\n", n)
		return
	}
	res := c.router.Dispatch(ctx, c.caller(), chat.Command{Button: bt.ActionID, Value: bt.Value})
	if res.Failed || res.Card == nil {
		c.printResponse(a, chat.Reply{Text: res.Text, Failed: res.Failed})
		return
	}
	card := *res.Card
	if res.Activity != "" {
		card.Notes = append(card.Notes, res.Activity)
	}
	c.printResponse(a, chat.Reply{Text: res.Text, Card: &card})
}

// caller is the person at the console.
func (c *Console) caller() chat.Caller {
	return chat.Caller{UserID: consoleUser, TeamID: consoleUser, ChannelID: consoleUser, Users: c}
}

func (c *Console) printf(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Whatever an answer, card or page quotes from the desk, deskbot's
	// marks on its own notes stay out of the terminal.
	fmt.Fprint(c.out, chat.StripMarks(fmt.Sprintf(format, a...)))
}

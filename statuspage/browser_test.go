package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// browserRequired: in CI (CI=true, or DESKBOT_BROWSER_REQUIRED set by
// .ci/run) a missing chromium fails the browser test instead of skipping it.
func browserRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("DESKBOT_BROWSER_REQUIRED") != ""
}

// chromium finds Debian's chromium (or a Chrome) on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if browserRequired() {
		t.Fatal("chromium is not installed, and CI needs it for the browser test: apt-get install -y --no-install-recommends chromium")
	}
	t.Skip("chromium is not installed: the browser test skips (apt-get install -y --no-install-recommends chromium to run it)")
	return ""
}

// browser starts a headless chromium with a fresh profile, offline, and
// collects every console error and uncaught exception of its tabs.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	// Chromium's start script now and then fails on a loaded machine (a
	// dbus error before the browser runs): a start is tried three times,
	// each with a fresh profile, before the test fails.
	var err error
	for range 3 {
		var b *browser
		if b, err = startBrowser(t, path); err == nil {
			return b
		}
		t.Logf("start chromium (%s): %v; trying again", path, err)
	}
	t.Fatalf("start chromium (%s): %v", path, err)
	return nil
}

// startBrowser starts one headless chromium at path, stopped with the test.
func startBrowser(t *testing.T, path string) (*browser, error) {
	// A fresh profile, removed after the browser exits (not t.TempDir:
	// chromium's helpers may still write into it for a moment, which would
	// fail the test's cleanup).
	profile, err := os.MkdirTemp("", "deskbot-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		for range 10 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				b.note("console.%s", ev.Type)
			}
		case *runtime.EventExceptionThrown:
			b.note("exception: %s", ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				b.note("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable(), network.Enable()); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *browser) note(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, fmt.Sprintf(format, args...))
}

func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// load navigates to url and returns the HTTP status, the page's visible
// text and its document title.
func (b *browser) load(t *testing.T, url string) (status int64, text, title string) {
	t.Helper()
	status, text, title, err := b.try(url)
	if err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	return status, text, title
}

// try is load that returns the navigation's error.
func (b *browser) try(url string) (status int64, text, title string, err error) {
	var resp *network.Response
	err = chromedp.Run(b.ctx,
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			resp, err = chromedp.RunResponse(ctx, chromedp.Navigate(url))
			return err
		}),
		chromedp.Text("body", &text, chromedp.ByQuery),
		chromedp.Title(&title),
	)
	if resp != nil {
		status = resp.Status
	}
	return status, text, title, err
}

// serve serves h on addr until the test ends.
func serve(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestBrowserDemoPages loads every page of the demo (the embedded
// simulator's desk, seed 1 with 200 tickets, and rules.example.yaml) in
// headless chromium after a cycle: each rule and each recent firing is
// shown, a ticket subject carrying <script> shows as text (and does not
// run), no page logs a console error, and off loopback the token is
// required.
func TestBrowserDemoPages(t *testing.T) {
	b := newBrowser(t)
	example, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, string(example), sdsim.WithGenerated(1, 200))
	evil := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: hostile, Status: 2, Priority: 4, Source: 1, RequesterID: 1,
		CreatedAt: time.Now().Add(-time.Hour), UpdatedAt: time.Now().Add(-time.Hour)})
	w.cycle(t)
	if _, err := w.sched.TickPages(context.Background()); err != nil {
		t.Fatal(err)
	}
	// As cmd/deskbot wires the pages: the live mirror, the budget, the
	// key's agent as the start-up check read it, a chat's commands, the
	// on-call people's names, this process leading.
	ctx := context.Background()
	client, err := sdclient.New(w.sim.URL, sdsim.DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	me, _, err := client.Interactive().Agents.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lead, err := w.st.Leadership(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lead.Close(context.Background()) })
	live := feed.NewLiveMirror(w.st)
	live.Attach(w.sched.Feed())
	cmds := NewCommands()
	for i := range 7 {
		cmds.Observe(time.Now(), time.Duration(100+i)*time.Millisecond)
	}
	h, err := New(w.sched, w.st, WithLoopback(true), WithMirror(live), WithRequestBudget(60, 48), WithCommands(cmds),
		WithAgent(func() (string, string, bool) { return me.Name(), me.Email, true }),
		WithPersonNames(func(_ context.Context, member string) string { return "Name of " + member }))
	if err != nil {
		t.Fatal(err)
	}
	h.refreshNames(ctx) // as Run does
	mux := http.NewServeMux()
	h.Register(mux)
	base := serve(t, "127.0.0.1:0", mux)

	for _, p := range []string{"/", "/rules", "/firings", "/oncall", "/plan", "/backtest"} {
		status, text, title := b.load(t, base+p)
		if status != http.StatusOK {
			t.Fatalf("%s: HTTP %d", p, status)
		}
		if title == "pwned" || !strings.Contains(title, "deskbot") {
			t.Errorf("%s: title %q: the page's own, or script ran", p, title)
		}
		if !strings.Contains(text, "without a desk request") {
			t.Errorf("%s: no footer; text %.300q", p, text)
		}
	}
	// What issue 24 asked of each page, as a person reads it.
	for p, wants := range map[string][]string{
		"/": {"leader\n" + store.ReplicaName() + " (epoch ", "API key's agent\n" + me.Name() + " <" + me.Email + ">",
			"commands answered in the last hour\n7", "their p99\n106ms"},
		"/plan":                         {"Plan for the rules running here", "rule page-urgent-unassigned (", "Requests (budget: 60 a minute, 48 of them for the rules"},
		"/oncall":                       onCallNames(w.set.OnCall().WhoIsOnCall(time.Now())),
		"/rules/page-urgent-unassigned": {"Tickets that match now", fmt.Sprintf("#%d\t%s", evil.ID, hostile), "evaluated now over the"},
		"/firings":                      {"from when the ticket began to match the rule"},
		"/backtest":                     {"No backtest yet: run deskbot rules backtest FILE"},
	} {
		_, text, _ := b.load(t, base+p)
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not show %q: %.1500q", p, want, text)
			}
		}
	}
	_, rulesText, _ := b.load(t, base+"/rules")
	for _, r := range w.set.Rules() {
		if !strings.Contains(rulesText, r.Name) {
			t.Errorf("/rules does not show rule %s", r.Name)
		}
		status, text, title := b.load(t, base+"/rules/"+r.Name)
		if status != http.StatusOK || !strings.Contains(text, "Rule "+r.Name) {
			t.Errorf("/rules/%s: HTTP %d, text %.200q", r.Name, status, text)
		}
		if title == "pwned" {
			t.Errorf("/rules/%s: the ticket's script ran", r.Name)
		}
	}
	// Every recent firing is on /firings, with its rule and ticket.
	fs, err := w.st.RecentFirings(context.Background(), storeFilter(50))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatal("the demo cycle fired nothing: nothing to look for")
	}
	_, firings, _ := b.load(t, base+"/firings")
	lines := strings.Split(firings, "\n")
	for _, f := range fs {
		if !slices.ContainsFunc(lines, func(l string) bool {
			return strings.Contains(l, f.Rule) && strings.Contains(l, fmt.Sprintf("#%d\t", f.TicketID)) || strings.Contains(l, fmt.Sprintf("#%d ", f.TicketID))
		}) {
			t.Errorf("/firings does not show %s on #%d", f.Rule, f.TicketID)
		}
	}
	// The hostile subject is shown as text, and its script did not run.
	_, evilText, title := b.load(t, fmt.Sprintf("%s/firings?ticket=%d", base, evil.ID))
	if !strings.Contains(evilText, `<script>document.title="pwned"</script>`) {
		t.Errorf("/firings?ticket=%d does not show the subject as text: %.500q", evil.ID, evilText)
	}
	if title == "pwned" {
		t.Error("the ticket subject's script ran")
	}
	// The last backtest, kept as the command keeps it: its figures, and
	// the overview's link.
	keepBacktest(t, w, string(example))
	_, btText, _ := b.load(t, base+"/backtest")
	for _, want := range []string{"Backtest of rules.yaml", "firings\n5", "page-urgent-unassigned\nevery 1m; pages first", "Limits"} {
		if !strings.Contains(btText, want) {
			t.Errorf("/backtest does not show %q: %.1500q", want, btText)
		}
	}
	if _, overview, _ := b.load(t, base+"/"); !strings.Contains(overview, "Last backtest: rules.yaml, ran ") {
		t.Errorf("the overview does not link the last backtest: %.3000q", overview)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

	// Off loopback: the pages need the token.
	ip := testkit.NonLoopbackIPv4()
	if ip == "" {
		t.Log("no non-loopback address on this machine: the token check off loopback is left to TestAccess")
		return
	}
	const token = "browser-test-token-0123456789"
	off := serve(t, net.JoinHostPort(ip, "0"), w.handler(t, WithLoopback(false), WithToken(token)))
	// Without it the server asks for credentials, which headless chromium
	// cannot give: the navigation fails on them.
	_, text, _, err := b.try(off + "/rules")
	if err == nil || !strings.Contains(err.Error(), "AUTH") || strings.Contains(text, "page-urgent-unassigned") {
		t.Errorf("off loopback without the token: err %v, text %.200q", err, text)
	}
	// The Basic password, as the browser's prompt sends it.
	u := strings.Replace(off, "http://", "http://ops:"+token+"@", 1)
	// (chromium answers the challenge itself, so the response it reports
	// may be the 401's; the page is what shows whether it got in.)
	_, text, _ = b.load(t, u+"/rules")
	if !strings.Contains(text, "page-urgent-unassigned") {
		t.Errorf("off loopback with the token as Basic password: %.200q", text)
	}
	if err := chromedp.Run(b.ctx, network.SetExtraHTTPHeaders(network.Headers{"Authorization": "Bearer " + token})); err != nil {
		t.Fatal(err)
	}
	status, text, _ := b.load(t, off+"/rules")
	if status != http.StatusOK || !strings.Contains(text, "page-urgent-unassigned") {
		t.Errorf("off loopback with the token: HTTP %d, %.200q", status, text)
	}
}

// onCallNames is how /oncall names who is on call now and next in st.
func onCallNames(st []oncall.Status) []string {
	var out []string
	for _, x := range st {
		out = append(out, "Name of "+x.Now.Member+" ("+x.Now.Member+")", "Name of "+x.Next.Member+" ("+x.Next.Member+")")
	}
	return out
}

// keepBacktest keeps, as `deskbot rules backtest` does, the report of the
// world's rules replayed over five urgent unassigned tickets, one a day.
func keepBacktest(t *testing.T, w *world, rulesYAML string) {
	t.Helper()
	t0 := time.Now().UTC().Truncate(24 * time.Hour).Add(-7 * 24 * time.Hour)
	m := &history.Memory{}
	for i := range int64(5) {
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		m.Add(history.Record{At: at, Ticket: &sdclient.Ticket{ID: 9001 + i, Subject: "down", Status: 2, Priority: 4, CreatedAt: at, UpdatedAt: at}})
	}
	set, err := rules.Load("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := backtest.Run(t.Context(), set, m, t0, t0.Add(7*24*time.Hour), backtest.WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Rules[0].Firings; n != 5 {
		t.Fatalf("page-urgent-unassigned fired %d times in the replay, want 5", n)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.KeepBacktest(t.Context(), store.Backtest{File: rep.File, RanAt: time.Now(), From: rep.From, To: rep.To,
		Firings: rep.Totals.Firings, Report: body}); err != nil {
		t.Fatal(err)
	}
}

package statuspage

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// rows counts the firing rows of a page.
func rows(body string) int { return strings.Count(body, `<tr class="firing">`) }

// TestPagesShowWhatDeskbotDid runs a cycle of real rules over the desk
// simulator through the real client, then reads every page: each rule is
// shown, the firings are listed and filter, a subject carrying markup is
// text, and no page asks the desk.
func TestPagesShowWhatDeskbotDid(t *testing.T) {
	w := newWorld(t, testRules, sdsim.WithGenerated(3, 30))
	evil := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: hostile, Status: 2, Priority: 4, Source: 1, RequesterID: 1})
	w.cycle(t)
	h := w.handler(t)

	before := len(w.sim.Desk.Requests())
	pages := map[string]string{}
	for _, p := range []string{"/", "/rules", "/firings", "/oncall", "/plan", "/backtest", "/rules/urgent-note", "/rules/printer-alert", "/rules/never-matches"} {
		code, body := get(t, h, p)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", p, code, body)
		}
		pages[p] = body
	}
	if after := len(w.sim.Desk.Requests()); after != before {
		t.Errorf("the pages made %d desk requests, want 0", after-before)
	}

	for _, r := range w.set.Rules() {
		if !strings.Contains(pages["/rules"], `href="/rules/`+r.Name+`"`) {
			t.Errorf("/rules does not link rule %s", r.Name)
		}
		if !strings.Contains(pages["/plan"], r.Name) {
			t.Errorf("/plan does not show rule %s", r.Name)
		}
	}
	// The hostile subject is text everywhere it shows.
	for p, body := range pages {
		if strings.Contains(body, "<script") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s carries the ticket's markup unescaped", p)
		}
	}
	esc := "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;"
	for _, p := range []string{"/firings", "/rules/urgent-note"} {
		if !strings.Contains(pages[p], esc) {
			t.Errorf("%s does not show the subject as text (want %q)", p, esc)
		}
	}
	// The ticket's firing, linked to the desk.
	link := fmt.Sprintf(`<a href="%s/a/tickets/%d">#%d</a>`, w.sim.URL, evil.ID, evil.ID)
	if !strings.Contains(pages["/firings"], link) {
		t.Errorf("/firings lacks the urgent ticket's link %s", link)
	}
	if !strings.Contains(pages["/rules/urgent-note"], "fired in this episode") {
		t.Errorf("/rules/urgent-note does not say the matching ticket fired in this episode")
	}
	notes := rows(pages["/rules/urgent-note"])
	if notes == 0 {
		t.Fatal("/rules/urgent-note lists no firing")
	}
	if strings.Contains(pages["/oncall"], "<table>") || !strings.Contains(pages["/oncall"], "no on-call section") {
		t.Errorf("/oncall without an on-call section: %.500s", pages["/oncall"])
	}

	// Filters: by rule, by ticket, by outcome.
	all := rows(pages["/firings"])
	_, byRule := get(t, h, "/firings?rule=urgent-note")
	if got := rows(byRule); got != notes || got >= all {
		t.Errorf("/firings?rule=urgent-note: %d rows, want %d (of %d)", got, notes, all)
	}
	if strings.Contains(byRule, `href="/rules/printer-alert"></a>`) || regexp.MustCompile(`<td><a href="/rules/printer-alert">`).MatchString(byRule) {
		t.Error("/firings?rule=urgent-note shows printer-alert firings")
	}
	_, byTicket := get(t, h, fmt.Sprintf("/firings?ticket=%d", evil.ID))
	if got := rows(byTicket); got != 2 { // urgent-note and printer-alert
		t.Errorf("/firings?ticket=%d: %d rows, want 2 (urgent-note, printer-alert):\n%s", evil.ID, got, byTicket)
	}
	_, pending := get(t, h, "/firings?outcome=pending")
	if got := rows(pending); got != 0 {
		t.Errorf("/firings?outcome=pending: %d rows, want 0 after a cycle that finished every firing", got)
	}
	_, done := get(t, h, "/firings?outcome=done")
	if got := rows(done); got != all {
		t.Errorf("/firings?outcome=done: %d rows, want all %d", got, all)
	}

	if code, _ := get(t, h, "/rules/no-such-rule"); code != http.StatusNotFound {
		t.Errorf("/rules/no-such-rule: %d, want 404", code)
	}
	if code, _ := get(t, h, "/nothing-here"); code != http.StatusNotFound {
		t.Errorf("/nothing-here: %d, want 404", code)
	}
}

// TestPagesWithoutRules: with no rules loaded the pages answer and say so.
func TestPagesWithoutRules(t *testing.T) {
	w := newWorld(t, testRules)
	h, err := New(nil, w.st, WithLoopback(true))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	for _, p := range []string{"/", "/rules", "/firings", "/oncall", "/plan", "/backtest"} {
		code, body := get(t, mux, p)
		if code != http.StatusOK || !strings.Contains(body, "No rules run in this process") {
			t.Errorf("GET %s: %d, want 200 saying no rules run: %.300s", p, code, body)
		}
	}
}

// TestRulePageShowsHeldBack: a rule whose cap holds firings back says so
// on /rules (how many) and on its page (which tickets, and why), and the
// plan (the report of `deskbot rules plan`) says what its next run fires
// and what its cap leaves for later.
func TestRulePageShowsHeldBack(t *testing.T) {
	capped := cappedRules(2)
	w := newWorld(t, capped)
	for i := range 5 {
		w.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("urgent %d", i), Status: 2, Priority: 4, Source: 1, RequesterID: 1})
	}
	w.cycle(t)
	h := w.handler(t)
	_, list := get(t, h, "/rules")
	// matched 5, open episodes 2, held back 3
	if !regexp.MustCompile(`<td>5</td><td>2</td><td>3</td>`).MatchString(list) {
		t.Errorf("/rules does not show 5 matched, 2 open episodes, 3 held back:\n%s", list)
	}
	_, page := get(t, h, "/rules/capped")
	if n := strings.Count(page, "held back by the rule&#39;s max_firings_per_cycle (2)"); n != 3 {
		t.Errorf("/rules/capped names %d tickets held back by the cap, want 3:\n%s", n, page)
	}
	if n := strings.Count(page, "fired in this episode"); n != 2 {
		t.Errorf("/rules/capped shows %d tickets fired in this episode, want 2", n)
	}
	_, plan := get(t, w.handler(t, WithRequestBudget(60, 48)), "/plan")
	// `rules plan`'s own report: 2 fired, 3 left; the next run fires 2 of
	// them, the one after the last.
	for _, want := range []string{
		"rule capped (every 1m, next at ", "5 tickets (2 fired already): #",
		"capped: 2 now, 1 in the next cycle", "Requests (budget: 60 a minute, 48 of them for the rules",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("/plan lacks %q:\n%s", want, plan)
		}
	}
}

package backtest

import (
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// verdict is what a rule says of a ticket at an instant: whether it
// decides on it (the query holds, and the if is true or failed at run
// time), and until when that cannot change while the ticket stays as it is
// (zero: for ever).
type verdict = rules.Verdict

// verdicts are the due rules' verdicts on t at now, in due's order,
// appended to out[:0], with buf's scratch: rules.Set.VerdictsWith, which finds when a comparison
// with now() flips (so a rule such as now() - ticket.updated_at >
// duration("4h") is asked again once, when it turns true, not at every
// run) and renders no actions. Every evaluation of the engine goes
// through here.
func verdicts(set *rules.Set, buf *rules.VerdictBuf, due []*rules.Rule, t *sdclient.Ticket, now time.Time, out []verdict) []verdict {
	return set.VerdictsWith(buf, due, t, now, out)
}

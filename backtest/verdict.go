package backtest

import (
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// verdict is what rule says of ticket t at now: whether it decides on t
// (query holds, and the if is true or failed at run time: Evaluate reports
// a failed if as a decision with Err), and until when the answer stays the
// same while the ticket stays as it is (zero: for ever, the rule never
// reads now()).
type verdict struct {
	holds bool
	err   error
	until time.Time
}

// verdicts are the due rules' verdicts on t at now, in due's order,
// appended to out[:0]. Every evaluation of the engine goes through here.
//
// Conservatively: the rules' own Evaluate over the one ticket (it renders
// the actions, which the engine does not need), and a rule whose if reads
// now() is asked again at its next run (until: now + 1ns).
func verdicts(set *rules.Set, due []*rules.Rule, t *sdclient.Ticket, now time.Time, out []verdict) []verdict {
	out = out[:0]
	ds := set.EvaluateRules(due, []*sdclient.Ticket{t}, now)
	j := 0
	for _, r := range due {
		var v verdict
		if j < len(ds) && ds[j].Rule == r.Name {
			v.holds, v.err = true, ds[j].Err
			j++
		}
		if r.ReadsNow() {
			v.until = now.Add(time.Nanosecond)
		}
		out = append(out, v)
	}
	return out
}

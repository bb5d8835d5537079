package backtest

// Each rule's timers: when a ticket's answer may change with time alone.

// timer is when the answer on a ticket may change.
type timer struct {
	at   int64
	slot int32
}

// setTimer asks about slot s again at the first run at or after at (the
// earlier of two times wins: the later one is asked for again then).
func (rs *ruleState) setTimer(s int32, at int64) {
	st := rs.state(s)
	if st.timerAt != 0 && st.timerAt <= at {
		return
	}
	if st.timerAt == 0 {
		rs.liveTimers++
	}
	st.timerAt = at
	rs.timers = append(rs.timers, timer{at, s})
	for j := len(rs.timers) - 1; j > 0; {
		p := (j - 1) / 2
		if rs.timers[p].at <= rs.timers[j].at {
			break
		}
		rs.timers[p], rs.timers[j] = rs.timers[j], rs.timers[p]
		j = p
	}
	if len(rs.timers) > 1024 && len(rs.timers) > 2*rs.liveTimers {
		rs.compactTimers()
	}
}

// clearTimer forgets slot s's timer (its entry goes stale).
func (rs *ruleState) clearTimer(s int32) {
	if st := rs.state(s); st.timerAt != 0 {
		st.timerAt = 0
		rs.liveTimers--
	}
}

// compactTimers drops the stale timers: a timer replaced by another stays
// in the heap until its time, which may be 30 days on (the supervisor's
// window), so a month of changes would keep millions.
func (rs *ruleState) compactTimers() {
	kept := rs.timers[:0]
	for _, e := range rs.timers {
		if st := rs.state(e.slot); st.timerAt == e.at {
			st.timerAt = -e.at // kept: a repeat of it is not
			kept = append(kept, e)
		}
	}
	for _, e := range kept {
		rs.state(e.slot).timerAt = e.at
	}
	rs.timers = kept
	for j := len(kept)/2 - 1; j >= 0; j-- {
		downTimer(kept, j)
	}
}

func (rs *ruleState) popTimer() timer {
	h := rs.timers
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	downTimer(h, 0)
	rs.timers = h
	return top
}

func downTimer(h []timer, j int) {
	for {
		l, m := 2*j+1, j
		if l < len(h) && h[l].at < h[m].at {
			m = l
		}
		if l+1 < len(h) && h[l+1].at < h[m].at {
			m = l + 1
		}
		if m == j {
			return
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}

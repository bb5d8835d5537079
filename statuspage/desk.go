package statuspage

import (
	dto "github.com/prometheus/client_model/go"
)

// deskStats is what the metrics say about the desk's requests since the
// process started.
type deskStats struct {
	Known      bool
	Requests   float64
	Throttled  float64 // answered 429
	People     float64 // people's requests (commands, buttons): the class label
	Failed     float64 // other 4xx/5xx and transport errors
	Remaining  float64
	HasRemain  bool
	ByEndpoint []endpointCount
}

type endpointCount struct {
	Endpoint string
	Count    float64
}

// deskStats reads deskbot_desk_requests_total and
// deskbot_desk_rate_limit_remaining from the registry (no desk request).
func (h *Handler) deskStats() deskStats {
	var s deskStats
	if h.cfg.gatherer == nil {
		return s
	}
	fams, err := h.cfg.gatherer.Gather()
	if err != nil {
		return s
	}
	by := map[string]float64{}
	var order []string
	for _, f := range fams {
		switch f.GetName() {
		case "deskbot_desk_requests_total":
			s.Known = true
			for _, m := range f.GetMetric() {
				n := m.GetCounter().GetValue()
				s.Requests += n
				ep := ""
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "class":
						if l.GetValue() == "people" {
							s.People += n
						}
					case "status":
						if v := l.GetValue(); v == "429" {
							s.Throttled += n
						} else if len(v) == 3 && v[0] >= '4' || v == "error" {
							s.Failed += n
						}
					case "endpoint":
						ep = l.GetValue()
					}
				}
				if _, ok := by[ep]; !ok {
					order = append(order, ep)
				}
				by[ep] += n
			}
		case "deskbot_desk_rate_limit_remaining":
			for _, m := range f.GetMetric() {
				s.Remaining, s.HasRemain = metricValue(m), true
			}
		}
	}
	for _, ep := range order {
		s.ByEndpoint = append(s.ByEndpoint, endpointCount{ep, by[ep]})
	}
	return s
}

func metricValue(m *dto.Metric) float64 {
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}

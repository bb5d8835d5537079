package prom

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollectorsExposeNameHelpAndLabels: a registry gathers what each
// constructor builds under its name, with its help, type and labels.
func TestCollectorsExposeNameHelpAndLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	cv, gv := CounterVec("t_by_total", "By job.", "job", "outcome"), GaugeVec("t_gauge_by", "By class.", "class")
	reg.MustRegister(Counter("t_counter_total", "A counter."), Gauge("t_gauge", "A gauge."), cv, gv)
	cv.WithLabelValues("a", "complete").Inc()
	gv.WithLabelValues("page").Set(4)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type fam struct{ help, typ, labels string }
	got := map[string]fam{}
	for _, mf := range mfs {
		f := fam{help: mf.GetHelp(), typ: mf.GetType().String()}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			f.labels += l.GetName() + "=" + l.GetValue() + " "
		}
		got[mf.GetName()] = f
	}
	want := map[string]fam{
		"t_counter_total": {"A counter.", "COUNTER", ""},
		"t_gauge":         {"A gauge.", "GAUGE", ""},
		"t_by_total":      {"By job.", "COUNTER", "job=a outcome=complete "},
		"t_gauge_by":      {"By class.", "GAUGE", "class=page "},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
}

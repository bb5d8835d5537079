package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// metricFamily is what the dashboard and the alerts may use of a metric.
type metricFamily struct {
	labels    map[string]bool
	histogram bool
}

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = []string{"job", "instance"}

// recordingRegisterer registers on a registry and remembers the
// collectors, whose descriptors name every metric family and its labels
// even before a labelled vector has its first series.
type recordingRegisterer struct {
	*prometheus.Registry
	collectors []prometheus.Collector
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registry.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

var descRE = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)

func addFamily(fams map[string]*metricFamily, name string, hist bool) *metricFamily {
	f := fams[name]
	if f == nil {
		f = &metricFamily{labels: map[string]bool{}}
		fams[name] = f
	}
	f.histogram = f.histogram || hist
	return f
}

// describeFamilies adds every family c describes.
func describeFamilies(t *testing.T, fams map[string]*metricFamily, c prometheus.Collector) {
	t.Helper()
	hist := false
	switch c.(type) {
	case *prometheus.HistogramVec, prometheus.Histogram, *prometheus.SummaryVec, prometheus.Summary:
		hist = true
	}
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read descriptor %s", d)
		}
		f := addFamily(fams, m[1], hist)
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"); l != "" {
				f.labels[l] = true
			}
		}
	}
}

var (
	typeRE   = regexp.MustCompile(`^# TYPE (\S+) (\S+)$`)
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	labelRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
)

// scrapeFamilies adds the families of a /metrics text exposition.
func scrapeFamilies(fams map[string]*metricFamily, text string) {
	for _, line := range strings.Split(text, "\n") {
		if m := typeRE.FindStringSubmatch(line); m != nil {
			addFamily(fams, m[1], m[2] == "histogram" || m[2] == "summary")
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(line, "#") {
			continue
		}
		name := m[1]
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if f, ok := fams[strings.TrimSuffix(name, suf)]; ok && f.histogram {
				name = strings.TrimSuffix(name, suf)
			}
		}
		f := addFamily(fams, name, false)
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			if l[1] != "le" && l[1] != "quantile" {
				f.labels[l[1]] = true
			}
		}
	}
}

const metricsRules = `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - {name: primary, time_zone: UTC, rotation: 1w, handoff: "09:00", start: 2026-01-05, members: [alice@example.com]}
  policies:
    - name: urgent
      levels: [{schedule: primary, after: 10m}]
rules:
  - name: page-urgent
    query: "priority:4 AND agent_id:0"
    actions:
      - page: {policy: urgent, text: "urgent #{{ ticket.id }}"}
`

// deskbotMetrics returns every metric family deskbot's /metrics can show,
// with its labels: the scheduler's and the desk transport's from their
// collectors' descriptors (a labelled vector shows on /metrics only once it
// has a series), and the rest, on-call and the leader gauge included, from
// the /metrics of the binary running rules with on-call on its embedded
// simulator.
func deskbotMetrics(t *testing.T) map[string]*metricFamily {
	t.Helper()
	fams := map[string]*metricFamily{}
	ctx := context.Background()
	// Rules with an on-call section, so the on-call metrics are there too.
	rulesPath := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesPath, []byte(metricsRules), 0o600); err != nil {
		t.Fatal(err)
	}

	rec := &recordingRegisterer{Registry: prometheus.NewRegistry()}
	sdclient.InstrumentTransport(nil, rec)
	client, err := sdclient.New("http://127.0.0.1:1", "key")
	if err != nil {
		t.Fatal(err)
	}
	// Any rules will do: the scheduler registers all its metrics at once.
	set, err := rules.Load("rules.yaml", []byte("version: 1\nrules:\n  - {name: r, query: \"priority:4\", actions: [{note: n}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := scheduler.New(slog.New(slog.DiscardHandler), firing.ClientDesk(client), set, st, nil, scheduler.WithRegistry(rec)); err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.collectors {
		describeFamilies(t, fams, c)
	}

	addr := freeAddr(t)
	start(t, map[string]string{"DESKBOT_RULES": rulesPath, "DESKBOT_HTTP_ADDR": addr})
	text := pollMetrics(t, addr, 30*time.Second, func(text string) bool {
		return strings.Contains(text, "\ndeskbot_scheduler_leader ") && strings.Contains(text, "\ndeskbot_oncall_on_call{")
	})
	scrapeFamilies(fams, text)
	return fams
}

var (
	metricRE   = regexp.MustCompile(`\b(deskbot_[a-z0-9_]+)\b(\s*\{([^}]*)\})?`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	groupingRE = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	legendRE   = regexp.MustCompile(`\{\{\s*\.?([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	labelsRE   = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
	labelValRE = regexp.MustCompile(`label_values\(\s*(deskbot_[a-z0-9_]+)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
)

// checkExpr reports metrics and labels of a PromQL expression that
// deskbot does not have, and returns the labels its series may carry.
func checkExpr(t *testing.T, fams map[string]*metricFamily, where, expr string) map[string]bool {
	t.Helper()
	allowed := map[string]bool{}
	for _, l := range targetLabels {
		allowed[l] = true
	}
	found := false
	for _, m := range metricRE.FindAllStringSubmatch(expr, -1) {
		found = true
		name, bucket := m[1], false
		f := fams[name]
		if f == nil {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if g := fams[strings.TrimSuffix(name, suf)]; g != nil && g.histogram && strings.HasSuffix(name, suf) {
					f, bucket = g, suf == "_bucket"
				}
			}
		}
		if f == nil {
			t.Errorf("%s: deskbot has no metric %s (in %s)", where, name, expr)
			continue
		}
		own := map[string]bool{}
		for l := range f.labels {
			own[l] = true
			// Under honor_labels: false a label clashing with a target
			// label is stored as exported_<label>.
			if slices.Contains(targetLabels, l) {
				own["exported_"+l] = true
			}
		}
		if bucket {
			own["le"] = true
		}
		for _, tl := range targetLabels {
			own[tl] = true
		}
		for _, mm := range matcherRE.FindAllStringSubmatch(m[3], -1) {
			if !own[mm[1]] {
				t.Errorf("%s: %s has no label %s (in %s)", where, name, mm[1], expr)
			}
		}
		for l := range own {
			allowed[l] = true
		}
	}
	if !found && !strings.Contains(expr, "up{") {
		t.Errorf("%s: names no deskbot metric: %s", where, expr)
	}
	for _, g := range groupingRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !allowed[l] {
				t.Errorf("%s: no metric of %s has label %s", where, expr, l)
			}
		}
	}
	for _, m := range labelValRE.FindAllStringSubmatch(expr, -1) {
		if f := fams[m[1]]; f != nil && !f.labels[m[2]] && !slices.Contains(targetLabels, m[2]) {
			t.Errorf("%s: %s has no label %s", where, m[1], m[2])
		}
	}
	return allowed
}

func checkTemplate(t *testing.T, where, text string, re *regexp.Regexp, allowed map[string]bool) {
	t.Helper()
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if !allowed[m[1]] {
			t.Errorf("%s: %q names label %s, which its series do not have", where, text, m[1])
		}
	}
}

// TestDeployMonitoringMetricsExist: every metric and label the dashboard,
// the alerts and the alerts' tests name is one deskbot exports, so a
// renamed metric breaks the build instead of a graph or an alert.
func TestDeployMonitoringMetricsExist(t *testing.T) {
	fams := deskbotMetrics(t)
	for _, must := range []string{"deskbot_scheduler_leader", "deskbot_desk_requests_total", "deskbot_scheduler_decisions_total",
		"deskbot_oncall_time_to_ack_seconds", "deskbot_mirror_feed_cursor_age_seconds", "deskbot_build_info"} {
		if fams[must] == nil {
			t.Fatalf("the test's view of deskbot's metrics lacks %s", must)
		}
	}
	dir := filepath.Join(deployDir, "monitoring")

	// The dashboard.
	data, err := os.ReadFile(filepath.Join(dir, "deskbot-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr         string `json:"expr"`
				LegendFormat string `json:"legendFormat"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("deskbot-dashboard.json: %v", err)
	}
	var rows []string
	ids := map[int]bool{}
	exprs := 0
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("dashboard: panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard: panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs++
			where := "dashboard panel " + p.Title
			allowed := checkExpr(t, fams, where, tg.Expr)
			checkTemplate(t, where, tg.LegendFormat, legendRE, allowed)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			checkExpr(t, fams, "dashboard variable "+v.Name, v.Definition)
		}
	}
	for _, want := range []string{"Leader", "Desk requests and budget", "Mirror", "Rules", "retries", "On-call", "Slack and desk errors"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("dashboard: no row about %q; rows %q", want, rows)
		}
	}
	if exprs < 20 {
		t.Errorf("dashboard: only %d queries", exprs)
	}

	// The alerts.
	var alerts struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, filepath.Join(dir, "alerts.yaml"), &alerts)
	var names []string
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			allowed := checkExpr(t, fams, "alert "+r.Alert, r.Expr)
			for _, a := range r.Annotations {
				checkTemplate(t, "alert "+r.Alert, a, labelsRE, allowed)
			}
			if r.Labels["severity"] == "" {
				t.Errorf("alert %s: no severity", r.Alert)
			}
		}
	}

	// Their tests: each alert fires in one, on series deskbot has.
	var tests struct {
		Tests []struct {
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, filepath.Join(dir, "alerts_test.yaml"), &tests)
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, s := range tc.InputSeries {
			if !strings.HasPrefix(s.Series, "up{") {
				checkExpr(t, fams, "alerts_test.yaml series", s.Series)
			}
		}
		for _, a := range tc.AlertRuleTest {
			if !slices.Contains(names, a.Alertname) {
				t.Errorf("alerts_test.yaml: tests %s, which alerts.yaml lacks", a.Alertname)
			}
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	for _, n := range names {
		if !fires[n] {
			t.Errorf("alerts_test.yaml: no test in which %s fires", n)
		}
	}
	for _, want := range []string{"DeskbotNoLeader", "DeskbotPollingStretched", "DeskbotPollingStalled", "DeskbotDeskRejectsKey",
		"DeskbotActionsFailing", "DeskbotPageExhausted", "DeskbotMirrorFeedBehind"} {
		if !slices.Contains(names, want) {
			t.Errorf("alerts.yaml: no alert %s", want)
		}
	}
}

// readYAML decodes the YAML file at path into v, failing t.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
}

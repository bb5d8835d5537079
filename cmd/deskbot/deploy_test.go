package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/statuspage"
)

// These tests keep deploy/ true to the binary: the Compose file, the
// Kubernetes manifests, the Grafana dashboard and the Prometheus alerts may
// only name variables, paths, ports, probes and metrics that deskbot has.

const deployDir = "../../deploy"

// configVars are the environment variables deskbot reads, from the config
// struct's tags.
func configVars(t *testing.T) map[string]bool {
	t.Helper()
	vars := map[string]bool{}
	typ := reflect.TypeOf(config{})
	for i := range typ.NumField() {
		if tag := typ.Field(i).Tag.Get("env"); tag != "" {
			name, _, _ := strings.Cut(tag, ",")
			vars[name] = true
		}
	}
	if len(vars) < 10 {
		t.Fatalf("only %d variables in the config struct's tags: %v", len(vars), vars)
	}
	return vars
}

// readEnvFile reads KEY=VALUE lines, skipping blanks and # comments.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s:%d: not KEY=VALUE: %q", path, n, line)
		}
		vals[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vals
}

// checkConfig loads deskbot's configuration from env as the binary would,
// so a value deskbot refuses (a malformed address, a token of the wrong
// kind) fails here rather than at someone's first deploy.
func checkConfig(t *testing.T, where string, env map[string]string) *config {
	t.Helper()
	vars := configVars(t)
	for k := range env {
		if !vars[k] {
			t.Errorf("%s: sets %s, which deskbot does not read", where, k)
		}
	}
	cfg, err := loadConfig(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%s: deskbot refuses the configuration: %v", where, err)
	}
	return cfg
}

// opsPathStatus asks deskbot's own ops server (with a passing check) for
// path, so probes name paths deskbot serves.
func opsPathStatus(t *testing.T, path string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context) error { return nil }
	ops := newOpsServer(ln, newRegistry(), []readyCheck{{"ok", ok}}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ops.serve(ctx) }()
	defer func() { cancel(); <-done }()
	resp, err := http.Get("http://" + ops.Addr() + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// httpPort is the port of a DESKBOT_HTTP_ADDR value.
func httpPort(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("DESKBOT_HTTP_ADDR %q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("DESKBOT_HTTP_ADDR %q: %v", addr, err)
	}
	return n
}

// ---- Kubernetes ----------------------------------------------------------

// Just the parts of the Kubernetes types that the manifests use: decoding
// with KnownFields refuses any other field, so a typo (or a field this
// test does not know) fails instead of being silently ignored.
type (
	k8sMeta struct {
		Name        string            `yaml:"name"`
		Namespace   string            `yaml:"namespace"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	labelSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	k8sDeployment struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       struct {
			Replicas                int           `yaml:"replicas"`
			ProgressDeadlineSeconds int           `yaml:"progressDeadlineSeconds"`
			Selector                labelSelector `yaml:"selector"`
			Strategy                struct {
				Type          string `yaml:"type"`
				RollingUpdate struct {
					MaxUnavailable any `yaml:"maxUnavailable"`
					MaxSurge       any `yaml:"maxSurge"`
				} `yaml:"rollingUpdate"`
			} `yaml:"strategy"`
			Template struct {
				Metadata k8sMeta    `yaml:"metadata"`
				Spec     k8sPodSpec `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	k8sPodSpec struct {
		AutomountServiceAccountToken  *bool `yaml:"automountServiceAccountToken"`
		TerminationGracePeriodSeconds int   `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot   *bool `yaml:"runAsNonRoot"`
			RunAsUser      int64 `yaml:"runAsUser"`
			RunAsGroup     int64 `yaml:"runAsGroup"`
			SeccompProfile struct {
				Type string `yaml:"type"`
			} `yaml:"seccompProfile"`
		} `yaml:"securityContext"`
		TopologySpreadConstraints []struct {
			MaxSkew           int           `yaml:"maxSkew"`
			TopologyKey       string        `yaml:"topologyKey"`
			WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
			LabelSelector     labelSelector `yaml:"labelSelector"`
		} `yaml:"topologySpreadConstraints"`
		Containers []k8sContainer `yaml:"containers"`
		Volumes    []struct {
			Name      string `yaml:"name"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
			Secret *struct {
				SecretName string `yaml:"secretName"`
			} `yaml:"secret"`
			EmptyDir *struct {
				SizeLimit string `yaml:"sizeLimit"`
			} `yaml:"emptyDir"`
		} `yaml:"volumes"`
	}
	k8sContainer struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Env            []k8sEnv  `yaml:"env"`
		StartupProbe   *k8sProbe `yaml:"startupProbe"`
		LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
		ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
		Resources      struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
	}
	k8sEnv struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name     string `yaml:"name"`
				Key      string `yaml:"key"`
				Optional bool   `yaml:"optional"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	k8sProbe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"`
		} `yaml:"httpGet"`
		InitialDelaySeconds int `yaml:"initialDelaySeconds"`
		PeriodSeconds       int `yaml:"periodSeconds"`
		TimeoutSeconds      int `yaml:"timeoutSeconds"`
		FailureThreshold    int `yaml:"failureThreshold"`
		SuccessThreshold    int `yaml:"successThreshold"`
	}
	k8sService struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Name       string `yaml:"name"`
				Port       int    `yaml:"port"`
				TargetPort any    `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	k8sPDB struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       struct {
			MinAvailable   any           `yaml:"minAvailable"`
			MaxUnavailable any           `yaml:"maxUnavailable"`
			Selector       labelSelector `yaml:"selector"`
		} `yaml:"spec"`
	}
	kzImage struct {
		Name    string `yaml:"name"`
		NewName string `yaml:"newName"`
		NewTag  string `yaml:"newTag"`
	}
	kustomization struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Namespace  string `yaml:"namespace"`
		Labels     []struct {
			Pairs            map[string]string `yaml:"pairs"`
			IncludeSelectors bool              `yaml:"includeSelectors"`
		} `yaml:"labels"`
		Images             []kzImage `yaml:"images"`
		Resources          []string  `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
		SecretGenerator []struct {
			Name string   `yaml:"name"`
			Envs []string `yaml:"envs"`
		} `yaml:"secretGenerator"`
	}
)

// decodeStrict decodes every document of path into a fresh value of v's
// type, refusing unknown fields, and returns them.
func decodeStrict[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var out []T
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no YAML document", path)
	}
	return out
}

// kindOf reads the kind of a manifest's only document.
func kindOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return head.APIVersion + " " + head.Kind
}

func labelsSubset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return len(sub) > 0
}

func TestDeployKubernetes(t *testing.T) {
	dir := filepath.Join(deployDir, "kubernetes")
	kz := decodeStrict[kustomization](t, filepath.Join(dir, "kustomization.yaml"))[0]
	if kz.APIVersion != "kustomize.config.k8s.io/v1beta1" || kz.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: %s %s", kz.APIVersion, kz.Kind)
	}

	// Every manifest is in the kustomization, and every file it names exists.
	listed := map[string]bool{"kustomization.yaml": true}
	for _, r := range kz.Resources {
		listed[r] = true
	}
	var rulesConfigMap, rulesKey string
	for _, g := range kz.ConfigMapGenerator {
		for _, f := range g.Files {
			listed[f] = true
			if filepath.Base(f) == "rules.yaml" {
				rulesConfigMap, rulesKey = g.Name, filepath.Base(f)
				// The shipped rules load as deskbot loads them.
				if _, err := rules.LoadFile(filepath.Join(dir, f)); err != nil {
					t.Errorf("configMapGenerator %s: %v", g.Name, err)
				}
			}
		}
	}
	if rulesConfigMap == "" {
		t.Fatal("kustomization.yaml: no configMapGenerator with rules.yaml")
	}
	secretKeys := map[string]map[string]string{} // secret name -> its example keys
	for _, g := range kz.SecretGenerator {
		for _, e := range g.Envs {
			// The real env file holds secrets and is not committed; its
			// example lists the keys.
			ex := readEnvFile(t, filepath.Join(dir, e+".example"))
			if secretKeys[g.Name] == nil {
				secretKeys[g.Name] = map[string]string{}
			}
			for k, v := range ex {
				secretKeys[g.Name][k] = v
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") && !listed[e.Name()] {
			t.Errorf("%s is not in kustomization.yaml", e.Name())
		}
	}

	var deps []k8sDeployment
	var svcs []k8sService
	var pdbs []k8sPDB
	for _, r := range kz.Resources {
		path := filepath.Join(dir, r)
		switch k := kindOf(t, path); k {
		case "apps/v1 Deployment":
			deps = append(deps, decodeStrict[k8sDeployment](t, path)...)
		case "v1 Service":
			svcs = append(svcs, decodeStrict[k8sService](t, path)...)
		case "policy/v1 PodDisruptionBudget":
			pdbs = append(pdbs, decodeStrict[k8sPDB](t, path)...)
		default:
			t.Errorf("%s: %s: not a kind this test checks", r, k)
		}
	}
	if len(deps) != 1 || len(svcs) != 1 || len(pdbs) != 1 {
		t.Fatalf("want one Deployment, Service and PodDisruptionBudget; got %d, %d, %d", len(deps), len(svcs), len(pdbs))
	}
	dep := deps[0]
	pod := dep.Spec.Template.Spec
	podLabels := dep.Spec.Template.Metadata.Labels

	if dep.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", dep.Spec.Replicas)
	}
	if !labelsSubset(dep.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", dep.Spec.Selector.MatchLabels, podLabels)
	}
	if min := int(stopTimeout/time.Second) + 5; pod.TerminationGracePeriodSeconds < min {
		t.Errorf("terminationGracePeriodSeconds %d: want at least %d, deskbot's graceful stop (%s) and a margin",
			pod.TerminationGracePeriodSeconds, min, stopTimeout)
	}
	if sc := pod.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Errorf("pod securityContext: want runAsNonRoot and a non-zero runAsUser, got %+v", sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if sc := c.SecurityContext; sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container securityContext: want allowPrivilegeEscalation false, readOnlyRootFilesystem true, drop ALL; got %+v", sc)
	}
	for _, res := range []string{"cpu", "memory"} {
		if c.Resources.Requests[res] == "" || c.Resources.Limits[res] == "" {
			t.Errorf("resources: want requests and limits of %s, got %+v", res, c.Resources)
		}
	}
	if !slices.ContainsFunc(kz.Images, func(im kzImage) bool { return im.Name == c.Image }) {
		t.Errorf("image %q is not set by kustomization.yaml's images:", c.Image)
	}
	if len(c.Args) != 1 || c.Args[0] != "run" {
		t.Errorf("args %q, want [run]", c.Args)
	}

	// The environment: only variables deskbot reads, secrets from the
	// generated Secret, and a configuration deskbot accepts.
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			keys, ok := secretKeys[ref.Name]
			if !ok {
				t.Errorf("env %s: secret %q is not generated by kustomization.yaml", e.Name, ref.Name)
				continue
			}
			v, ok := keys[ref.Key]
			if !ok {
				t.Errorf("env %s: key %q is not in secret %s's example env file", e.Name, ref.Key, ref.Name)
			}
			env[e.Name] = v
		default:
			t.Errorf("env %s: a valueFrom this test does not know", e.Name)
		}
	}
	for name, keys := range secretKeys {
		for k := range keys {
			if _, ok := env[k]; !ok {
				t.Errorf("secret %s has key %s that no env var of the Deployment uses", name, k)
			}
		}
	}
	for _, must := range []string{"DESKBOT_DESK_URL", "DESKBOT_DESK_API_KEY", "DESKBOT_STATE", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} {
		if e := envEntry(c, must); e == nil || e.ValueFrom == nil {
			t.Errorf("%s must come from the Secret", must)
		}
	}
	cfg := checkConfig(t, "deployment.yaml", env)
	if !strings.HasPrefix(cfg.State, "postgres://") {
		t.Errorf("DESKBOT_STATE %q: two replicas need a shared postgres:// store", cfg.State)
	}
	// The status pages: reachable through kubectl port-forward (the pod's
	// loopback) and, from the rest of the cluster, only once a token is
	// set; the example sets none.
	if e := envEntry(c, "DESKBOT_UI_TOKEN"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || !e.ValueFrom.SecretKeyRef.Optional {
		t.Errorf("DESKBOT_UI_TOKEN must come from the Secret, optional (unset: the pages stay behind port-forward)")
	}
	if cfg.UIToken != "" || statuspage.IsLoopback(cfg.HTTPAddr) {
		t.Errorf("the example opens the status pages to the cluster (token %v, address %s)", cfg.UIToken != "", cfg.HTTPAddr)
	}

	// The ports: the container port is where deskbot listens, and every
	// probe names it and a path deskbot serves.
	port := httpPort(t, cfg.HTTPAddr)
	if host, _, _ := net.SplitHostPort(cfg.HTTPAddr); host == "127.0.0.1" || host == "localhost" {
		t.Errorf("DESKBOT_HTTP_ADDR %s: probes and Prometheus cannot reach a loopback address", cfg.HTTPAddr)
	}
	portNames := map[string]int{}
	for _, p := range c.Ports {
		portNames[p.Name] = p.ContainerPort
		if p.ContainerPort != port {
			t.Errorf("containerPort %d, but deskbot listens on %d", p.ContainerPort, port)
		}
	}
	resolve := func(p any) int {
		switch p := p.(type) {
		case int:
			return p
		case string:
			return portNames[p]
		}
		return 0
	}
	for _, pr := range []struct {
		name, path string
		probe      *k8sProbe
	}{
		{"startupProbe", "/healthz", c.StartupProbe},
		{"livenessProbe", "/healthz", c.LivenessProbe},
		{"readinessProbe", "/readyz", c.ReadinessProbe},
	} {
		if pr.probe == nil {
			t.Errorf("no %s", pr.name)
			continue
		}
		if pr.probe.HTTPGet.Path != pr.path {
			t.Errorf("%s path %q, want %s", pr.name, pr.probe.HTTPGet.Path, pr.path)
		}
		if got := resolve(pr.probe.HTTPGet.Port); got != port {
			t.Errorf("%s port %v is %d, but deskbot listens on %d", pr.name, pr.probe.HTTPGet.Port, got, port)
		}
		if code := opsPathStatus(t, pr.probe.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("%s: deskbot answers %s with %d", pr.name, pr.probe.HTTPGet.Path, code)
		}
		// /readyz waits up to 5 s for the desk: a shorter timeout fails
		// the probe on a slow desk.
		if pr.name == "readinessProbe" && pr.probe.TimeoutSeconds < 6 {
			t.Errorf("readinessProbe timeoutSeconds %d: /readyz may take 5 s", pr.probe.TimeoutSeconds)
		}
	}

	// The rules: DESKBOT_RULES lies in the mount of the rules ConfigMap.
	volumes := map[string]string{} // volume name -> its ConfigMap ("" for others)
	for _, v := range pod.Volumes {
		volumes[v.Name] = ""
		if v.ConfigMap != nil {
			volumes[v.Name] = v.ConfigMap.Name
		}
	}
	rulesMounted := false
	for _, m := range c.VolumeMounts {
		cm, ok := volumes[m.Name]
		if !ok {
			t.Errorf("volumeMount %s: no such volume", m.Name)
		}
		if cm == rulesConfigMap && filepath.Join(m.MountPath, rulesKey) == env["DESKBOT_RULES"] {
			rulesMounted = true
		}
	}
	if !rulesMounted {
		t.Errorf("DESKBOT_RULES %q is not %s in a mount of ConfigMap %s", env["DESKBOT_RULES"], rulesKey, rulesConfigMap)
	}

	svc := svcs[0]
	if !labelsSubset(svc.Spec.Selector, podLabels) {
		t.Errorf("the Service's selector %v does not select the pods %v", svc.Spec.Selector, podLabels)
	}
	for _, p := range svc.Spec.Ports {
		if resolve(p.TargetPort) != port {
			t.Errorf("Service port %s: targetPort %v is not deskbot's port %d", p.Name, p.TargetPort, port)
		}
	}
	pdb := pdbs[0]
	if !labelsSubset(pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("the PodDisruptionBudget's selector %v does not select the pods %v", pdb.Spec.Selector.MatchLabels, podLabels)
	}
	if pdb.Spec.MinAvailable != 1 {
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1 of the 2 replicas", pdb.Spec.MinAvailable)
	}
}

func envEntry(c k8sContainer, name string) *k8sEnv {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// ---- Compose -------------------------------------------------------------

func TestDeployCompose(t *testing.T) {
	path := filepath.Join(deployDir, "compose.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Compose has too many fields to mirror here; `docker-compose config`
	// (in .ci/run) validates the schema. This test checks what deskbot
	// contributes: variables, port, rules path and stop timeout.
	var doc struct {
		Services map[string]map[string]any `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	replicas := 0
	for name, svc := range doc.Services {
		if svc["image"] != "deskbot:local" || svc["command"] != nil {
			continue // PostgreSQL, and the simulator
		}
		replicas++
		env := map[string]string{}
		envFile, _ := svc["env_file"].(string)
		if envFile == "" {
			t.Errorf("%s: no env_file: secrets belong in one", name)
		} else {
			for k, v := range readEnvFile(t, filepath.Join(deployDir, envFile+".example")) {
				env[k] = v
			}
		}
		for k, v := range svc["environment"].(map[string]any) {
			env[k] = fmt.Sprint(v)
		}
		for _, s := range []string{"DESKBOT_DESK_API_KEY", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DESKBOT_STATE"} {
			if _, inline := svc["environment"].(map[string]any)[s]; inline {
				t.Errorf("%s: %s is set in compose.yaml; it belongs in the env file", name, s)
			}
		}
		cfg := checkConfig(t, "compose.yaml "+name, env)
		if !strings.HasPrefix(cfg.State, "postgres://") {
			t.Errorf("%s: DESKBOT_STATE %q: replicas need a shared postgres:// store", name, cfg.State)
		}
		// The status pages need the token (deskbot listens on every
		// address in the container), which the example leaves unset, and
		// the ports are published on the host's loopback only.
		if cfg.UIToken != "" {
			t.Errorf("%s: the example env file sets DESKBOT_UI_TOKEN", name)
		}
		for _, p := range svc["ports"].([]any) {
			if !strings.HasPrefix(p.(string), "127.0.0.1:") {
				t.Errorf("%s: port %q is published beyond the host's loopback", name, p)
			}
		}
		port := httpPort(t, cfg.HTTPAddr)
		for _, p := range svc["ports"].([]any) {
			s := p.(string)
			if !strings.HasSuffix(s, ":"+strconv.Itoa(port)) {
				t.Errorf("%s: port %q does not publish deskbot's port %d", name, s, port)
			}
		}
		grace, err := time.ParseDuration(fmt.Sprint(svc["stop_grace_period"]))
		if err != nil || grace <= stopTimeout {
			t.Errorf("%s: stop_grace_period %v: want more than deskbot's graceful stop, %s", name, svc["stop_grace_period"], stopTimeout)
		}
		mounted := false
		for _, v := range svc["volumes"].([]any) {
			src, rest, _ := strings.Cut(v.(string), ":/")
			target, _, _ := strings.Cut("/"+rest, ":")
			if target != cfg.Rules {
				continue
			}
			mounted = true
			// ${VAR:-default}: the default file must exist and load.
			if d, ok := strings.CutPrefix(src, "${DESKBOT_RULES_FILE:-"); ok {
				src = strings.TrimSuffix(d, "}")
			}
			if _, err := rules.LoadFile(filepath.Join(deployDir, src)); err != nil {
				t.Errorf("%s: rules file %s: %v", name, src, err)
			}
		}
		if !mounted {
			t.Errorf("%s: DESKBOT_RULES %q is not a mounted file", name, cfg.Rules)
		}
	}
	if replicas != 2 {
		t.Errorf("%d deskbot replicas in compose.yaml, want 2", replicas)
	}
}

// slackManifest is the part of slack-app-manifest.yaml that deskbot's
// features depend on.
type slackManifest struct {
	DisplayInformation map[string]any `yaml:"display_information"`
	Features           struct {
		BotUser map[string]any `yaml:"bot_user"`
		AppHome struct {
			HomeTab     bool `yaml:"home_tab_enabled"`
			MessagesTab bool `yaml:"messages_tab_enabled"`
		} `yaml:"app_home"`
		SlashCommands []map[string]any   `yaml:"slash_commands"`
		Shortcuts     []manifestShortcut `yaml:"shortcuts"`
		UnfurlDomains []string           `yaml:"unfurl_domains"`
	} `yaml:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		Interactivity struct {
			IsEnabled bool `yaml:"is_enabled"`
		} `yaml:"interactivity"`
		EventSubscriptions struct {
			BotEvents []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		SocketModeEnabled    bool `yaml:"socket_mode_enabled"`
		OrgDeployEnabled     bool `yaml:"org_deploy_enabled"`
		TokenRotationEnabled bool `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
}

// manifestShortcut is one shortcut of the manifest.
type manifestShortcut struct {
	Name        string `yaml:"name"`
	Type        string `yaml:"type"`
	CallbackID  string `yaml:"callback_id"`
	Description string `yaml:"description"`
}

// TestSlackManifestTicketsFromMessages: the manifest declares what tickets
// from messages and link unfurls need (issue 13): the message shortcut
// under the callback id the transport answers, the events, and their
// scopes.
func TestSlackManifestTicketsFromMessages(t *testing.T) {
	b, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m slackManifest
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("slack-app-manifest.yaml: %v", err)
	}
	i := slices.IndexFunc(m.Features.Shortcuts, func(s manifestShortcut) bool {
		return s.CallbackID == slackchat.ShortcutCallbackID
	})
	if i < 0 || m.Features.Shortcuts[i].Type != "message" || m.Features.Shortcuts[i].Name == "" || m.Features.Shortcuts[i].Description == "" {
		t.Errorf("shortcuts %+v; want a message shortcut %q with name and description", m.Features.Shortcuts, slackchat.ShortcutCallbackID)
	}
	if n := len(m.Features.UnfurlDomains); n == 0 || n > 5 {
		t.Errorf("unfurl_domains %v; want 1 to 5 (Slack's limit)", m.Features.UnfurlDomains)
	}
	if !m.Features.AppHome.HomeTab || !m.Features.AppHome.MessagesTab {
		t.Errorf("app_home %+v; want the Home tab and the Messages tab (on-call DMs) on", m.Features.AppHome)
	}
	for _, ev := range []string{"reaction_added", "link_shared", "app_home_opened"} {
		if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, ev) {
			t.Errorf("bot_events %v lack %s", m.Settings.EventSubscriptions.BotEvents, ev)
		}
	}
	for _, sc := range []string{"commands", "chat:write", "users:read", "users:read.email", "channels:history", "groups:history", "reactions:read", "links:read", "links:write"} {
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, sc) {
			t.Errorf("bot scopes %v lack %s", m.OAuthConfig.Scopes.Bot, sc)
		}
	}
	if !m.Settings.Interactivity.IsEnabled || !m.Settings.SocketModeEnabled {
		t.Error("interactivity and socket mode must be on")
	}
}

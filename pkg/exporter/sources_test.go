package exporter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-informer/kubectl-informer/internal/yamlcheck"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// familyNames returns the names of c's families, in order.
func familyNames(c *Compiled) []string {
	var out []string
	for _, r := range c.Resources {
		for _, f := range r.Families {
			out = append(out, f.Name)
		}
	}
	return out
}

func TestSourcesSelectAndMerge(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	all, err := Sources{Profile: profiles.KubeStateMetrics}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	names := familyNames(all)
	if len(names) < 3 {
		t.Fatalf("the profile has %d families: %v", len(names), names)
	}

	allow, err := Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricAllowlist: []string{"phase$", "^kube_pod_info$"}}}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	var want []string // the phase families, whichever resources have one, and kube_pod_info
	for _, n := range names {
		if strings.HasSuffix(n, "phase") || n == "kube_pod_info" {
			want = append(want, n)
		}
	}
	slices.Sort(want)
	if got := strings.Join(slices.Sorted(slices.Values(familyNames(allow))), " "); got != strings.Join(want, " ") || !slices.Contains(want, "kube_pod_status_phase") {
		t.Errorf("allowlist: %s", got)
	}
	deny, err := Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricDenylist: []string{"phase"}}}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range familyNames(deny) {
		if strings.Contains(n, "phase") {
			t.Errorf("denylist serves %s", n)
		}
	}
	phases := 0
	for _, n := range names {
		if strings.Contains(n, "phase") {
			phases++
		}
	}
	if phases < 2 || len(familyNames(deny)) != len(names)-phases {
		t.Errorf("denylist: %v", familyNames(deny))
	}
	// A selection that changes a file writes it again; what is written
	// compiles and keeps the comments.
	files, err := Selection{MetricDenylist: []string{"phase"}}.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Resource == "pods" && (!strings.Contains(string(f.Data), "# ") || strings.Contains(string(f.Data), "name: kube_pod_status_phase")) {
			t.Errorf("the selected pods file:\n%s", f.Data)
		}
	}
	if _, err := (Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricAllowlist: []string{"a"}, MetricDenylist: []string{"b"}}}).Load(env); err == nil {
		t.Error("an allowlist and a denylist are accepted together")
	}
	if _, err := (Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricAllowlist: []string{"("}}}).Load(env); err == nil || !strings.Contains(err.Error(), `"("`) {
		t.Errorf("a bad pattern: %v", err)
	}
	if _, err := (Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{Resources: []string{"pod"}}}).Load(env); err == nil || !strings.Contains(err.Error(), `resource "pod" is not one of the kube-state-metrics profile`) {
		t.Errorf("an unknown resource: %v", err)
	}
	if _, err := (Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricAllowlist: []string{"^nothing$"}}}).Load(env); err == nil || !strings.Contains(err.Error(), "leaves no family") {
		t.Errorf("a selection of nothing: %v", err)
	}

	// The user's config is served beside the profile; a name in both is
	// refused, naming both places.
	dir := t.TempDir()
	own := filepath.Join(dir, "own.yaml")
	write := func(name string) {
		t.Helper()
		cfg := "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n- resource: pods\n  metrics:\n  - name: " + name + "\n    help: h\n    type: gauge\n    labels:\n      uid: object.metadata.uid\n"
		if err := os.WriteFile(own, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("my_pods")
	both, err := Sources{Profile: profiles.KubeStateMetrics, ConfigPath: own}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	if got := familyNames(both); len(got) != len(names)+1 || got[len(got)-1] != "my_pods" {
		t.Errorf("profile and config: %v", got)
	}
	if !strings.Contains(both.Path, "kube-state-metrics/pods.yaml") || !strings.HasSuffix(both.Path, own) || both.Hash == all.Hash {
		t.Errorf("merged path %q, hash %q", both.Path, both.Hash)
	}
	if w := both.DuplicateSeries(); len(w) != 0 {
		t.Errorf("duplicate series warnings: %v", w)
	}
	write("kube_pod_info")
	_, err = Sources{Profile: profiles.KubeStateMetrics, ConfigPath: own}.Load(env)
	if err == nil || !strings.Contains(err.Error(), own+`:6: metric "kube_pod_info" is also defined at kube-state-metrics/pods.yaml:`) {
		t.Errorf("a name in both: %v", err)
	}
}

// TestSourcesLeaveOutUnavailable: the profile's resources that Available
// says the server lacks are left out and named; a config file's are not
// asked about.
func TestSourcesLeaveOutUnavailable(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	c, err := Sources{Profile: profiles.KubeStateMetrics, Available: func(res string) bool {
		asked = append(asked, res)
		return res != "leases" && res != "mutatingadmissionpolicies"
	}}.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"leases", "mutatingadmissionpolicies"}; !slices.Equal(c.Unavailable, want) {
		t.Errorf("Unavailable = %v, want %v", c.Unavailable, want)
	}
	for _, r := range c.Resources {
		if r.Config.Resource == "leases" || r.Config.Resource == "mutatingadmissionpolicies" {
			t.Errorf("%s is served", r.Config.Resource)
		}
	}
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defaults := 0
	for _, f := range files {
		if f.Default {
			defaults++
		}
	}
	if len(asked) != defaults {
		t.Errorf("Available was asked of %d resources, want the profile's %d default ones", len(asked), defaults)
	}
	if len(c.Resources) != defaults-2 {
		t.Errorf("%d resources served, want %d", len(c.Resources), defaults-2)
	}
}

// TestSourcesNonDefaultResources: a resource kube-state-metrics does not
// serve by default is served only when the selection names it.
func TestSourcesNonDefaultResources(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	served := func(s Sources) []string {
		t.Helper()
		c, err := s.Load(env)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range c.Resources {
			out = append(out, r.Config.Resource)
		}
		return out
	}
	if got := served(Sources{Profile: profiles.KubeStateMetrics}); slices.Contains(got, "ingressclasses") {
		t.Errorf("the default selection serves ingressclasses: %v", got)
	}
	if got := served(Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{Resources: []string{"ingressclasses", "pods"}}}); !slices.Equal(got, []string{"ingressclasses", "pods"}) {
		t.Errorf("--resources=ingressclasses,pods serves %v", got)
	}
	if unserved, err := (Selection{Resources: []string{"ingressclasses"}}).Validate(profiles.KubeStateMetrics); err != nil || len(unserved) > 0 {
		t.Errorf("Validate(ingressclasses) = %v, %v; want it served", unserved, err)
	}
	// Every file loads, default or not.
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range files {
		all = append(all, f.Resource)
	}
	if got := served(Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{Resources: all}}); !slices.Equal(got, all) {
		t.Errorf("--resources naming every file serves %v, want %v", got, all)
	}
}

// TestSelectionKeepsAliases leaves out, one at a time, each metric of the
// profile that defines a YAML anchor, and loads the rest of its file: a
// metric that refers to the anchor (labels: *x) must still load.
func TestSelectionKeepsAliases(t *testing.T) {
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	anchored := 0
	for _, f := range files {
		var doc yaml.Node
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			t.Fatal(err)
		}
		metrics := yamlcheck.Field(yamlcheck.Field(doc.Content[0], "resources").Content[0], "metrics")
		for _, m := range metrics.Content {
			if !definesAnchor(m) {
				continue
			}
			anchored++
			name := yamlcheck.ScalarField(m, "name")
			// The opt-in families too, so that every other metric of the
			// file is served.
			sel := Selection{Resources: []string{f.Resource}, MetricDenylist: []string{"^" + name + "$"},
				MetricOptInList: profiles.OptInFamilies(profiles.KubeStateMetrics)}
			c, err := Sources{Profile: profiles.KubeStateMetrics, Selection: sel}.Load(env)
			if err != nil {
				t.Errorf("without %s: %v", name, err)
				continue
			}
			if got := familyNames(c); slices.Contains(got, name) || len(got) != len(metrics.Content)-1 {
				t.Errorf("without %s: families %v", name, got)
			}
		}
	}
	if anchored == 0 {
		t.Fatal("no metric of the profile defines an anchor: the test checks nothing")
	}
}

func definesAnchor(n *yaml.Node) bool {
	if n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if definesAnchor(c) {
			return true
		}
	}
	return false
}

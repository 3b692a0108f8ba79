package exporter

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestSelectionOptIn: the profile's opt-in families are loaded only when
// MetricOptInList matches them (anywhere in the name, as a regular
// expression), and the allowlist and denylist apply to them too, as
// kube-state-metrics combines --metric-opt-in-list with
// --metric-allowlist and --metric-denylist.
func TestSelectionOptIn(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	optIn := profiles.OptInFamilies(profiles.KubeStateMetrics)
	if !slices.Equal(optIn, []string{"kube_persistentvolume_csi_attributes", "kube_pod_nodeselectors"}) {
		t.Fatalf("opt-in families %v, want kube-state-metrics v2.20's two", optIn)
	}
	load := func(sel Selection) []string {
		t.Helper()
		c, err := Sources{Profile: profiles.KubeStateMetrics, Selection: sel}.Load(env)
		if err != nil {
			t.Fatal(err)
		}
		return familyNames(c)
	}
	def := load(Selection{})
	for _, name := range optIn {
		if slices.Contains(def, name) {
			t.Errorf("%s is served by default", name)
		}
	}
	both := load(Selection{MetricOptInList: []string{"nodeselectors", "^kube_persistentvolume_csi_attributes$"}})
	if len(both) != len(def)+2 || !slices.Contains(both, "kube_pod_nodeselectors") || !slices.Contains(both, "kube_persistentvolume_csi_attributes") {
		t.Errorf("with both opted in: %d families (default %d), want both opt-in ones added", len(both), len(def))
	}
	one := load(Selection{MetricOptInList: []string{"kube_pod_nodeselectors"}})
	if len(one) != len(def)+1 || !slices.Contains(one, "kube_pod_nodeselectors") {
		t.Errorf("with kube_pod_nodeselectors opted in: %d families (default %d)", len(one), len(def))
	}
	if got := load(Selection{MetricOptInList: optIn, MetricAllowlist: []string{"^kube_pod_(info|nodeselectors)$"}}); !slices.Equal(got, []string{"kube_pod_info", "kube_pod_nodeselectors"}) {
		t.Errorf("opted in with an allowlist: %v", got)
	}
	if got := load(Selection{MetricOptInList: optIn, MetricDenylist: []string{"nodeselectors"}}); slices.Contains(got, "kube_pod_nodeselectors") || !slices.Contains(got, "kube_persistentvolume_csi_attributes") {
		t.Errorf("opted in with a denylist: %v", got)
	}
	if _, err := (Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{MetricOptInList: []string{"("}}}).Load(env); err == nil || !strings.Contains(err.Error(), `metric opt-in pattern "("`) {
		t.Errorf("a bad opt-in pattern: %v", err)
	}
	if got := (Selection{MetricOptInList: []string{"nodeselectors", "kube_pod_info", "("}}).UnmatchedOptIns(profiles.KubeStateMetrics); !slices.Equal(got, []string{"kube_pod_info"}) {
		t.Errorf("UnmatchedOptIns = %v, want [kube_pod_info]", got)
	}
}

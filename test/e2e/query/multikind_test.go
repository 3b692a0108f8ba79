package query_test

import (
	"slices"
	"strings"
	"testing"
)

// TestTypeSpecificFieldsAcrossKinds queries pods and deployments together
// with expressions that read pod-only fields where they exist, and
// compares the names with what kubectl lists of each.
func TestTypeSpecificFieldsAcrossKinds(t *testing.T) {
	names := func(r result, what string) []string {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", what, r.code, r.errOut)
		}
		out := strings.Fields(r.out)
		slices.Sort(out)
		return out
	}
	running := names(kubectl(t, "get", "pods", "-A", "--field-selector", "status.phase=Running", "-o", "name"), "kubectl get running pods")
	pods := names(kubectl(t, "get", "pods", "-A", "-o", "name"), "kubectl get pods")
	deploys := names(kubectl(t, "get", "deployments", "-A", "-o", "name"), "kubectl get deployments")
	if len(running) == 0 || len(running) == len(pods) || len(deploys) == 0 {
		t.Fatalf("the workload has %d pods, %d running, and %d deployments: the comparison would prove nothing", len(pods), len(running), len(deploys))
	}
	union := func(a, b []string) []string {
		out := append(slices.Clone(a), b...)
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		where string
		want  []string
	}{
		{`object.kind == "Pod" ? object.status.phase == "Running" : true`, union(running, deploys)},
		{`object.kind != "Pod" || object.status.phase == "Running"`, union(running, deploys)},
		{`object.status.?phase.orValue("") == "Running"`, running},
		{`has(object.status.phase)`, pods},
		{`!has(object.status.phase)`, deploys},
	} {
		got := names(query(t, "po,deploy", "-A", "--where", tt.where, "-o", "name"), tt.where)
		if !slices.Equal(got, tt.want) {
			t.Errorf("--where %s: %d names, want %d (kubectl)\ngot:  %q\nwant: %q", tt.where, len(got), len(tt.want), got, tt.want)
		}
	}
	// A typo is still refused, with its suggestion.
	r := query(t, "po,deploy", "-A", "--where", `object.status.?phse.orValue("") == "Running"`, "-o", "name")
	if r.code != 2 || !strings.Contains(r.errOut, "undefined field 'phse'") {
		t.Errorf("a typo: exit %d, stderr %q; want exit 2 and undefined field 'phse'", r.code, r.errOut)
	}
	r = query(t, "po", "-A", "--where", `object.status.phse == "Running"`, "--count")
	if r.code != 2 || !strings.Contains(r.errOut, `undefined field 'phse' (did you mean "phase"?)`) {
		t.Errorf("a typo on pods: exit %d, stderr %q; want exit 2 and a suggestion", r.code, r.errOut)
	}
}

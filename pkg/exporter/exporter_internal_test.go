package exporter

import "testing"

// TestAdmitsLastApplied: the caches keep kubectl apply's annotation only
// when an annotations allowlist admits it for some resource.
func TestAdmitsLastApplied(t *testing.T) {
	for _, tc := range []struct {
		allow map[string][]string
		want  bool
	}{
		{nil, false},
		{map[string][]string{"pods": {"owner"}}, false},
		{map[string][]string{"*": {"*"}}, true},
		{map[string][]string{"pods": {"kubectl.kubernetes.io/*"}}, true},
		{map[string][]string{"deployments": {"owner", "kubectl.kubernetes.io/last-applied-configuration"}}, true},
	} {
		if got := admitsLastApplied(tc.allow); got != tc.want {
			t.Errorf("admitsLastApplied(%v) = %v, want %v", tc.allow, got, tc.want)
		}
	}
}

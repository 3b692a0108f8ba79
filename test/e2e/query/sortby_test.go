package query_test

import (
	"strings"
	"testing"
)

// TestSortByJSONPathMatchesKubectl sorts the workload's pods, of every
// namespace, with kubectl's JSONPath forms of --sort-by and compares what
// query prints with what kubectl get --sort-by prints for the same path:
// strings, timestamps, numbers, quantities (100m before 1), fields many
// pods share and fields some pods lack, whose order is that of kubectl's
// sort.
func TestSortByJSONPathMatchesKubectl(t *testing.T) {
	columns := "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,PHASE:.status.phase,NODE:.spec.nodeName"
	for _, path := range []string{
		".metadata.name",
		"{.metadata.name}",
		".status.phase",
		"{.spec.nodeName}",
		".metadata.creationTimestamp",
		".metadata.labels.app",
		".spec.containers[0].resources.requests.cpu",
		".spec.containers[0].resources.limits.memory",
		".status.containerStatuses[0].restartCount",
		".spec.priority",
	} {
		for _, output := range []string{"name", columns} {
			args := []string{"pods", "-A", "--sort-by", path, "-o", output}
			got := query(t, args...)
			want := kubectl(t, append([]string{"get"}, args...)...)
			if want.code != 0 {
				t.Fatalf("kubectl get %s: exit %d, stderr %q", strings.Join(args, " "), want.code, want.errOut)
			}
			if got.code != 0 || got.out != want.out {
				t.Errorf("query %s: exit %d, stderr %q, printed\n%s\nkubectl get printed\n%s", strings.Join(args, " "), got.code, got.errOut, got.out, want.out)
			}
		}
	}
}

// Package query_test runs "kubectl informer query" against a real
// kube-apiserver holding the sample workload and checks every answer against
// what the API itself lists.
package query_test

import (
	"context"
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	cluster *framework.Cluster
	spec    = workload.Spec{Namespaces: 4, Nodes: 5, Pods: 200, PodsPerDeployment: 10}
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec)))
}

// result is what one run of the plugin did.
type result struct {
	code        int
	out, errOut string
}

// query runs "kubectl informer query ARGS" in process, as the admin user
// unless args choose another kubeconfig.
func query(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, append([]string{"query", "--kubeconfig", cluster.Kubeconfig}, args...)...)
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	code, out, errOut := framework.RunPlugin(context.Background(), nil, args...)
	return result{code: code, out: out, errOut: errOut}
}

func (r result) ok(t *testing.T) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
	}
	return r.out
}

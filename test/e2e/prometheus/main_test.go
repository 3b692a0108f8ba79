// Package prometheus_test runs a real Prometheus, built from the Prometheus
// Go module by `make prometheus`, against the exporter serving a real
// kube-apiserver's objects, and checks PromQL answers against the API
// server's truth; it unit-tests the shipped alerts with promtool and runs
// every query of the shipped dashboard.
package prometheus_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	cluster *framework.Cluster
	spec    = workload.Spec{Namespaces: 2, Nodes: 3, Pods: 60, PodsPerDeployment: 10, Controllers: true}
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec)))
}

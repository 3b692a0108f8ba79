// Package exporter_test runs the exporter against a real kube-apiserver
// holding the sample workload and checks its series against the objects.
package exporter_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	cluster *framework.Cluster
	spec    = workload.Spec{Namespaces: 3, Nodes: 4, Pods: 120, PodsPerDeployment: 10}
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec)))
}

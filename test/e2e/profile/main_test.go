// Package profile_test serves the kube-state-metrics profile from a real
// kube-apiserver holding the sample workload with its controllers' objects
// and objects of every other kind the profile reads, and checks its
// families against the API server's objects.
package profile_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	cluster *framework.Cluster
	spec    = workload.Spec{Namespaces: 2, Nodes: 3, Pods: 60, PodsPerDeployment: 10, Controllers: true, Others: true}
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec)))
}

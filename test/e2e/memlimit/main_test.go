// Package memlimit_test starts the exporter's binary, as a process of its
// own, against a real kube-apiserver holding 10,000 pods, and again inside
// a memory cgroup limited from what it held the first time, as a
// container's limit would be set, and checks that it starts there. It needs
// root, to make the cgroup.
package memlimit_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) { os.Exit(framework.Main(m, &cluster)) }

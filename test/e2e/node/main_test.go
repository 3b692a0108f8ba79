// Package node runs the project on a real node: kubelet on containerd with
// kube-proxy, kube-scheduler and kube-controller-manager, all built from the
// Kubernetes modules (localcluster up -node). Its pods really run; their
// statuses are the kubelet's, and the project's image runs as users run it.
package node

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) { os.Exit(framework.MainNode(m, &cluster)) }

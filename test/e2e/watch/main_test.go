// Package watch_test runs "kubectl informer watch" in process against a real
// kube-apiserver, changes objects through the API while it runs, and reads
// the events it prints back in order.
package watch_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster))
}

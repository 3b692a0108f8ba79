// Package faults_test runs the plugin against a real kube-apiserver that
// misbehaves while it runs: restarted, with changes made behind its back.
// Its tests share one control plane and must not run in parallel.
package faults_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster))
}

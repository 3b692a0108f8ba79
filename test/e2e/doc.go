// Package e2e holds end-to-end tests that run against a real kube-apiserver
// and etcd built from the Kubernetes Go modules (see package framework). Each
// package under test/e2e starts its own control plane in TestMain.
package e2e

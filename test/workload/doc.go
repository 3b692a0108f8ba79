// Package workload loads a reproducible, realistic set of objects into a
// Kubernetes API server: namespaces, nodes with zone labels and capacity,
// deployments, pods with two containers and statuses (phases, conditions,
// restart counts) spread across the nodes, and a CustomResourceDefinition
// (databases.demo.kubectl-informer.io, short name "db", category "demo") with
// custom resources.
//
// The same Spec and Seed always produce the same objects. Load is idempotent:
// objects that already exist are left as they are, so it can be run again
// against a cluster that holds part of a workload.
//
// Without kube-controller-manager and kubelets nothing acts on these objects:
// deployments create no pods and statuses stay as written, which is what makes
// the workload reproducible.
package workload

package workload

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Spec sizes a workload.
type Spec struct {
	// Namespaces is the number of namespaces the pods spread over. Default 4.
	Namespaces int `json:"namespaces" yaml:"namespaces"`
	// Nodes is the number of nodes. Default 5.
	Nodes int `json:"nodes" yaml:"nodes"`
	// Zones labels nodes round-robin with topology.kubernetes.io/zone.
	// Default zone-a, zone-b, zone-c.
	Zones []string `json:"zones" yaml:"zones"`
	// Pods is the total number of pods. Default 300.
	Pods int `json:"pods" yaml:"pods"`
	// PodsPerDeployment is how many pods carry the labels of one deployment.
	// Default 10.
	PodsPerDeployment int `json:"podsPerDeployment" yaml:"podsPerDeployment"`
	// CustomResources is the number of Database objects. Default Pods/10.
	CustomResources int `json:"customResources" yaml:"customResources"`
	// Controllers adds, in each namespace, replica sets, stateful sets, a
	// daemon set, jobs, cron jobs, horizontal pod autoscalers, pod
	// disruption budgets and a replication controller, with the statuses
	// their controllers would write. Default false.
	Controllers bool `json:"controllers" yaml:"controllers"`
	// Others adds the objects of the other kinds kube-state-metrics
	// reports, with their statuses: in each namespace a load balancer
	// service (and one being deleted), its endpoints and endpoint slice, a service
	// account, a config map, a secret holding SecretValue, an ingress, a
	// network policy, a limit range and a lease; once, a storage class, an ingress class (the
	// ingresses'), a volume attachment, an approved and issued certificate
	// signing request, and webhook configurations and admission policies
	// with bindings that match a resource no API server serves. Default
	// false.
	Others bool `json:"others" yaml:"others"`
	// Seed makes the statuses reproducible. Default 1.
	Seed int64 `json:"seed" yaml:"seed"`
	// Concurrency is the number of requests in flight. Default 32.
	Concurrency int `json:"concurrency" yaml:"concurrency"`
	// Prefix starts the names of the namespaces and nodes, so that two
	// workloads (or a workload and other objects) share a cluster without
	// colliding. Default none.
	Prefix string `json:"prefix" yaml:"prefix"`
	// SchedulerName is the spec.schedulerName of every pod. On a cluster
	// with a running scheduler, name one that does not run: the pods the
	// workload leaves unscheduled then stay so, instead of being placed on
	// a real node. Default unset (the default scheduler).
	SchedulerName string `json:"schedulerName" yaml:"schedulerName"`
	// NodeTaints are the spec.taints of every node. On a cluster with real
	// nodes, a NoSchedule taint no pod tolerates keeps other pods, daemon
	// sets' included, off the workload's nodes, where no kubelet runs.
	// Default none.
	NodeTaints []corev1.Taint `json:"nodeTaints" yaml:"nodeTaints"`
	// PausedDeployments pauses every deployment, so that a running
	// deployment controller creates no replica set, and so no pods, for
	// them (the workload's pods have no owner it would adopt them into).
	// Default false.
	PausedDeployments bool `json:"pausedDeployments" yaml:"pausedDeployments"`
	// Now is the time the pods' start times count back from (by up to 30
	// days), truncated to the second. Default: the time Default is called,
	// so that a freshly loaded cluster has recently started pods; set it to
	// generate the same objects at any time.
	Now time.Time `json:"now" yaml:"now"`
}

// Demo is the workload `make demo` loads (hack/workload --pods 300, whose
// flags default to it): the outputs the docs show are its.
func Demo() Spec {
	return Spec{Pods: 300, Controllers: true, Others: true}
}

// Default fills unset fields with their documented defaults.
func (s Spec) Default() Spec {
	if s.Namespaces <= 0 {
		s.Namespaces = 4
	}
	if s.Nodes <= 0 {
		s.Nodes = 5
	}
	if len(s.Zones) == 0 {
		s.Zones = []string{"zone-a", "zone-b", "zone-c"}
	}
	if s.Pods < 0 {
		s.Pods = 0
	} else if s.Pods == 0 {
		s.Pods = 300
	}
	if s.PodsPerDeployment <= 0 {
		s.PodsPerDeployment = 10
	}
	if s.CustomResources <= 0 {
		s.CustomResources = s.Pods / 10
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Concurrency <= 0 {
		s.Concurrency = 32
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	s.Now = s.Now.Truncate(time.Second)
	return s
}

// namespaceNames are used in order; past the end they repeat with a number.
var namespaceNames = []string{
	"shop", "payments", "monitoring", "batch", "search", "identity", "data", "messaging",
	"media", "analytics", "ledger", "catalog", "checkout", "inventory", "notify", "reports",
	"gateway", "billing", "ml", "support",
}

// appNames name the deployments of a namespace, in order.
var appNames = []string{
	"web", "api", "worker", "cache", "db-proxy", "scheduler", "indexer", "exporter",
	"gateway", "auth", "queue", "cron", "mailer", "resizer", "ingest", "report",
}

// AppName returns the name of the i-th Deployment of a namespace
// (0-based, below len(appNames)), and the app label of its pods.
func AppName(i int) string { return appNames[i] }

// NamespaceName returns the name of the i-th namespace (0-based).
func NamespaceName(i int) string {
	n := namespaceNames[i%len(namespaceNames)]
	if r := i / len(namespaceNames); r > 0 {
		n = fmt.Sprintf("%s-%d", n, r+1)
	}
	return n
}

// NodeName returns the name of the i-th node (0-based).
func NodeName(i int) string { return fmt.Sprintf("node-%03d", i+1) }

// NamespaceName returns the name of the i-th namespace (0-based) of the
// workload: NamespaceName(i) after Prefix.
func (s Spec) NamespaceName(i int) string { return s.Prefix + NamespaceName(i) }

// NodeName returns the name of the i-th node (0-based) of the workload:
// NodeName(i) after Prefix.
func (s Spec) NodeName(i int) string { return s.Prefix + NodeName(i) }

// Command workload loads the reproducible sample workload of package
// test/workload into the cluster of a kubeconfig:
//
//	go run ./hack/workload --kubeconfig _output/cluster/kubeconfig --pods 300
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

func main() {
	var spec workload.Spec
	demo := workload.Demo()
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to load")
	flag.IntVar(&spec.Namespaces, "namespaces", 4, "namespaces")
	flag.IntVar(&spec.Nodes, "nodes", 5, "nodes")
	flag.IntVar(&spec.Pods, "pods", demo.Pods, "pods")
	flag.IntVar(&spec.PodsPerDeployment, "pods-per-deployment", 10, "pods per deployment")
	flag.IntVar(&spec.CustomResources, "databases", 0, "Database custom resources (default pods/10)")
	flag.BoolVar(&spec.Controllers, "controllers", demo.Controllers, "also create replica sets, stateful sets, daemon sets, jobs, cron jobs, autoscalers, disruption budgets and replication controllers in each namespace")
	flag.BoolVar(&spec.Others, "others", demo.Others, "also create the objects of the other kinds kube-state-metrics reports by default (services, endpoint slices, config maps, secrets, ingresses, network policies, limit ranges, leases, a storage class, a volume attachment, a certificate signing request, admission webhooks and policies)")
	flag.Int64Var(&spec.Seed, "seed", 1, "seed of the generated statuses")
	flag.IntVar(&spec.Concurrency, "concurrency", 32, "requests in flight")
	zones := flag.String("zones", "zone-a,zone-b,zone-c", "comma-separated zones")
	flag.Parse()
	spec.Zones = strings.Split(*zones, ",")

	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "workload: --kubeconfig (or KUBECONFIG) is required; it must not be a cluster you care about")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "workload: %v\n", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum, err := workload.Load(ctx, cfg, spec, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "workload: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("workload:", sum)
}

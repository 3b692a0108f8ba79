package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/internal/kubeconfigs"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// fleetResult is the measurement of a query over several clusters beside
// the same query of each cluster alone and the clusters' list transfers
// made at once.
type fleetResult struct {
	clusters int
	pods     int
	rows     []row // the transfers at once, each cluster alone, all together
}

// benchFleet starts n-1 more control planes beside the benchmark's own
// (whose kubeconfig is first), each with a workload of pods pods of its
// own seed, and measures the one-shot query whereCount over each alone
// and over all of them (--context c1,c2,…), beside their protobuf list
// transfers made at once (the floor of the query over all). All run on
// this machine: the API servers share its cores with the query.
func benchFleet(o options, first string, n, runs int) (fleetResult, error) {
	localcluster := filepath.Join(o.binDir, "localcluster")
	sources := []string{first}
	for i := 2; i <= n; i++ {
		dir := fmt.Sprintf("%s-fleet-%d", o.stateDir, i)
		_ = exec.Command(localcluster, "down", "-dir", dir).Run()                                    //nolint:gosec // G204: the localcluster binary in the -bin directory the user named
		out, err := exec.Command(localcluster, "up", "-bin", o.binDir, "-dir", dir).CombinedOutput() //nolint:gosec // G204: the localcluster binary in the -bin directory the user named
		if err != nil {
			return fleetResult{}, fmt.Errorf("starting control plane %d: %v\n%s", i, err, out)
		}
		if !o.keep {
			defer func() { _ = exec.Command(localcluster, "down", "-dir", dir).Run() }() //nolint:gosec // G204: as above
		}
		kc := strings.TrimSpace(string(out))
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			return fleetResult{}, err
		}
		spec := workload.Spec{Pods: o.pods, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50, Concurrency: 64, Seed: int64(i)}
		fmt.Fprintf(os.Stderr, "loading %d pods into cluster %d…\n", o.pods, i)
		if _, err := workload.Load(context.Background(), cfg, spec, nil); err != nil {
			return fleetResult{}, fmt.Errorf("loading cluster %d: %w", i, err)
		}
		sources = append(sources, kc)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i+1)
	}
	merged := o.stateDir + "-fleet.kubeconfig"
	if err := kubeconfigs.Merge(merged, sources, names); err != nil {
		return fleetResult{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return fleetResult{}, err
	}
	kc := "--kubeconfig=" + merged
	where := `object.status.phase == "Pending"`
	cmds := []measured{{fmt.Sprintf("GET /api/v1/pods of the %d clusters at once, protobuf (transfer only)", n), self,
		[]string{"-" + transferFlag, strings.Join(sources, ","), "-accept", protobufType}}}
	for _, name := range names {
		cmds = append(cmds, measured{"--context " + name, o.plugin, []string{"query", kc, "pods", "-A", "--where", where, "--count", "--context", name}})
	}
	cmds = append(cmds, measured{"--context " + strings.Join(names, ","), o.plugin, []string{"query", kc, "pods", "-A", "--where", where, "--count", "--context", strings.Join(names, ",")}})
	rows, err := measureAll(cmds, runs)
	if err != nil {
		return fleetResult{}, err
	}
	return fleetResult{clusters: n, pods: o.pods, rows: rows}, nil
}

// runTransfers makes the list transfer of each kubeconfig at once (see
// runTransfer), writing the bodies to stdout as they come.
func runTransfers(paths []string, accept string) error {
	out := plan.LockedWriter(os.Stdout)
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, kc := range paths {
		wg.Go(func() { errs[i] = transfer(kc, accept, out) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// render writes the fleet's section of the report.
func (f fleetResult) render() string {
	if len(f.rows) == 0 {
		return ""
	}
	var b strings.Builder
	floor, singles, all := f.rows[0], f.rows[1:len(f.rows)-1], f.rows[len(f.rows)-1]
	fmt.Fprintf(&b, "\n## A query over %d clusters\n\n", f.clusters)
	fmt.Fprintf(&b, "`query pods -A --where 'phase == Pending' --count` over %d local clusters of %d pods each (the benchmark's own and %d more,\n", f.clusters, f.pods, f.clusters-1)
	fmt.Fprintf(&b, "each with a workload of its own seed), each alone (`--context cN`) and all at once (`--context c1,…`), beside\n")
	fmt.Fprintf(&b, "their protobuf list transfers made at once by one process (the floor of the query over all). The API servers\n")
	fmt.Fprintf(&b, "run on this machine too: they share its cores with the query. Medians of %d rounds, as above.\n\n", len(all.samples))
	fmt.Fprintf(&b, "| command | wall | peak RSS |\n|---|---|---|\n")
	var slowest time.Duration
	var rssSum int64
	for _, r := range append([]row{floor}, append(singles, all)...) {
		med, lo, hi := r.wall()
		rmed, _, _ := r.rss()
		fmt.Fprintf(&b, "| %s | %s (%s–%s) | %s |\n", r.name, secs(med), secs(lo), secs(hi), mib(rmed))
	}
	for _, r := range singles {
		med, _, _ := r.wall()
		slowest = max(slowest, med)
		rmed, _, _ := r.rss()
		rssSum += rmed
	}
	allWall, _, _ := all.wall()
	floorWall, _, _ := floor.wall()
	allRSS, _, _ := all.rss()
	fmt.Fprintf(&b, "\nAll at once: %.2f× the slowest cluster alone, %.2f× the transfers at once; peak RSS %.2f× the sum of the clusters' alone.\n",
		allWall.Seconds()/slowest.Seconds(), allWall.Seconds()/floorWall.Seconds(), float64(allRSS)/float64(rssSum))
	return b.String()
}

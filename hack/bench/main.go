// Command bench is the whole-process benchmark harness behind `make bench`.
// It starts a local control plane of its own (state in _output/bench-cluster),
// loads the reproducible workload, then runs each measured command several
// times, in rounds, and reports the median, min and max of its wall time and
// peak RSS. Each one-shot query is compared with the floor measured in the
// same rounds: a plain GET of every pod as protobuf (and, beside it, as
// JSON). A query server (serve) answers queries beside the same one-shot
// local ones; the exporter is measured beside a bare client-go informer and,
// given -ksm, beside kube-state-metrics on the same families; Go benchmarks
// run too. Everything in the report comes from this one run, which it names
// (commit, machine, versions); it goes to stdout and to bench/RESULTS.md.
//
//	go run ./hack/bench --pods 10000 --runs 5 --ksm /path/to/kube-state-metrics
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

type options struct {
	pods     int
	runs     int
	binDir   string
	plugin   string
	stateDir string
	results  string
	keep     bool
	// loaded uses the cluster running in stateDir, loaded with the
	// workload already, instead of a fresh one.
	loaded  bool
	goBench bool
	queries bool
	server  bool
	// ksm is a kube-state-metrics binary to measure beside the exporter;
	// empty: not measured.
	ksm string
	// exporter: measure the exporter (and kube-state-metrics).
	exporter bool
	// fleet is the number of clusters of the query over several; below
	// 2: not measured.
	fleet int
	// starts is how many times the exporter, kube-state-metrics and the
	// bare informer are each started, in turn.
	starts int
	// commands, when set, keeps only the one-shot commands whose names
	// it matches, besides the two list transfers.
	commands *regexp.Regexp
}

func main() {
	var o options
	flag.IntVar(&o.pods, "pods", 10000, "pods in the workload")
	flag.IntVar(&o.runs, "runs", 5, "runs of each command (the median is reported)")
	flag.IntVar(&o.starts, "starts", 5, "starts of the exporter, of kube-state-metrics and of the bare informer, in turn (the median is reported)")
	flag.StringVar(&o.binDir, "bin", "_output/bin", "directory with kube-apiserver, etcd, kubectl and localcluster")
	flag.StringVar(&o.plugin, "plugin", "bin/kubectl-informer", "the plugin binary to measure")
	flag.StringVar(&o.stateDir, "dir", "_output/bench-cluster", "state directory of the benchmark's own control plane")
	flag.StringVar(&o.results, "results", "bench/RESULTS.md", "where to write the report")
	flag.BoolVar(&o.keep, "keep", false, "leave the benchmark cluster running afterwards")
	flag.BoolVar(&o.loaded, "loaded", false, "use the cluster running in -dir, which a run with -keep (or the workload command, with the same spec) loaded with -pods pods, instead of starting and loading a fresh one; it is left running")
	flag.BoolVar(&o.goBench, "go-bench", true, "also run the Go benchmarks")
	flag.BoolVar(&o.queries, "queries", true, "measure the one-shot queries (false: only the query server, the exporter and the Go benchmarks)")
	floor := flag.String(floorFlag, "", "run as the bare client-go informer the exporter is compared with, against this kubeconfig (used by the harness itself)")
	flag.BoolVar(&o.server, "server", true, "measure queries answered by a query server (serve) beside the same one-shot local queries")
	flag.BoolVar(&o.exporter, "exporter", true, "measure the exporter (and kube-state-metrics with -ksm)")
	flag.IntVar(&o.fleet, "fleet", 3, "clusters of the query over several clusters measured (the benchmark's own and more of the same size; below 2: not measured)")
	flag.StringVar(&o.ksm, "ksm", "", "a kube-state-metrics binary to measure beside the exporter, on the same families (empty: not measured)")
	transfer := flag.String(transferFlag, "", "run as a plain GET of every pod, the floor of a one-shot query, against this kubeconfig (used by the harness itself)")
	accept := flag.String("accept", protobufType, "with -"+transferFlag+": the media type to ask for")
	commands := flag.String("commands", "", "measure only the one-shot commands whose names (as the report writes them) match this regular expression, besides the protobuf and JSON list transfers, which are always measured")
	flag.Parse()
	if *commands != "" {
		re, err := regexp.Compile(*commands)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: -commands: %v\n", err)
			os.Exit(2)
		}
		o.commands = re
	}
	if *transfer != "" {
		if err := runTransfer(*transfer, *accept); err != nil {
			fmt.Fprintf(os.Stderr, "bench: the list transfer: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *floor != "" {
		if err := runFloor(*floor); err != nil {
			fmt.Fprintf(os.Stderr, "bench: the bare informer: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if _, err := startSpawner(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: starting the spawner: %v\n", err)
		os.Exit(1)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.starts < 1 {
		return fmt.Errorf("-starts is %d: the exporter must be started at least once", o.starts)
	}
	// The code measured: the commit the run starts at, and the plugin
	// binary's own account of what it was built from.
	startCommit := commit()
	pluginOut, err := exec.Command(o.plugin, "version").Output() //nolint:gosec // G204: the plugin binary the user named
	if err != nil {
		return fmt.Errorf("asking %s its version: %w", o.plugin, err)
	}
	var ksmVersion string
	if o.ksm != "" {
		// Before the cluster starts: a wrong path fails at once.
		v, err := kubeStateMetricsVersion(o.ksm)
		if err != nil {
			return err
		}
		ksmVersion = v
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	localcluster := filepath.Join(o.binDir, "localcluster")
	spec := workload.Spec{Pods: o.pods, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50, Concurrency: 64, Controllers: true, Others: true}
	var kubeconfig string
	if o.loaded {
		kubeconfig = filepath.Join(o.stateDir, "kubeconfig")
	} else {
		// A fresh cluster, so that the object count is exactly the workload's.
		_ = exec.Command(localcluster, "down", "-dir", o.stateDir).Run()                                    //nolint:gosec // G204: the localcluster binary in the -bin directory the user named
		out, err := exec.Command(localcluster, "up", "-bin", o.binDir, "-dir", o.stateDir).CombinedOutput() //nolint:gosec // G204: the localcluster binary in the -bin directory the user named
		if err != nil {
			return fmt.Errorf("starting the control plane: %v\n%s", err, out)
		}
		if !o.keep {
			defer func() { _ = exec.Command(localcluster, "down", "-dir", o.stateDir).Run() }() //nolint:gosec // G204: the localcluster binary in the -bin directory the user named
		}
		kubeconfig = strings.TrimSpace(string(out))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	var sum workload.Summary
	if o.loaded {
		if sum, err = loadedWorkload(cfg, spec); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(os.Stderr, "loading %d pods…\n", o.pods)
		if sum, err = workload.Load(context.Background(), cfg, spec, os.Stderr); err != nil {
			return fmt.Errorf("loading the workload: %w", err)
		}
		fmt.Fprintln(os.Stderr, "loaded:", sum)
	}

	apiserverVersion, err := serverVersion(cfg)
	if err != nil {
		return err
	}

	kubectl := filepath.Join(o.binDir, "kubectl")
	kc := "--kubeconfig=" + kubeconfig
	where := `object.status.phase == "Pending"`
	// The first Deployment of the workload and its namespace.
	firstNS, firstApp := spec.NamespaceName(0), workload.AppName(0)
	cmds := []measured{
		{protobufFloor, self, []string{"-" + transferFlag, kubeconfig, "-accept", protobufType}},
		{jsonFloor, self, []string{"-" + transferFlag, kubeconfig, "-accept", jsonType}},
		{"kubectl get pods -A -o json", kubectl, []string{kc, "get", "pods", "-A", "-o", "json"}},
		{"kubectl get pods -A --field-selector status.phase=Pending", kubectl, []string{kc, "get", "pods", "-A", "--field-selector", "status.phase=Pending"}},
		{"query pods -A --count", o.plugin, []string{"query", kc, "pods", "-A", "--count"}},
		{whereCount, o.plugin, []string{"query", kc, "pods", "-A", "--where", where, "--count"}},
		{"query pods -A --where 'phase == Pending'", o.plugin, []string{"query", kc, "pods", "-A", "--where", where}},
		{"query pods -A --index byNode --by byNode=node-001", o.plugin, []string{"query", kc, "pods", "-A", "--index", `byNode=object.spec.?nodeName.orValue("")`, "--by", "byNode=node-001"}},
		{groupCount, o.plugin, []string{"query", kc, "pods", "-A", "--count", "--group-by", `object.spec.?nodeName.orValue("")`}},
		{groupAggregates, o.plugin, []string{"query", kc, "pods", "-A", "--group-by", `object.spec.?nodeName.orValue("")`,
			"--aggregate", "restarts=sum(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())",
			"--aggregate", `cpu=sum(object.spec.containers.map(c, quantity(c.resources.?requests.cpu.orValue("0"))))`}},
		{"query pods -A -o name", o.plugin, []string{"query", kc, "pods", "-A", "-o", "name"}},
		{"query pods -A -o json", o.plugin, []string{"query", kc, "pods", "-A", "-o", "json"}},
		{"query pods -A -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}\\n{end}'", o.plugin, []string{"query", kc, "pods", "-A", "-o", `jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}`}},
		{"query pods -A -o custom-columns=NAME,NODE,IMAGES", o.plugin, []string{"query", kc, "pods", "-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image"}},
		// tree reads every pod, ReplicaSet and the other dependents of
		// the roots' namespaces; the workload's pods are owned by no
		// ReplicaSet, so the trees are small and the cost is the caches'.
		{"tree deployment " + firstApp + " -n " + firstNS, o.plugin, []string{"tree", kc, "deployment", firstApp, "-n", firstNS}},
		{"tree deployments -A", o.plugin, []string{"tree", kc, "deployments", "-A"}},
		// selected() beside the same query without it: the relationship
		// adds the pods' cache and their label index.
		{deploymentsPlain, o.plugin, []string{"query", kc, "deployments", "-A", "--columns", "replicas=object.spec.replicas"}},
		{deploymentsSelected, o.plugin, []string{"query", kc, "deployments", "-A", "--columns", `pods=selected(object, "pods").size()`}},
		{`query services -A --columns 'pods=selected(object, "pods").size()'`, o.plugin, []string{"query", kc, "services", "-A", "--columns", `pods=selected(object, "pods").size()`}},
	}
	if o.commands != nil {
		cmds = slices.DeleteFunc(cmds, func(m measured) bool {
			return m.name != protobufFloor && m.name != jsonFloor && !o.commands.MatchString(m.name)
		})
	}
	var rows []row
	if o.queries {
		if rows, err = measureAll(cmds, o.runs); err != nil {
			return err
		}
	}
	var cache cacheResult
	if o.queries {
		fmt.Fprintln(os.Stderr, "measuring a query's cache once steady…")
		cache, err = benchCache(o.plugin, []string{"query", kc, "pods", "-A", "--where", where, "-o", "name"}, 3, 3*time.Second)
		if err != nil {
			return fmt.Errorf("query --watch: %w", err)
		}
	}
	// Before the exporter's measurement, whose pod updates would change
	// the answers while they are compared.
	var srv serverResult
	if o.server {
		fmt.Fprintln(os.Stderr, "measuring the query server…")
		srv, err = benchServer(o.plugin, kubeconfig, o.runs)
		if err != nil {
			return fmt.Errorf("query server: %w", err)
		}
	}
	var exporterReport string
	if o.exporter {
		fmt.Fprintln(os.Stderr, "measuring the exporter…")
		target, err := profileTarget(nil)
		if err != nil {
			return err
		}
		apiserverPID, err := readPID(filepath.Join(o.stateDir, "kube-apiserver.pid"))
		if err != nil {
			return err
		}
		exp, err := benchExporter(o.plugin, o.ksm, kubeconfig, target, cfg, apiserverPID, o.starts, []int{100, 1000}, 30*time.Second, 15*time.Second)
		if err != nil {
			return fmt.Errorf("exporter: %w", err)
		}
		exporterReport = exp.render(target, ksmVersion)
	}
	var fleet fleetResult
	if o.queries && o.fleet >= 2 {
		fmt.Fprintf(os.Stderr, "measuring a query over %d clusters…\n", o.fleet)
		if fleet, err = benchFleet(o, kubeconfig, o.fleet, o.runs); err != nil {
			return fmt.Errorf("query over several clusters: %w", err)
		}
	}
	var goBench string
	var benchErr error
	if o.goBench {
		fmt.Fprintln(os.Stderr, "running Go benchmarks…")
		goBench, benchErr = runGoBenchmarks()
		if benchErr != nil {
			goBench = "the Go benchmarks failed:\n" + benchErr.Error()
		}
	}
	versions := versions{apiserver: apiserverVersion, ksm: ksmVersion, plugin: strings.TrimSpace(string(pluginOut)),
		startCommit: startCommit, endCommit: commit()}
	report := render(o, versions, sum, rows, cache.render("query pods -A --where 'phase == Pending' -o name"), srv.render(o.pods), goBench, exporterReport+fleet.render())
	fmt.Print(report)
	if o.results != "" {
		if err := os.MkdirAll(filepath.Dir(o.results), 0o755); err != nil { //nolint:gosec // G301: the results are a report to publish, readable by all
			return err
		}
		if err := os.WriteFile(o.results, []byte(report), 0o644); err != nil { //nolint:gosec // G306: the results are a report to publish, readable by all
			return err
		}
	}
	return benchErr
}

type measured struct {
	name string
	path string
	args []string
}

type sample struct {
	wall time.Duration
	rss  int64 // bytes
	cpu  time.Duration
}

type row struct {
	name    string
	samples []sample
	output  int // bytes written to stdout by the last run
}

// Names of the two list transfers, the floors of a one-shot query.
const (
	protobufFloor = "GET /api/v1/pods, protobuf (transfer only)"
	jsonFloor     = "GET /api/v1/pods, JSON (transfer only)"
	whereCount    = "query pods -A --where 'phase == Pending' --count"
	// groupAggregates is measured against groupCount, the same groups
	// counted.
	groupCount      = "query pods -A --count --group-by node"
	groupAggregates = "query pods -A --group-by node --aggregate restarts=sum(…) --aggregate cpu=sum(quantity(…))"
	// deploymentsSelected is measured against deploymentsPlain, the same
	// Deployments without selected().
	deploymentsPlain    = "query deployments -A --columns replicas"
	deploymentsSelected = `query deployments -A --columns 'pods=selected(object, "pods").size()'`
)

// measureAll runs each command once to warm the API server's caches, then
// runs rounds in which each command runs once, in turn, so that a change
// of the machine's speed during the measurement touches every command
// alike. It records the wall time and peak RSS of each run.
func measureAll(cmds []measured, runs int) ([]row, error) {
	rows := make([]row, len(cmds))
	for round := 0; round <= runs; round++ {
		for i, m := range cmds {
			if round == 0 {
				fmt.Fprintf(os.Stderr, "warming up %s…\n", m.name)
				rows[i].name = m.name
			} else if i == 0 {
				fmt.Fprintf(os.Stderr, "round %d of %d…\n", round, runs)
			}
			s, n, err := m.run()
			if err != nil {
				return nil, err
			}
			if round > 0 {
				rows[i].samples = append(rows[i].samples, s)
				rows[i].output = n
			}
		}
	}
	return rows, nil
}

// run runs the command once and returns its wall time, its peak RSS and
// the bytes it wrote to stdout.
// It runs from the spawner (see spawner.go), so that its peak RSS is its own.
func (m measured) run() (sample, int, error) {
	sp, err := startSpawner()
	if err != nil {
		return sample{}, 0, err
	}
	r, err := sp.run(m)
	if err != nil {
		return sample{}, 0, err
	}
	return sample{wall: r.Wall, rss: r.MaxRSS, cpu: r.CPU}, r.Out, nil
}

func stats[T any](s []sample, f func(sample) T, less func(a, b T) int) (med, lo, hi T) {
	vals := make([]T, len(s))
	for i, x := range s {
		vals[i] = f(x)
	}
	slices.SortFunc(vals, less)
	return vals[len(vals)/2], vals[0], vals[len(vals)-1]
}

func (r row) wall() (time.Duration, time.Duration, time.Duration) {
	return stats(r.samples, func(s sample) time.Duration { return s.wall }, func(a, b time.Duration) int { return int(a - b) })
}

func (r row) cpu() (time.Duration, time.Duration, time.Duration) {
	return stats(r.samples, func(s sample) time.Duration { return s.cpu }, func(a, b time.Duration) int { return int(a - b) })
}

func (r row) rss() (int64, int64, int64) {
	return stats(r.samples, func(s sample) int64 { return s.rss }, func(a, b int64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
}

// runGoBenchmarks runs the Go benchmarks that carry targets and returns
// their output lines.
func runGoBenchmarks() (string, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "Predicate|IndexFunc|Phase|GroupBy|Where|IndexLookup|EngineKSMPod|EngineProfilePods|WriteFamiliesKSM|DecodePod|LabelIndexMemory|PlanCount|PlanAggregates", "-benchmem", "-count", "1",
		"./pkg/indexers/...", "./pkg/query/...", "./pkg/exporter/...", "./pkg/factory/...")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go test -bench: %v\n%s", err, out.String())
	}
	var keep []string
	sc := bufio.NewScanner(&out)
	re := regexp.MustCompile(`^(Benchmark\S+|pkg:|goos|goarch|cpu:)`)
	for sc.Scan() {
		if re.MatchString(sc.Text()) {
			keep = append(keep, sc.Text())
		}
	}
	return strings.Join(keep, "\n"), nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// versions are the versions of what was measured, beside the harness's
// own Go.
type versions struct {
	apiserver string
	ksm       string // empty: not measured
	// plugin is what the plugin binary's version command prints.
	plugin string
	// startCommit and endCommit are the commit (see commit) when the run
	// started and when it ended.
	startCommit, endCommit string
}

func render(o options, v versions, sum workload.Summary, rows []row, cache, server, goBench, exporter string) string {
	var b strings.Builder
	ksm := v.ksm
	if ksm == "" {
		ksm = "not measured (run with KSM=/path/to/kube-state-metrics)"
	}
	fmt.Fprintf(&b, "# Benchmark results\n\n")
	fmt.Fprintf(&b, "Every figure below comes from this one run: `go run ./hack/bench %s`, on %s.\n\n",
		strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- commit: %s at the start of the run; the plugin binary: %s\n", v.startCommit, v.plugin)
	if v.endCommit != v.startCommit {
		fmt.Fprintf(&b, "- the work tree changed during the run: %s at its end\n", v.endCommit)
	}
	fmt.Fprintf(&b, "- machine: %d cores (nproc), %s, %s, %s/%s\n", runtime.NumCPU(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- versions: %s (harness and plugin), kube-apiserver %s, kube-state-metrics: %s\n", runtime.Version(), v.apiserver, ksm)
	fmt.Fprintf(&b, "- cluster: the project's local kube-apiserver + etcd (hack/controlplane), loopback\n")
	if o.loaded {
		fmt.Fprintf(&b, "- the cluster was running and loaded with the workload before the run (-loaded): its pods were counted (at least the %d of the workload), not created\n", o.pods)
	}
	fmt.Fprintf(&b, "- workload: %d pods (2 containers each) in 20 namespaces on 100 nodes, %d deployments, %d custom resources\n", o.pods, sum.Deployments, sum.CustomResources)
	if len(rows) == 0 {
		fmt.Fprintf(&b, "- one-shot queries: not measured in this run\n")
	} else {
		fmt.Fprintf(&b, "- each command: one warm-up run, then %d rounds running each command once in turn; median (min–max)\n", o.runs)
		if o.commands != nil {
			fmt.Fprintf(&b, "- commands: only those matching `%s` (-commands), besides the two list transfers\n", o.commands)
		}
	}
	if len(rows) > 0 {
		b.WriteString(renderQueries(rows))
	}
	b.WriteString(cache)
	b.WriteString(server)
	b.WriteString(exporter)
	if goBench != "" {
		fmt.Fprintf(&b, "\n## Go benchmarks\n\n```text\n%s\n```\n", goBench)
	}
	return b.String()
}

// renderQueries is the table of one-shot commands, each compared with the
// protobuf list transfer measured in the same rounds.
func renderQueries(rows []row) string {
	var b strings.Builder
	var floor, json time.Duration
	for _, r := range rows {
		switch r.name {
		case protobufFloor:
			floor, _, _ = r.wall()
		case jsonFloor:
			json, _, _ = r.wall()
		}
	}
	fmt.Fprintf(&b, "\n## One-shot commands\n\n")
	fmt.Fprintf(&b, "The floor of a one-shot query is the API server's list of every pod as protobuf: a plain GET of\n")
	fmt.Fprintf(&b, "`/api/v1/pods` with `Accept: %s` and the kubeconfig's credentials, the body read whole\n", protobufType)
	fmt.Fprintf(&b, "and not decoded, no compression asked for (`-%s` in hack/bench/floor.go, a process of its own like\n", transferFlag)
	fmt.Fprintf(&b, "every command here). The same GET as JSON is shown beside it. Each command's headline is its median\n")
	fmt.Fprintf(&b, "wall time divided by the protobuf transfer's median.\n\n")
	fmt.Fprintf(&b, "Every command is started by a small process of the harness's own (hack/bench/spawner), not by the\n")
	fmt.Fprintf(&b, "harness: Linux counts in a command's peak RSS (its rusage) the memory of the process that started it,\n")
	fmt.Fprintf(&b, "until the exec. That process peaked at %s, which no peak below can be under.\n\n", mib(spawnerFloor()))
	fmt.Fprintf(&b, "The CPU column is the command's user and system time: the wall time includes the API server's\n")
	fmt.Fprintf(&b, "work of the list, on the same machine, which the CPU time of the command leaves out.\n\n")
	fmt.Fprintf(&b, "| command | wall ÷ protobuf transfer | wall | peak RSS | stdout | CPU (user+sys) |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		wm, wl, wh := r.wall()
		rm, rl, rh := r.rss()
		cm, cl, ch := r.cpu()
		fmt.Fprintf(&b, "| `%s` | %.2f× | %s (%s–%s) | %s (%s–%s) | %d KiB | %s (%s–%s) |\n", r.name, wm.Seconds()/floor.Seconds(), secs(wm), secs(wl), secs(wh), mib(rm), mib(rl), mib(rh), r.output/1024, secs(cm), secs(cl), secs(ch))
	}
	var count, plain time.Duration
	var plainRSS int64
	for _, r := range rows {
		if r.name == groupCount {
			count, _, _ = r.wall()
		}
		if r.name == deploymentsPlain {
			plain, _, _ = r.wall()
			plainRSS, _, _ = r.rss()
		}
	}
	for _, r := range rows {
		if r.name == groupAggregates && count > 0 {
			wm, _, _ := r.wall()
			fmt.Fprintf(&b, "\nTwo aggregates per node: %.2f× the same groups counted (`%s`)", wm.Seconds()/count.Seconds(), groupCount)
			if i := slices.IndexFunc(rows, func(c row) bool { return c.name == groupCount }); i >= 0 {
				// The two run one after the other in each round: the
				// ratio of each round is paired, the drift of the
				// machine between rounds cancels out of it.
				wall := func(s sample) time.Duration { return s.wall }
				cpu := func(s sample) time.Duration { return s.cpu }
				med, lo, hi := pairedRatios(r.samples, rows[i].samples, wall)
				fmt.Fprintf(&b, "; the ratio of each round, median %.2f× (%.2f×–%.2f×)", med, lo, hi)
				cm, _, _ := r.cpu()
				cc, _, _ := rows[i].cpu()
				if cc > 0 {
					med, lo, hi = pairedRatios(r.samples, rows[i].samples, cpu)
					fmt.Fprintf(&b, ". CPU time: %.2f× (%s against %s); the ratio of each round, median %.2f× (%.2f×–%.2f×)", cm.Seconds()/cc.Seconds(), secs(cm), secs(cc), med, lo, hi)
				}
			}
			b.WriteString(".\n")
		}
		if r.name == deploymentsSelected && plain > 0 && plainRSS > 0 {
			wm, _, _ := r.wall()
			rm, _, _ := r.rss()
			fmt.Fprintf(&b, "\n`selected()` of every Deployment (the pods' cache and its label index): %.2f× the wall time and %.2f× the peak RSS of the same Deployments without it (`%s`).\n",
				wm.Seconds()/plain.Seconds(), float64(rm)/float64(plainRSS), deploymentsPlain)
		}
		if r.name == whereCount {
			wm, _, _ := r.wall()
			rm, _, _ := r.rss()
			fmt.Fprintf(&b, "\n`%s`: %.2f× the protobuf transfer, %.2f× the JSON transfer, peak RSS %s.\n",
				r.name, wm.Seconds()/floor.Seconds(), wm.Seconds()/json.Seconds(), mib(rm))
		}
	}
	return b.String()
}

// pairedRatios returns the median, least and greatest of the ratios of the
// times (of) of a to those of b, round by round.
func pairedRatios(a, b []sample, of func(sample) time.Duration) (med, lo, hi float64) {
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if of(b[i]) > 0 {
			ratios = append(ratios, of(a[i]).Seconds()/of(b[i]).Seconds())
		}
	}
	if len(ratios) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1]
}

// commit is the commit the harness runs at, marked dirty when the work
// tree differs from it: a results file names the code that produced it.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

// serverVersion is the API server's version, as /version reports it.
func serverVersion(cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("asking the API server its version: %w", err)
	}
	return v.GitVersion, nil
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown memory"
	}
	var kb int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%d", &kb); err != nil {
		return "unknown memory"
	}
	return fmt.Sprintf("%.0f GiB RAM", float64(kb)/(1<<20))
}

// readPID reads a process ID from a pid file of the local control plane.
func readPID(path string) (int, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a pid file of the local control plane, in its state directory
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// loadedWorkload checks that the cluster of cfg holds at least the pods
// of spec, as loaded by an earlier run, and returns what spec loads.
func loadedWorkload(cfg *rest.Config, spec workload.Spec) (workload.Summary, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return workload.Summary{}, err
	}
	list, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{Limit: 1})
	if err != nil {
		return workload.Summary{}, fmt.Errorf("-loaded: listing the cluster's pods: %w", err)
	}
	n := len(list.Items)
	if r := list.RemainingItemCount; r != nil {
		n += int(*r)
	}
	spec = spec.Default()
	// The controllers of the workload have pods of their own besides.
	if n < spec.Pods {
		return workload.Summary{}, fmt.Errorf("-loaded: the cluster holds %d pods, fewer than the %d of -pods", n, spec.Pods)
	}
	fmt.Fprintf(os.Stderr, "-loaded: the cluster holds %d pods\n", n)
	return workload.Summary{Namespaces: spec.Namespaces, Nodes: spec.Nodes, Pods: spec.Pods,
		Deployments: spec.Pods / spec.PodsPerDeployment, CustomResources: spec.CustomResources}, nil
}

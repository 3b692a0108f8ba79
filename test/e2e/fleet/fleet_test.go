// Package fleet_test answers queries over three real control planes at
// once (--context a,b,c and --all-contexts) and checks the merged answers
// against each cluster's own.
package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	clusters []*framework.Cluster
	// names are the contexts of the clusters, in order.
	names = []string{"east", "west", "north"}
	// kubeconfig has a context per cluster.
	kubeconfig string
)

// The clusters differ: their numbers of nodes (so that a get() of a node
// read from another cluster would answer otherwise), of pods, their
// statuses; north has no Database CRD.
var specs = []workload.Spec{
	{Namespaces: 2, Nodes: 2, Pods: 30, Seed: 1},
	{Namespaces: 3, Nodes: 4, Pods: 40, Seed: 2},
	{Namespaces: 2, Nodes: 3, Pods: 20, Seed: 3},
}

func TestMain(m *testing.M) {
	os.Exit(framework.MainFleet(m, &clusters, len(names), func(i int, c *framework.Cluster) error {
		if err := framework.LoadWorkload(specs[i])(c); err != nil {
			return err
		}
		if i == 2 {
			return deleteDatabaseCRD(c)
		}
		return nil
	}))
}

// deleteDatabaseCRD removes the workload's CRD and waits until it is gone.
func deleteDatabaseCRD(c *framework.Cluster) error {
	client, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	name := workload.DatabaseCRD().Name
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func fleetKubeconfig(t *testing.T) string {
	t.Helper()
	if kubeconfig == "" {
		path, err := framework.FleetKubeconfig(clusters[0].Dir, clusters, names)
		if err != nil {
			t.Fatal(err)
		}
		kubeconfig = path
	}
	return kubeconfig
}

// kubeconfigWith returns a copy of the fleet's kubeconfig with a context
// for each of unreachable whose server is a port where nothing listens.
func kubeconfigWith(t *testing.T, unreachable ...string) string {
	t.Helper()
	b, err := os.ReadFile(fleetKubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range unreachable {
		framework.AddUnreachableContext(t, path, name)
	}
	return path
}

// run runs "kubectl informer ARGS" with the fleet's kubeconfig.
func run(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	return framework.RunPlugin(ctx, nil, append(args[:1:1], append([]string{"--kubeconfig", fleetKubeconfig(t)}, args[1:]...)...)...)
}

// pods lists the pods of cluster i.
func pods(t *testing.T, i int) []corev1.Pod {
	t.Helper()
	list, err := clusters[i].Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// rows splits a table without headers into its cells.
func rows(out string) [][]string {
	var r [][]string
	for _, l := range framework.Lines(out) {
		r = append(r, strings.Fields(l))
	}
	return r
}

// firstCells are the first n cells of each row of a table without headers.
func firstCells(out string, n int) [][]string {
	r := rows(out)
	for i := range r {
		r[i] = r[i][:min(n, len(r[i]))]
	}
	return r
}

// TestMergedTable: the merged table is the union of the clusters' pods,
// cluster by cluster in the order of --context, each in namespace and
// name order, with CLUSTER first; the same with --context repeated.
func TestMergedTable(t *testing.T) {
	var want [][]string
	for i, name := range names {
		var ps [][]string
		for _, p := range pods(t, i) {
			ps = append(ps, []string{name, p.Namespace, p.Name})
		}
		slices.SortFunc(ps, func(a, b []string) int { return slices.Compare(a, b) })
		want = append(want, ps...)
	}
	for _, args := range [][]string{
		{"--context", "east,west,north"},
		{"--context", "east", "--context", "west,north"},
	} {
		code, out, errOut := run(t, append([]string{"query", "pods", "-A", "--no-headers"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		got := firstCells(out, 3)
		if len(got) != len(want) {
			t.Fatalf("%v: %d rows, want %d\n%s", args, len(got), len(want), out)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%v: row %d is %v, want %v", args, i, got[i], want[i])
			}
		}
	}
	// The default table: CLUSTER, then NAMESPACE, then the pods' columns.
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	header := strings.Fields(framework.Lines(out)[0])
	if !slices.Equal(header[:3], []string{"CLUSTER", "NAMESPACE", "NAME"}) {
		t.Errorf("header %v, want CLUSTER NAMESPACE NAME first", header)
	}
	if n := len(framework.Lines(out)) - 1; n != len(want) {
		t.Errorf("%d rows, want %d", n, len(want))
	}
}

// TestCounts: --count adds up the clusters; --group-by cluster counts each,
// as each cluster's API server does; the variable cluster is usable in
// --where.
func TestCounts(t *testing.T) {
	total := 0
	perCluster := map[string]int{}
	for i, name := range names {
		perCluster[name] = len(pods(t, i))
		total += perCluster[name]
	}
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north", "--count")
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(total) {
		t.Errorf("--count: exit %d, %q, want %d\n%s", code, out, total, errOut)
	}
	code, out, errOut = run(t, "query", "pods", "-A", "--context", "east,west,north", "--group-by", "cluster")
	if code != 0 {
		t.Fatalf("--group-by cluster: exit %d\n%s", code, errOut)
	}
	got := map[string]int{}
	for _, r := range rows(out) {
		n, _ := strconv.Atoi(r[1])
		got[r[0]] = n
	}
	if fmt.Sprint(got) != fmt.Sprint(perCluster) {
		t.Errorf("--group-by cluster: %v, want %v", got, perCluster)
	}
	code, out, errOut = run(t, "query", "pods", "-A", "--context", "east,west,north", "--where", `cluster == "west"`, "--count")
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(perCluster["west"]) {
		t.Errorf(`--where 'cluster == "west"': exit %d, %q, want %d\n%s`, code, out, perCluster["west"], errOut)
	}
	// One cluster: cluster is the context's name.
	code, out, errOut = run(t, "query", "pods", "-A", "--context", "north", "--group-by", "cluster")
	if code != 0 || strings.Join(strings.Fields(out), " ") != fmt.Sprintf("north %d", perCluster["north"]) {
		t.Errorf("one context, --group-by cluster: exit %d, %q\n%s", code, out, errOut)
	}
}

// TestJSON: -o json is one kubectl List whose items name their cluster in
// an annotation.
func TestJSON(t *testing.T) {
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json is not a list: %v", err)
	}
	if list.Kind != "List" || list.APIVersion != "v1" {
		t.Errorf("kind %q apiVersion %q, want List v1", list.Kind, list.APIVersion)
	}
	got := map[string]int{}
	for _, p := range list.Items {
		got[p.Annotations[query.ClusterAnnotation]]++
	}
	for i, name := range names {
		if want := len(pods(t, i)); got[name] != want {
			t.Errorf("%d items of %s, want %d", got[name], name, want)
		}
	}
}

// TestSortAndLimit: --sort-by and --limit apply to the merged answer.
func TestSortAndLimit(t *testing.T) {
	type pod struct {
		cluster, ns, name string
		restarts          int
	}
	var all []pod
	for i, name := range names {
		for _, p := range pods(t, i) {
			n := 0
			for _, s := range p.Status.ContainerStatuses {
				n += int(s.RestartCount)
			}
			all = append(all, pod{name, p.Namespace, p.Name, n})
		}
	}
	// Most restarts first; ties in namespace and name order, then in the
	// clusters' order.
	order := map[string]int{"east": 0, "west": 1, "north": 2}
	slices.SortStableFunc(all, func(a, b pod) int {
		if a.restarts != b.restarts {
			return b.restarts - a.restarts
		}
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return order[a.cluster] - order[b.cluster]
	})
	const limit = 7
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north", "--no-headers",
		"--sort-by", "-object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()", "--limit", strconv.Itoa(limit))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	got := firstCells(out, 3)
	if len(got) != limit {
		t.Fatalf("%d rows, want %d\n%s", len(got), limit, out)
	}
	for i, r := range got {
		if w := all[i]; !slices.Equal(r, []string{w.cluster, w.ns, w.name}) {
			t.Errorf("row %d: %v, want %v (%d restarts)", i, r, w, w.restarts)
		}
	}
}

// TestGetReadsTheObjectsCluster: get() reads the object's own cluster: every
// scheduled pod's node is found there, though the clusters have different
// nodes.
func TestGetReadsTheObjectsCluster(t *testing.T) {
	scheduled := 0
	for i := range names {
		for _, p := range pods(t, i) {
			if p.Spec.NodeName != "" {
				scheduled++
			}
		}
	}
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north", "--count",
		"--where", `has(object.spec.nodeName) && get("nodes", object.spec.nodeName) != null`)
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(scheduled) {
		t.Errorf("pods whose node get() finds: exit %d, %q, want %d\n%s", code, out, scheduled, errOut)
	}
}

// TestClusterWithoutTheCRD: a resource type one cluster lacks is reported
// and counted from the others.
func TestClusterWithoutTheCRD(t *testing.T) {
	code, out, errOut := run(t, "query", "databases", "-A", "--context", "east,west,north", "--count")
	want := specs[0].Default().CustomResources + specs[1].Default().CustomResources
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(want) {
		t.Errorf("exit %d, %q, want 0 and %d\n%s", code, out, want, errOut)
	}
	if !strings.Contains(errOut, `warning: cluster "north" has no resource type "databases"`) {
		t.Errorf("no warning naming north:\n%s", errOut)
	}
	// In no cluster: the usage error of one cluster.
	code, _, errOut = run(t, "query", "databases", "-A", "--context", "north")
	if code != 2 {
		t.Errorf("in north alone: exit %d, want 2\n%s", code, errOut)
	}
	code, out, errOut = run(t, "query", "nosuchthings", "-A", "--context", "east,north")
	if code != 2 || out != "" || !strings.Contains(errOut, `resource type "nosuchthings" in any of the clusters`) {
		t.Errorf("a type no cluster has: exit %d, want 2\n%s%s", code, out, errOut)
	}
}

// TestAllContexts: --all-contexts reads every context, by name;
// --context-selector keeps those it matches.
func TestAllContexts(t *testing.T) {
	code, out, errOut := run(t, "query", "pods", "-A", "--all-contexts", "--context-selector", "^(east|north)$", "--group-by", "cluster")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	want := fmt.Sprintf("east %d north %d", len(pods(t, 0)), len(pods(t, 2)))
	if len(pods(t, 2)) > len(pods(t, 0)) {
		want = fmt.Sprintf("north %d east %d", len(pods(t, 2)), len(pods(t, 0)))
	}
	if got := strings.Join(strings.Fields(out), " "); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--context-selector", "east"}, "add --all-contexts"},
		{[]string{"--all-contexts", "--context", "east"}, "give one of them"},
		{[]string{"--context", "east,south"}, `context "south" is not in the kubeconfig`},
		{[]string{"--all-contexts", "--context-selector", "^nowhere$"}, "no context of the kubeconfig matches"},
	} {
		code, _, errOut := run(t, append([]string{"query", "pods", "-A"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, errOut)
		}
	}
	// The verb that reads one cluster says so.
	code, _, errOut = run(t, "export", "--profile", "kube-state-metrics", "--context", "east,west")
	if code != 2 || !strings.Contains(errOut, "only query, watch, indexes and serve read several clusters") {
		t.Errorf("export --context east,west: exit %d, want 2 and the verbs that do\n%s", code, errOut)
	}
}

// TestEachContextsNamespace: without -A or -n, each cluster is read in its
// context's namespace, and cluster-scoped resources whole.
func TestEachContextsNamespace(t *testing.T) {
	code, out, errOut := run(t, "query", "nodes", "--context", "east,west", "--count")
	if want := "6"; code != 0 || strings.TrimSpace(out) != want {
		t.Errorf("nodes --context east,west --count: exit %d, %q; want 0 and %s (2 + 4)\n%s", code, out, want, errOut)
	}
	inDefault := 0
	for i := range 2 {
		for _, p := range pods(t, i) {
			if p.Namespace == metav1.NamespaceDefault {
				inDefault++
			}
		}
	}
	code, out, errOut = run(t, "query", "pods", "--context", "east,west", "--count")
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(inDefault) {
		t.Errorf("pods --context east,west --count (the contexts' namespace, default): exit %d, %q; want 0 and %d\n%s", code, out, inDefault, errOut)
	}
}

// TestPartialAnswer: a cluster whose API server is down while the query
// runs, and one that never answers, leave the others' answer, warnings
// naming them, and exit code 3; when none answers, exit code 1.
func TestPartialAnswer(t *testing.T) {
	path := kubeconfigWith(t, "gone", "gone2")
	var code int
	var out, errOut string
	err := clusters[1].RestartAPIServer(func() error {
		// West's resources may be resolved from the discovery cache: its
		// lists then fail until --sync-timeout, which bounds the wait for
		// it; east's 30 pods sync long before on the busiest machine.
		code, out, errOut = run(t, "query", "pods", "-A", "--kubeconfig", path, "--context", "east,west,gone", "--count", "--sync-timeout", "30s")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit %d, want 3\n%s", code, errOut)
	}
	if want := strconv.Itoa(len(pods(t, 0))); strings.TrimSpace(out) != want {
		t.Errorf("count %q, want east's %s", out, want)
	}
	for _, want := range []string{`warning: cluster "west"`, `warning: cluster "gone"`, "2 of 3 clusters did not answer"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = run(t, "query", "pods", "-A", "--kubeconfig", path, "--context", "gone,gone2", "--count")
	if code != 1 || !strings.Contains(errOut, "no cluster answered") {
		t.Errorf("no cluster answering: exit %d, want 1 and \"no cluster answered\"\n%s", code, errOut)
	}
}

// TestContextCompletion: --context completes the kubeconfig's contexts,
// also after a comma, leaving out those listed; serve's --home-context
// completes one.
func TestContextCompletion(t *testing.T) {
	for _, tc := range []struct {
		verb, flag, typed string
		want              []string
	}{
		{"query", "--context", "", []string{"east", "north", "west"}},
		{"query", "--context", "we", []string{"west"}},
		{"query", "--context", "east,", []string{"east,north", "east,west"}},
		{"query", "--context", "east,west,n", []string{"east,west,north"}},
		{"serve", "--context", "east,", []string{"east,north", "east,west"}},
		// The home cluster is one context.
		{"serve", "--home-context", "", []string{"east", "north", "west"}},
		{"serve", "--home-context", "no", []string{"north"}},
	} {
		code, out, errOut := run(t, "__complete", tc.verb, "pods", tc.flag, tc.typed)
		if code != 0 {
			t.Fatalf("%s %s %q: exit %d\n%s", tc.verb, tc.flag, tc.typed, code, errOut)
		}
		var got []string
		for _, l := range framework.Lines(out) {
			if !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s %q completes %v, want %v", tc.verb, tc.flag, tc.typed, got, tc.want)
		}
	}
}

// TestWatch: a watch over several clusters prints each cluster's events,
// each naming its cluster, in lines and in NDJSON; a cluster that cannot be
// watched is named in a warning and gives exit code 3 when the watch ends.
func TestWatch(t *testing.T) {
	path := kubeconfigWith(t, "lost")
	initial := 0
	for i := range names {
		initial += len(pods(t, i))
	}
	r := clusters[0].StartPlugin(t, "watch", "pods", "-A", "--kubeconfig", path, "--context", "east,west,north,lost", "-o", "json")
	lines := r.WaitLinesFor(t, initial, framework.HangTimeout)
	got := map[string]int{}
	for _, l := range lines {
		var ev struct{ Cluster, Type string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if ev.Type == "ADDED" {
			got[ev.Cluster]++
		}
	}
	for i, name := range names {
		if want := len(pods(t, i)); got[name] != want {
			t.Errorf("%d ADDED events of %s, want %d", got[name], name, want)
		}
	}
	// An event in one cluster names it.
	watched := fmt.Sprintf("watched-%d", time.Now().UnixNano())
	clusters[1].CreatePod(t, "default", watched, nil)
	t.Cleanup(func() {
		_ = clusters[1].Client.CoreV1().Pods("default").Delete(context.Background(), watched, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
	r.WaitLineContaining(t, `"cluster":"west","type":"ADDED","kind":"pod","namespace":"default","name":"`+watched+`"`)
	framework.Eventually(t, "the warning naming lost", func() bool { return strings.Contains(r.ErrOut.String(), `warning: cluster "lost"`) })
	if code := r.Stop(t); code != 3 {
		t.Errorf("exit %d, want 3\n%s", code, r.ErrOut)
	}

	// One line per event, the cluster after the time.
	r = clusters[0].StartPlugin(t, "watch", "pods", "-A", "--kubeconfig", path, "--context", "east,west", "--where", `object.metadata.name == "`+watched+`"`)
	l := r.WaitLineContaining(t, "pod default/"+watched)
	if f := strings.Fields(l[len(l)-1]); len(f) < 4 || f[1] != "west" || f[2] != "ADDED" {
		t.Errorf("line %q: want the time, west, ADDED", l[len(l)-1])
	}
	if code := r.Stop(t); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, r.ErrOut)
	}
}

// TestIndexes: indexes over several clusters counts each cluster's index
// values, a row per cluster and index.
func TestIndexes(t *testing.T) {
	code, out, errOut := run(t, "indexes", "pods", "-A", "--context", "east,west,north", "--index", "byNode=object.spec.?nodeName", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rows []struct {
		Cluster, Index string
		Values         int
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]int{}
	for _, r := range rows {
		if r.Index == "byNode" {
			got[r.Cluster] = r.Values
		}
	}
	for i, name := range names {
		nodes := map[string]bool{}
		for _, p := range pods(t, i) {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
		if got[name] != len(nodes) {
			t.Errorf("%s: byNode has %d values, want %d (the nodes its pods are on)", name, got[name], len(nodes))
		}
	}
	code, out, errOut = run(t, "indexes", "pods", "-A", "--context", "east,west")
	if code != 0 || !strings.HasPrefix(out, "CLUSTER") {
		t.Errorf("table: exit %d, want a CLUSTER column\n%s%s", code, out, errOut)
	}
}

// TestInteractive: query -i over several clusters answers each line over
// them all, merged; :resources lists each cluster's caches.
func TestInteractive(t *testing.T) {
	failed, total := map[string]int{}, 0
	for i, name := range names {
		for _, p := range pods(t, i) {
			if p.Status.Phase == corev1.PodFailed {
				failed[name]++
				total++
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	in := strings.NewReader(":count\n" + `object.status.phase == "Failed"` + "\n:group cluster\n:resources\n")
	code, out, errOut := framework.RunPlugin(ctx, in, "query", "pods", "-A", "--kubeconfig", fleetKubeconfig(t), "--context", "east,west,north", "-i")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	lines := framework.Lines(out)
	all := 0
	for i := range names {
		all += len(pods(t, i))
	}
	// :count, the filter, :group cluster (the counts per cluster), then
	// :resources (a header and a row per cluster).
	want := []string{strconv.Itoa(all), strconv.Itoa(total)}
	for _, name := range []string{"west", "east", "north"} {
		if failed[name] > 0 {
			want = append(want, fmt.Sprintf("%s %d", name, failed[name]))
		}
	}
	var got []string
	for _, l := range lines[:min(len(lines), len(want))] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	slices.Sort(got[2:])
	slices.Sort(want[2:])
	if !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q\n%s\nstderr:\n%s", got, want, out, errOut)
	}
	for _, name := range names {
		if !strings.Contains(out, name+" ") || !strings.Contains(out, "CLUSTER") {
			t.Errorf(":resources does not list %s:\n%s", name, out)
		}
	}
}

// TestInteractiveOneCluster: the variable cluster is the context's name in
// the lines of a session over one cluster too.
func TestInteractiveOneCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	code, out, errOut := framework.RunPlugin(ctx, strings.NewReader(":group cluster\n"), "query", "pods", "-A", "--kubeconfig", fleetKubeconfig(t), "--context", "north", "-i")
	if want := fmt.Sprintf("north %d", len(pods(t, 2))); code != 0 || strings.Join(strings.Fields(out), " ") != want {
		t.Errorf("exit %d, %q, want %q\n%s", code, out, want, errOut)
	}
}

// TestQueryWatch: query --watch over several clusters prints the merged
// answer again when an event of any cluster changes it.
func TestQueryWatch(t *testing.T) {
	count := func() int { return len(pods(t, 0)) + len(pods(t, 2)) }
	before := count()
	r := clusters[0].StartPlugin(t, "query", "pods", "-A", "--kubeconfig", kubeconfigWith(t, "lost"), "--context", "east,north,lost", "--count", "--watch")
	r.WaitLineContaining(t, strconv.Itoa(before))
	name := fmt.Sprintf("counted-%d", time.Now().UnixNano())
	clusters[2].CreatePod(t, "default", name, nil)
	t.Cleanup(func() {
		_ = clusters[2].Client.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
	r.WaitLineContaining(t, strconv.Itoa(before+1))
	if code := r.Stop(t); code != 3 || !strings.Contains(r.ErrOut.String(), `warning: cluster "lost"`) {
		t.Errorf("exit %d, want 3 and a warning naming lost\n%s", code, r.ErrOut)
	}
}

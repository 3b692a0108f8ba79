package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// restartsExpr is the restarts of a pod, summed over its containers.
const restartsExpr = `object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()`

// podRestarts is what restartsExpr computes, from the pod as the API
// server lists it.
func podRestarts(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Status.ContainerStatuses {
		n += int64(c.RestartCount)
	}
	return n
}

// createAggregatePods creates pods in ns with varied tiers, requests,
// images, weights and (by UpdateStatus, as no kubelet runs) phases and
// restart counts, and returns them as the API server lists them.
func createAggregatePods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	ctx := context.Background()
	client := cluster.Client.CoreV1().Pods(ns)
	for i := range 7 {
		labels := map[string]string{"tier": []string{"front", "back"}[i%2]}
		if i != 6 {
			labels["weight"] = strconv.Itoa(10 * (i + 1))
		}
		containers := []corev1.Container{{
			Name: "app", Image: fmt.Sprintf("registry.example.com/app:%d", i%3),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", 100*(i+1))),
				corev1.ResourceMemory: resource.MustParse([]string{"64Mi", "1Gi", "128Mi"}[i%3]),
			}},
		}}
		if i%3 == 0 {
			containers = append(containers, corev1.Container{Name: "side", Image: "registry.example.com/side:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}})
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}
		p, err := client.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 6 {
			continue // no status: no restarts to read
		}
		p.Status.Phase = []corev1.PodPhase{corev1.PodRunning, corev1.PodPending}[i/4]
		for j, c := range containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, RestartCount: int32(i*i + 3*j + 1), //nolint:gosec // small numbers
			})
		}
		if _, err := client.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// quantile is the q-quantile of values, interpolated between the closest
// ranks (R's type 7).
func quantile(q float64, values []float64) float64 {
	s := slices.Sorted(slices.Values(values))
	h := float64(len(s)-1) * q
	lo, hi := int(math.Floor(h)), int(math.Ceil(h))
	return s[lo] + (h-math.Floor(h))*(s[hi]-s[lo])
}

// decodeRows decodes -o json rows.
func decodeRows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	return rows
}

// TestAggregateExample: restarts and pods per namespace over every
// namespace, as the API server's pods add up.
func TestAggregateExample(t *testing.T) {
	ns := cluster.NewNamespace(t, "aggregate-example")
	createAggregatePods(t, ns)
	args := []string{"pods", "-A", "--group-by", "object.metadata.namespace", "--aggregate", "restarts=sum(" + restartsExpr + ")", "--aggregate", "n=count()"}
	framework.Eventually(t, "the table matches the API server's pods", func() bool {
		all := pods(t, metav1.ListOptions{})
		restarts, count := map[string]int64{}, map[string]int64{}
		for i := range all {
			restarts[all[i].Namespace] += podRestarts(&all[i])
			count[all[i].Namespace]++
		}
		var want []string
		for _, n := range slices.Sorted(maps.Keys(count)) {
			want = append(want, fmt.Sprintf("%s %d %d", n, restarts[n], count[n]))
		}
		out := query(t, args...).ok(t)
		lines := framework.Lines(out)
		if len(lines) == 0 || strings.Join(strings.Fields(lines[0]), " ") != "NAMESPACE RESTARTS N" {
			t.Fatalf("header %q, want NAMESPACE RESTARTS N", out)
		}
		var got []string
		for _, l := range lines[1:] {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		if !slices.Equal(got, want) {
			t.Logf("printed %q, want %q", got, want)
			return false
		}
		if !slices.Contains(got, fmt.Sprintf("%s %d %d", ns, restarts[ns], count[ns])) || restarts[ns] == 0 {
			t.Fatalf("the namespace %s has no restarts counted: %q", ns, got)
		}
		return true
	})
}

// TestAggregateFunctions: every function over two keys, with -o json and
// yaml, each value computed from the API server's pods.
func TestAggregateFunctions(t *testing.T) {
	ns := cluster.NewNamespace(t, "aggregate-functions")
	created := createAggregatePods(t, ns)
	args := []string{"pods", "-n", ns,
		"--group-by", "object.metadata.labels.tier", "--group-by", `phase=object.status.?phase.orValue("")`,
		"--aggregate", "n=count()",
		"--aggregate", "restarts=sum(" + restartsExpr + ")",
		"--aggregate", "mean=avg(" + restartsExpr + ")",
		"--aggregate", "least=min(" + restartsExpr + ")",
		"--aggregate", "most=max(" + restartsExpr + ")",
		"--aggregate", "median=quantile(0.5, " + restartsExpr + ")",
		"--aggregate", "images=distinct(object.spec.containers.map(c, c.image))",
		"--aggregate", `cpu=sum(object.spec.containers.map(c, quantity(c.resources.requests.cpu)))`,
		"--aggregate", "weight=sum(int(object.metadata.labels.weight))",
	}
	type group struct {
		tier, phase string
		restarts    []float64
		images      map[string]bool
		cpu         resource.Quantity
		weight      int64
	}
	groups := map[[2]string]*group{}
	skipped := 0
	for i := range created {
		p := &created[i]
		k := [2]string{p.Labels["tier"], string(p.Status.Phase)}
		g := groups[k]
		if g == nil {
			g = &group{tier: k[0], phase: k[1], images: map[string]bool{}}
			groups[k] = g
		}
		g.restarts = append(g.restarts, float64(podRestarts(p)))
		for _, c := range p.Spec.Containers {
			g.images[c.Image] = true
			g.cpu.Add(c.Resources.Requests[corev1.ResourceCPU])
		}
		if w, ok := p.Labels["weight"]; ok {
			n, _ := strconv.ParseInt(w, 10, 64)
			g.weight += n
		} else {
			skipped++
		}
	}
	keys := slices.SortedFunc(func(yield func([2]string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	var want []map[string]any
	for _, k := range keys {
		g := groups[k]
		sum := 0.0
		for _, r := range g.restarts {
			sum += r
		}
		want = append(want, map[string]any{
			"tier": g.tier, "phase": g.phase, "n": float64(len(g.restarts)), "restarts": sum,
			"mean": sum / float64(len(g.restarts)), "least": slices.Min(g.restarts), "most": slices.Max(g.restarts),
			"median": quantile(0.5, g.restarts), "images": float64(len(g.images)), "cpu": g.cpu.String(), "weight": float64(g.weight),
		})
	}
	r := query(t, append(args, "-o", "json")...)
	got := decodeRows(t, r.ok(t))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("-o json:\n%v\nwant\n%v", got, want)
	}
	// The pod without a weight is left out of that sum, and said once.
	wantWarning := fmt.Sprintf("warning: --aggregate weight: %d of %d objects failed: %s/p6:", skipped, len(created), ns)
	if !strings.HasPrefix(r.errOut, wantWarning) || strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", r.errOut, wantWarning)
	}
	// -o yaml: the same rows.
	var fromYAML []map[string]any
	out := query(t, append(args, "-o", "yaml")...).ok(t)
	if err := yaml.Unmarshal([]byte(out), &fromYAML); err != nil {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
	if fmt.Sprint(fromYAML) != fmt.Sprint(want) {
		t.Errorf("-o yaml:\n%v\nwant\n%v", fromYAML, want)
	}
	// The table: a column per key, then per aggregate, in order.
	lines := framework.Lines(query(t, args...).ok(t))
	if got, want := strings.Fields(lines[0]), []string{"TIER", "PHASE", "N", "RESTARTS", "MEAN", "LEAST", "MOST", "MEDIAN", "IMAGES", "CPU", "WEIGHT"}; !slices.Equal(got, want) {
		t.Errorf("header %q, want %q", got, want)
	}
	if len(lines) != len(want)+1 {
		t.Errorf("%d rows, want %d:\n%s", len(lines)-1, len(want), strings.Join(lines, "\n"))
	}
	for i, l := range lines[1:min(len(lines), len(want)+1)] {
		cells := strings.Fields(l)
		if cells[0] != want[i]["tier"] || cells[len(cells)-2] != want[i]["cpu"] {
			t.Errorf("row %d %q, want tier %v and cpu %v", i, l, want[i]["tier"], want[i]["cpu"])
		}
	}

	// Without --group-by: one row over the whole answer.
	all := 0.0
	for i := range created {
		all += float64(podRestarts(&created[i]))
	}
	got = decodeRows(t, query(t, "pods", "-n", ns, "--aggregate", "n=count()", "--aggregate", "restarts=sum("+restartsExpr+")", "-o", "json").ok(t))
	if want := []map[string]any{{"n": float64(len(created)), "restarts": all}}; !reflect.DeepEqual(got, want) {
		t.Errorf("no --group-by: %v, want %v", got, want)
	}

	// --sort-by and --limit order and cut the groups: the two pods of the
	// most restarts.
	byRestarts := slices.Clone(created)
	slices.SortStableFunc(byRestarts, func(a, b corev1.Pod) int { return int(podRestarts(&b) - podRestarts(&a)) })
	got = decodeRows(t, query(t, "pods", "-n", ns, "--group-by", "object.metadata.name", "--aggregate", "restarts=sum("+restartsExpr+")",
		"--sort-by", "-restarts", "--limit", "2", "-o", "json").ok(t))
	want = nil
	for _, p := range byRestarts[:2] {
		want = append(want, map[string]any{"name": p.Name, "restarts": float64(podRestarts(&p))})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("--sort-by -restarts --limit 2: %v, want %v", got, want)
	}
	got = decodeRows(t, query(t, "pods", "-n", ns, "--group-by", "object.metadata.name", "--aggregate", "restarts=sum("+restartsExpr+")",
		"--sort-by", "name", "--reverse", "--limit", "1", "-o", "json").ok(t))
	if want := []map[string]any{{"name": "p6", "restarts": float64(podRestarts(&created[6]))}}; !reflect.DeepEqual(got, want) {
		t.Errorf("--sort-by name --reverse --limit 1: %v, want %v", got, want)
	}
}

// TestAggregateErrors: expressions are compiled before any contact with
// the cluster, and shown with a caret where they are wrong.
func TestAggregateErrors(t *testing.T) {
	closed := "https://" + framework.ClosedPort(t)
	for _, c := range []struct {
		aggregate, want string
	}{
		{"x=sum(object.spec.containers.size() +)", "error: invalid --aggregate x expression: syntax error"},
		{"x=median(object.spec.priority)", `error: --aggregate x: unknown function "median": use one of avg, count, distinct, max, min, quantile, sum`},
		{"x=quantile(2, object.spec.priority)", `error: --aggregate x: quantile(Q, EXPR): Q must be a number between 0 and 1, got "2"`},
		{"x=count(object.spec.priority)", "error: --aggregate x: count() takes no argument"},
	} {
		r := query(t, "pods", "-A", "--server", closed, "--aggregate", c.aggregate)
		if r.code != 2 || !strings.HasPrefix(r.errOut, c.want) {
			t.Errorf("--aggregate %q: exit %d, stderr %q; want 2 and %q", c.aggregate, r.code, r.errOut, c.want)
		}
	}
	const expr = "object.spec.containers.size() +"
	r := query(t, "pods", "-A", "--server", closed, "--aggregate", "x=sum("+expr+")")
	// The caret is under the end of the expression, where it is cut short.
	if want := " | " + expr + "\n | " + strings.Repeat(" ", len(expr)) + "^\n"; !strings.Contains(r.errOut, want) {
		t.Errorf("stderr %q, want the expression and a caret %q", r.errOut, want)
	}
}

// TestAggregateWatch: with -w, the numbers are printed again when a pod's
// restarts change.
func TestAggregateWatch(t *testing.T) {
	ns := cluster.NewNamespace(t, "aggregate-watch")
	created := createAggregatePods(t, ns)
	total := func() int64 {
		var n int64
		for _, p := range pods(t, metav1.ListOptions{}) {
			if p.Namespace == ns {
				n += podRestarts(&p)
			}
		}
		return n
	}
	before := total()
	run := cluster.StartPlugin(t, "query", "pods", "-n", ns, "--aggregate", "restarts=sum("+restartsExpr+")", "-w")
	first := fmt.Sprintf("RESTARTS\n%d\n", before)
	framework.Eventually(t, "the first answer", func() bool { return run.Out.String() == first })
	p := created[1]
	p.Status.ContainerStatuses[0].RestartCount += 5
	if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := total()
	if after == before {
		t.Fatalf("the update did not change the restarts: %d", after)
	}
	want := first + fmt.Sprintf("\nRESTARTS\n%d\n", after)
	framework.Eventually(t, "the new number", func() bool { return run.Out.String() == want })
	if code := run.Stop(t); code != 0 {
		t.Errorf("exit %d; stderr %q", code, run.ErrOut.String())
	}
}

// TestAggregateInteractive: :group and :aggregate in a session.
func TestAggregateInteractive(t *testing.T) {
	ns := cluster.NewNamespace(t, "aggregate-interactive")
	created := createAggregatePods(t, ns)
	restarts, count := map[string]int64{}, map[string]int64{}
	for i := range created {
		restarts[created[i].Labels["tier"]] += podRestarts(&created[i])
		count[created[i].Labels["tier"]]++
	}
	r := queryInput(t, strings.Join([]string{
		":group object.metadata.labels.tier",
		":aggregate r=sum(" + restartsExpr + ")",
		":aggregate n=count()",
	}, "\n"), "pods", "-n", ns, "-i")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	lines := framework.Lines(r.out)
	at := slices.IndexFunc(lines, func(l string) bool { return strings.Join(strings.Fields(l), " ") == "TIER R N" })
	if at < 0 {
		t.Fatalf("no TIER R N table:\n%s", r.out)
	}
	var got []string
	for _, l := range lines[at+1:] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{fmt.Sprintf("back %d %d", restarts["back"], count["back"]), fmt.Sprintf("front %d %d", restarts["front"], count["front"])}
	if !slices.Equal(got, want) {
		t.Errorf(":aggregate printed %q, want %q", got, want)
	}
}

// TestGroupKeysInteractive: :group adds a key each time it is given, as
// --group-by repeated does, and :group alone clears them; the rows are
// checked against the pods the API server lists.
func TestGroupKeysInteractive(t *testing.T) {
	ns := cluster.NewNamespace(t, "group-keys-interactive")
	created := createAggregatePods(t, ns)
	phase := func(p *corev1.Pod) string {
		if p.Status.Phase == "" {
			return "<none>" // printed for an empty key, as for a missing one
		}
		return string(p.Status.Phase)
	}
	byBoth, byTier := map[string]int{}, map[string]int{}
	for i := range created {
		byBoth[created[i].Labels["tier"]+" "+phase(&created[i])]++
		byTier[created[i].Labels["tier"]]++
	}
	rows := func(counts map[string]int) []string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			out = append(out, fmt.Sprintf("%s %d", k, counts[k]))
		}
		return out
	}
	r := queryInput(t, strings.Join([]string{
		":group object.metadata.labels.tier",
		`:group phase=object.status.?phase.orValue("")`,
		":aggregate n=count()",
		":group",
		":group object.metadata.labels.tier",
	}, "\n"), "pods", "-n", ns, "-i")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	// The tables, each by its header, in the order they were printed.
	lines := framework.Lines(r.out)
	next := 0
	table := func(header string) []string {
		t.Helper()
		at := slices.IndexFunc(lines[next:], func(l string) bool { return strings.Join(strings.Fields(l), " ") == header })
		if at < 0 {
			t.Fatalf("no %s table after line %d:\n%s", header, next, r.out)
		}
		var got []string
		for _, l := range lines[next+at+1:] {
			f := strings.Fields(l)
			if len(f) != len(strings.Fields(header)) || strings.ToUpper(l) == l && !strings.ContainsAny(l, "0123456789") {
				break
			}
			got = append(got, strings.Join(f, " "))
		}
		next += at + 1 + len(got)
		return got
	}
	if got, want := table("TIER PHASE COUNT"), rows(byBoth); !slices.Equal(got, want) {
		t.Errorf("two :group keys printed %q, want %q", got, want)
	}
	if got, want := table("TIER PHASE N"), rows(byBoth); !slices.Equal(got, want) {
		t.Errorf("two :group keys with :aggregate printed %q, want %q", got, want)
	}
	if got, want := table("N"), []string{strconv.Itoa(len(created))}; !slices.Equal(got, want) {
		t.Errorf(":group alone printed %q, want the aggregate over all, %q", got, want)
	}
	if got, want := table("TIER N"), rows(byTier); !slices.Equal(got, want) {
		t.Errorf(":group after clearing printed %q, want one key, %q", got, want)
	}
	if r.errOut != "" {
		t.Errorf("stderr: %s", r.errOut)
	}
}

package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// pods lists every workload pod through the API: the oracle.
func pods(t *testing.T, opts metav1.ListOptions) []corev1.Pod {
	t.Helper()
	l, err := cluster.Client.CoreV1().Pods("").List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func names(ps []corev1.Pod, withNS bool) []string {
	var out []string
	for _, p := range ps {
		if withNS {
			out = append(out, p.Namespace+"/"+p.Name)
		} else {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestCount(t *testing.T) {
	all := pods(t, metav1.ListOptions{})
	if got := strings.TrimSpace(query(t, "pods", "-A", "--count").ok(t)); got != strconv.Itoa(len(all)) {
		t.Errorf("--count = %s, want %d", got, len(all))
	}
	pending := 0
	for _, p := range all {
		if p.Status.Phase == corev1.PodPending {
			pending++
		}
	}
	got := query(t, "pods", "-A", "--where", `object.status.phase == "Pending"`, "--count").ok(t)
	if strings.TrimSpace(got) != strconv.Itoa(pending) || pending == 0 {
		t.Errorf("pending --count = %q, want %d", got, pending)
	}
	// -n scopes to one namespace, the kubeconfig's namespace is the default.
	ns := workload.NamespaceName(1)
	inNS := pods(t, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
	if got := strings.TrimSpace(query(t, "pods", "-n", ns, "--count").ok(t)); got != strconv.Itoa(len(inNS)) {
		t.Errorf("-n %s --count = %s, want %d", ns, got, len(inNS))
	}
	if got := strings.TrimSpace(query(t, "pods", "--count").ok(t)); got != "0" {
		t.Errorf("--count in the kubeconfig's namespace (default, empty) = %s, want 0", got)
	}
}

func TestGroupBy(t *testing.T) {
	want := map[string]int{}
	for _, p := range pods(t, metav1.ListOptions{}) {
		want[string(p.Status.Phase)]++
	}
	out := query(t, "pods", "-A", "--count", "--group-by", "object.status.phase").ok(t)
	got := map[string]int{}
	prev := 1 << 30
	for _, l := range lines(out) {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("line %q is not VALUE COUNT", l)
		}
		n, _ := strconv.Atoi(f[1])
		if n > prev {
			t.Errorf("groups not largest first:\n%s", out)
		}
		prev = n
		got[f[0]] = n
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("--group-by phase = %v, want %v", got, want)
	}
	// --limit keeps the largest groups.
	if l := lines(query(t, "pods", "-A", "--count", "--group-by", "object.status.phase", "--limit", "2").ok(t)); len(l) != 2 {
		t.Errorf("--limit 2 printed %d groups", len(l))
	}
}

func TestIndexAndBy(t *testing.T) {
	onNode := pods(t, metav1.ListOptions{FieldSelector: "spec.nodeName=node-002"})
	r := query(t, "pods", "-A", "--index", "byNode=object.spec.nodeName", "--by", "byNode=node-002", "-o", "name")
	out := r.ok(t)
	var want []string
	for _, n := range names(onNode, false) {
		want = append(want, "pod/"+n)
	}
	got := lines(out)
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Errorf("--by byNode=node-002 printed %v, want %v", got, want)
	}
	// Unscheduled pods have no spec.nodeName: counted, reported, not fatal.
	if !strings.Contains(r.errOut, `index "byNode": `) || !strings.Contains(r.errOut, "no such key: nodeName") {
		t.Errorf("stderr %q does not summarise the index failures", r.errOut)
	}

	// Two selectors intersect; a list-valued index holds every element.
	both := 0
	for _, p := range onNode {
		if p.Labels["tier"] == "frontend" {
			both++
		}
	}
	out = query(t, "pods", "-A", "--index", "byNode=object.spec.nodeName",
		"--index", `byLabel=object.metadata.labels.map(k, k + "=" + object.metadata.labels[k])`,
		"--by", "byNode=node-002", "--by", "byLabel=tier=frontend", "--count").ok(t)
	if strings.TrimSpace(out) != strconv.Itoa(both) || both == 0 {
		t.Errorf("intersection count = %q, want %d", out, both)
	}

	r = query(t, "pods", "-A", "--index", "byNode=object.spec.nodeName", "--by", "byZone=zone-a")
	if r.code != 2 || !strings.Contains(r.errOut, `unknown index "byZone": known indexes are byNode, namespace`) {
		t.Errorf("unknown index: exit %d, stderr %q", r.code, r.errOut)
	}
}

func TestWhereColumnsSortLimit(t *testing.T) {
	// The three pods with the most restarts of their first container.
	type pr struct {
		key      string
		restarts int32
	}
	var all []pr
	for _, p := range pods(t, metav1.ListOptions{}) {
		var n int32
		for _, c := range p.Status.ContainerStatuses {
			n += c.RestartCount
		}
		all = append(all, pr{p.Namespace + "/" + p.Name, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].restarts != all[j].restarts {
			return all[i].restarts > all[j].restarts
		}
		return all[i].key < all[j].key
	})
	restarts := `object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()`
	out := query(t, "pods", "-A", "--sort-by", "-"+restarts, "--limit", "3",
		"--columns", "restarts="+restarts+",node=object.spec.?nodeName.orValue(\"\")").ok(t)
	rows := lines(out)
	// The pod columns come first; RESTARTS of the pod columns may hold
	// blanks ("3 (5m ago)"): the --columns cells are the last two.
	if len(rows) != 4 || strings.Join(strings.Fields(rows[0]), " ") != "NAMESPACE NAME READY STATUS RESTARTS AGE RESTARTS NODE" {
		t.Fatalf("table:\n%s", out)
	}
	for i, row := range rows[1:] {
		f := strings.Fields(row)
		if f[0]+"/"+f[1] != all[i].key || f[len(f)-2] != strconv.Itoa(int(all[i].restarts)) {
			t.Errorf("row %d = %q, want %s with %d restarts", i, row, all[i].key, all[i].restarts)
		}
	}
}

func TestCrossResourceLookups(t *testing.T) {
	nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zoneA := map[string]bool{}
	for _, n := range nodes.Items {
		if n.Labels["topology.kubernetes.io/zone"] == "zone-a" {
			zoneA[n.Name] = true
		}
	}
	var want []string
	for _, p := range pods(t, metav1.ListOptions{}) {
		if zoneA[p.Spec.NodeName] {
			want = append(want, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(want)
	out := query(t, "pods", "-A", "--no-headers",
		"--where", `has(object.spec.nodeName) && get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] == "zone-a"`).ok(t)
	var got []string
	for _, l := range lines(out) {
		f := strings.Fields(l)
		got = append(got, f[0]+"/"+f[1])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Errorf("pods in zone-a: got %d, want %d\n%v\n%v", len(got), len(want), got, want)
	}

	// byIndex from nodes into pods: running pods per node as a column.
	out = query(t, "nodes", "--index", "byNode=object.spec.?nodeName.orValue(\"\")",
		"--columns", `pods=size(byIndex("pods", "byNode", object.metadata.name))`, "--no-headers").ok(t)
	for _, l := range lines(out) {
		f := strings.Fields(l)
		onNode := pods(t, metav1.ListOptions{FieldSelector: "spec.nodeName=" + f[0]})
		if f[len(f)-1] != strconv.Itoa(len(onNode)) {
			t.Errorf("node %s: byIndex counted %s pods, the API lists %d", f[0], f[len(f)-1], len(onNode))
		}
	}
}

func TestSelectors(t *testing.T) {
	want := pods(t, metav1.ListOptions{LabelSelector: "tier=frontend", FieldSelector: "status.phase=Running"})
	out := query(t, "pods", "-A", "-l", "tier=frontend", "--field-selector", "status.phase=Running", "-o", "name").ok(t)
	if len(lines(out)) != len(want) || len(want) == 0 {
		t.Errorf("-l/--field-selector printed %d pods, the API lists %d", len(lines(out)), len(want))
	}
}

func TestOutputFormats(t *testing.T) {
	ns := workload.NamespaceName(0)
	inNS := pods(t, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
	wantNames := names(inNS, false)

	// -o json is a v1 List of whole objects, without managedFields.
	var list struct {
		APIVersion, Kind string
		Items            []corev1.Pod
	}
	if err := json.Unmarshal([]byte(query(t, "pods", "-n", ns, "-o", "json").ok(t)), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != len(inNS) {
		t.Fatalf("-o json: %s %s with %d items, want v1 List with %d", list.APIVersion, list.Kind, len(list.Items), len(inNS))
	}
	for _, p := range list.Items {
		if p.Kind != "Pod" || len(p.Spec.Containers) != 2 || p.ManagedFields != nil || p.Status.Phase == "" {
			t.Fatalf("-o json item %s: kind %q, %d containers, managedFields %v, phase %q", p.Name, p.Kind, len(p.Spec.Containers), p.ManagedFields != nil, p.Status.Phase)
		}
	}

	// -o yaml parses to the same.
	var ylist struct {
		Items []corev1.Pod `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(query(t, "pods", "-n", ns, "-o", "yaml").ok(t)), &ylist); err != nil || len(ylist.Items) != len(inNS) {
		t.Fatalf("-o yaml: %v, %d items", err, len(ylist.Items))
	}

	// -o jsonpath and custom-columns use kubectl's printers.
	jp := query(t, "pods", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`).ok(t)
	got := lines(jp)
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(wantNames, ",") {
		t.Errorf("-o jsonpath printed %v, want %v", got, wantNames)
	}
	cc := query(t, "pods", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase").ok(t)
	if l := lines(cc); len(l) != len(inNS)+1 || !strings.HasPrefix(l[0], "NAME") || !strings.Contains(l[0], "PHASE") {
		t.Errorf("-o custom-columns:\n%s", cc)
	}

	// The default table for one namespace has no NAMESPACE column; -A has.
	tbl := lines(query(t, "pods", "-n", ns, "--limit", "1").ok(t))
	if strings.Join(strings.Fields(tbl[0]), " ") != "NAME READY STATUS RESTARTS AGE" {
		t.Errorf("table header %q, want NAME READY STATUS RESTARTS AGE", tbl[0])
	}
	wide := lines(query(t, "pods", "-n", ns, "--limit", "1", "-o", "wide", "--index", "byPhase=object.status.phase", "--index-columns", "byPhase").ok(t))
	if strings.Join(strings.Fields(wide[0]), " ") != "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES BYPHASE" {
		t.Errorf("wide header %q, want the pod columns and BYPHASE", wide[0])
	}

	// -o name for a CRD by short name and by category.
	dbs := lines(query(t, "db", "-A", "-o", "name").ok(t))
	if len(dbs) != spec.Default().CustomResources || !strings.HasPrefix(dbs[0], "database.demo.kubectl-informer.io/") {
		t.Errorf("db -o name printed %d lines (%v), want %d databases", len(dbs), dbs, spec.Default().CustomResources)
	}
	if cat := lines(query(t, "demo", "-A", "-o", "name").ok(t)); len(cat) != len(dbs) {
		t.Errorf("category demo printed %d, want %d", len(cat), len(dbs))
	}
	// CEL over a CRD's fields.
	ready := query(t, "databases.demo.kubectl-informer.io", "-A", "--count", "--group-by", "object.spec.engine").ok(t)
	if len(lines(ready)) == 0 {
		t.Errorf("CRD group-by printed nothing")
	}

	// Nothing matched: exit 0, "No resources found" on stderr as kubectl does.
	r := query(t, "pods", "-n", ns, "--where", "false")
	if r.code != 0 || r.out != "" || !strings.Contains(r.errOut, "No resources found in "+ns+" namespace.") {
		t.Errorf("no match: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
}

func TestMultipleResources(t *testing.T) {
	ns := workload.NamespaceName(0)
	out := query(t, "po,deploy", "-n", ns, "-o", "name").ok(t)
	var pods, deploys int
	for _, l := range lines(out) {
		switch {
		case strings.HasPrefix(l, "pod/"):
			pods++
		case strings.HasPrefix(l, "deployment.apps/"):
			deploys++
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if pods == 0 || deploys == 0 {
		t.Errorf("po,deploy printed %d pods and %d deployments", pods, deploys)
	}
}

func TestErrors(t *testing.T) {
	// An unreachable server proves that these fail before any contact.
	dead := cluster.KubeconfigFor(t, "https://"+framework.ClosedPort(t))
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"syntax error with caret", []string{"pods", "--kubeconfig", dead, "--where", `object.status.phase = "x"`}, 2,
			[]string{"invalid --where expression: syntax error", " | object.status.phase = \"x\"\n |                     ^"}},
		{"wrong result type", []string{"pods", "--kubeconfig", dead, "--where", `size(object.metadata.name) + 1`}, 2,
			[]string{"--where", "must evaluate to bool"}},
		{"unknown function", []string{"pods", "--kubeconfig", dead, "--where", `frob(object)`}, 2,
			[]string{"undeclared reference to 'frob'"}},
		{"bad output", []string{"pods", "--kubeconfig", dead, "-o", "xml"}, 2,
			[]string{`unable to match a printer suitable for the output format "xml"`}},
		{"bad --by", []string{"pods", "--kubeconfig", dead, "--by", "nodename"}, 2, []string{`--by "nodename": want INDEX=VALUE`}},
		{"unreachable", []string{"pods", "--kubeconfig", dead, "--insecure-skip-tls-verify"}, 1,
			[]string{"connection refused", "the API server could not be reached"}},
		{"unknown resource", []string{"podz"}, 2, []string{`the server doesn't have a resource type "podz"; did you mean "pods"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !slices.Contains(args, "--kubeconfig") {
				args = append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)
			}
			r := run(t, append([]string{"query"}, args...)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.errOut, w) {
					t.Errorf("stderr %q does not contain %q", r.errOut, w)
				}
			}
		})
	}
}

func TestForbidden(t *testing.T) {
	r := run(t, "query", "--kubeconfig", cluster.UnprivilegedKubeconfig, "pods", "-n", "shop")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, w := range []string{`User "e2e-unprivileged" cannot list resource "pods" in API group "" in the namespace "shop"`, "kubectl auth can-i list pods"} {
		if !strings.Contains(r.errOut, w) {
			t.Errorf("stderr %q does not contain %q", r.errOut, w)
		}
	}
}

func TestSyncTimeout(t *testing.T) {
	addr := framework.SilentServer(t)
	r := run(t, "query", "--kubeconfig", cluster.KubeconfigFor(t, "http://"+addr), "pods", "--sync-timeout", "2s", "--request-timeout", "1s")
	if r.code != 1 {
		t.Errorf("exit %d, want 1; stderr %q", r.code, r.errOut)
	}
	// The shorter bound ends the wait and is named.
	if want := "the API server did not answer within --request-timeout (1s)"; !strings.Contains(r.errOut, want) {
		t.Errorf("stderr %q, want it to say %q", r.errOut, want)
	}
}

func TestSchemaChecking(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"pods", "-A", "--where", `object.staus.phase == "Pending"`},
			[]string{`undefined field 'staus' (did you mean "status"?)`, " | object.staus.phase == \"Pending\"\n |        ^"}},
		{[]string{"pods", "-A", "--where", `object.metadata.name`}, []string{"must evaluate to bool but got string"}},
		{[]string{"db", "-A", "--columns", `e=object.spec.engin`}, []string{`undefined field 'engin' (did you mean "engine"?)`}},
		{[]string{"pods,nodes", "-A", "--where", `object.spec.nodeName == "node-001"`}, []string{"for nodes: invalid --where expression: undefined field 'nodeName'"}},
	}
	for _, tt := range tests {
		r := query(t, tt.args...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2; stderr %q", tt.args, r.code, r.errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.errOut, w) {
				t.Errorf("%q: stderr %q does not contain %q", tt.args, r.errOut, w)
			}
		}
	}
}

// TestMetadataOnlyAnswers checks that a query the plan answers from
// metadata-only informers gives the API's answer.
func TestMetadataOnlyAnswers(t *testing.T) {
	want := pods(t, metav1.ListOptions{LabelSelector: "tier=frontend"})
	out := query(t, "pods", "-A", "--where", `object.metadata.labels["tier"] == "frontend"`, "--count").ok(t)
	if strings.TrimSpace(out) != strconv.Itoa(len(want)) || len(want) == 0 {
		t.Errorf("metadata-only count = %q, want %d", out, len(want))
	}
	out = query(t, "pods", "-A", "--count", "--group-by", `object.metadata.labels["app"]`, "--limit", "1").ok(t)
	if f := strings.Fields(out); len(f) != 2 {
		t.Errorf("group-by on labels printed %q", out)
	}
}

func TestConfigAndIndexesVerb(t *testing.T) {
	dir := t.TempDir()
	cfg := dir + "/config.yaml"
	if err := os.WriteFile(cfg, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  po:
    byNode: "has(object.spec.nodeName) ? [object.spec.nodeName] : []"
    byTier: object.metadata.labels["tier"]
  databases.demo.kubectl-informer.io:
    byEngine: object.spec.engine
  widgets.example.com:
    byColour: object.spec.colour
defaults:
  output: name
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// --by uses the config's index; defaults.output applies; an index of a
	// resource the server lacks is reported and skipped.
	onNode := pods(t, metav1.ListOptions{FieldSelector: "spec.nodeName=node-003", LabelSelector: "tier=backend"})
	r := query(t, "pods", "-A", "--config", cfg, "--by", "byNode=node-003", "--by", "byTier=backend")
	out := r.ok(t)
	if len(lines(out)) != len(onNode) || len(onNode) == 0 || !strings.HasPrefix(out, "pod/") {
		t.Errorf("config indexes: printed %d lines (%q), want %d pod names", len(lines(out)), out, len(onNode))
	}
	if !strings.Contains(r.errOut, `indexes of "widgets.example.com" skipped`) {
		t.Errorf("stderr %q does not report the unknown resource of the config", r.errOut)
	}
	// Counts ignore the config's default output format.
	if got := query(t, "db", "-A", "--config", cfg, "--by", "byEngine=redis", "--count").ok(t); strings.TrimSpace(got) == "0" {
		t.Errorf("byEngine=redis counted %q", got)
	}

	// indexes without resources lists the config offline.
	r = run(t, "indexes", "--config", cfg, "--server", "https://127.0.0.1:1")
	if r.code != 0 || !strings.Contains(r.out, "byNode") || !strings.Contains(r.out, "widgets.example.com") {
		t.Errorf("indexes: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// indexes with resources counts distinct values.
	r = run(t, "indexes", "--kubeconfig", cluster.Kubeconfig, "--config", cfg, "pods", "-A", "--index", "byPhase=object.status.phase")
	phases := map[corev1.PodPhase]bool{}
	for _, p := range pods(t, metav1.ListOptions{}) {
		phases[p.Status.Phase] = true
	}
	var sawPhase, sawNode bool
	for _, l := range lines(r.ok(t)) {
		f := strings.Fields(l)
		switch f[1] {
		case "byPhase":
			sawPhase = f[2] == strconv.Itoa(len(phases))
		case "byNode":
			sawNode = f[2] == strconv.Itoa(spec.Nodes)
		}
	}
	if !sawPhase || !sawNode {
		t.Errorf("indexes pods: want byPhase with %d values and byNode with %d\n%s", len(phases), spec.Nodes, r.out)
	}
}

// TestConnectionFlags checks that kubectl's flags choose the user: --context
// in a kubeconfig with two contexts, and --as (impersonation by the admin).
func TestConnectionFlags(t *testing.T) {
	admin, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	nobody, err := clientcmd.LoadFromFile(cluster.UnprivilegedKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	merged := admin.DeepCopy()
	for name, ai := range nobody.AuthInfos {
		merged.AuthInfos["nobody-"+name] = ai
	}
	ctx := merged.Contexts[merged.CurrentContext].DeepCopy()
	for name := range nobody.AuthInfos {
		ctx.AuthInfo = "nobody-" + name
	}
	merged.Contexts["nobody"] = ctx
	path := t.TempDir() + "/kubeconfig"
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}

	if out := strings.TrimSpace(run(t, "query", "--kubeconfig", path, "pods", "-A", "--count").ok(t)); out == "0" {
		t.Errorf("the current context counted %s pods", out)
	}
	r := run(t, "query", "--kubeconfig", path, "--context", "nobody", "pods", "-n", "shop", "--count")
	if r.code != 1 || !strings.Contains(r.errOut, "forbidden") {
		t.Errorf("--context nobody: exit %d, stderr %q; want forbidden", r.code, r.errOut)
	}
	r = run(t, "query", "--kubeconfig", path, "--as", "someone-else", "pods", "-n", "shop", "--count")
	if r.code != 1 || !strings.Contains(r.errOut, `User "someone-else" cannot list resource "pods"`) {
		t.Errorf("--as someone-else: exit %d, stderr %q; want forbidden for that user", r.code, r.errOut)
	}
}

// TestQueryWatch runs query --count --watch while a pod is created and
// deleted: the count is printed once synced and again after each change.
func TestQueryWatch(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "query-watch-"}}
	ns, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut framework.SyncBuffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	cmd := app.NewRootCommand(streams)
	cmd.SetArgs([]string{"query", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", ns.Name, "--count", "--watch"})
	runCtx, cancel := context.WithCancel(ctx)
	cmd.SetContext(runCtx)
	done := make(chan int, 1)
	go func() { done <- app.Execute(cmd, streams) }()

	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(framework.HangTimeout)
		for out.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("output %q, want %q (stderr %q)", out.String(), want, errOut.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("0\n")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/w:1"}}}}
	if _, err := cluster.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("0\n1\n")
	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(ns.Name).Delete(ctx, "w", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor("0\n1\n0\n")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel; stderr %q", code, errOut.String())
		}
	case <-time.After(framework.HangTimeout):
		t.Fatal("query --watch did not end after cancel")
	}
}

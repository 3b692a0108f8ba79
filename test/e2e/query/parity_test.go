package query_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// kubectl runs the kubectl the project builds, as the admin, and returns
// its exit code and what it printed on each stream.
func kubectl(t *testing.T, args ...string) result {
	t.Helper()
	return kubectlWith(t, cluster.Kubeconfig, args...)
}

// kubectlWith runs the kubectl the project builds with kubeconfig.
func kubectlWith(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return result{code: exit.ExitCode(), out: out.String(), errOut: errOut.String()}
	case err != nil:
		t.Fatalf("running kubectl: %v", err)
	}
	return result{out: out.String(), errOut: errOut.String()}
}

// parityCase is a request run through query and kubectl get.
type parityCase struct {
	name string
	args []string
	// table: the outputs are tables, compared without their ages.
	// noHeaders is the AGE column's position for --no-headers, else -1.
	table     bool
	noHeaders int
}

// TestOutputMatchesKubectl runs the same requests through query and the
// kubectl the project builds, on the same objects, and compares what
// each prints on each stream and its exit code. Only AGE columns are
// normalised (see ageless); when the ages printed agree, the tables must
// be the same text, alignment included. Everything else is compared as
// text: -o json and -o yaml too, as kubectl's output of the same objects
// is deterministic.
//
// Tables are compared with kubectl get's default table, which the API
// server computes: the columns of each kind (READY, STATUS, RESTARTS for
// pods, a CRD's additionalPrinterColumns), which query computes from its
// cache. The objects of createColumnObjects and createWidgets hold every
// state those columns print differently; the timestamps their cells
// print as ages are years old, so that both commands print the same.
func TestOutputMatchesKubectl(t *testing.T) {
	ns1 := cluster.NewNamespace(t, "parity")
	ns2 := cluster.NewNamespace(t, "parity")
	empty := cluster.NewNamespace(t, "parity-empty")
	sel := "parity=" + ns1
	for i, ns := range []string{ns1, ns1, ns1, ns2, ns2} {
		name := fmt.Sprintf("web-%d", i)
		if i == 1 {
			name = "db-0"
		}
		cluster.CreatePod(t, ns, name, map[string]string{"parity": ns1, "app": strings.TrimSuffix(name, name[len(name)-2:]), "tier": []string{"front", "back"}[i%2]})
	}
	for i, ns := range []string{ns1, ns1, ns2} {
		createDeployment(t, ns, fmt.Sprintf("app-%d", i), map[string]string{"parity": ns1, "tier": "front"})
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: "settings", Labels: map[string]string{"parity": ns1}},
		Data:       map[string]string{"mode": "fast", "level": "3"},
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns2).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cols := createColumnObjects(t)
	createWidgets(t, cols)
	colSel := "columns=" + cols
	cases := []parityCase{
		{name: "table -n", args: []string{"pods", "-n", ns1}, table: true},
		{name: "table -A", args: []string{"pods", "-A", "-l", sel}, table: true},
		{name: "table of deployments -A", args: []string{"deployments", "-A", "-l", sel}, table: true},
		{name: "table of several types", args: []string{"pods,deployments,configmaps", "-n", ns2}, table: true},
		{name: "table of several types -A", args: []string{"deployments,pods", "-A", "-l", sel}, table: true},
		{name: "table --show-labels -L --show-kind", args: []string{"pods", "-n", ns1, "--show-labels", "-L", "tier", "--show-kind"}, table: true},
		{name: "table --no-headers -A", args: []string{"pods", "-A", "-l", sel, "--no-headers"}, table: true, noHeaders: 5},
		{name: "wide -n", args: []string{"pods", "-n", ns1, "-o", "wide"}, table: true},
		{name: "wide -A", args: []string{"deployments", "-A", "-l", sel, "-o", "wide"}, table: true},
		{name: "name -n", args: []string{"pods", "-n", ns1, "-o", "name"}},
		{name: "name of several types -A", args: []string{"pods,deployments,configmaps", "-A", "-l", sel, "-o", "name"}},
		{name: "json -n", args: []string{"pods", "-n", ns1, "-o", "json"}},
		{name: "json -A", args: []string{"deployments", "-A", "-l", sel, "-o", "json"}},
		{name: "json of several types", args: []string{"configmaps,pods", "-n", ns2, "-o", "json"}},
		{name: "yaml -n", args: []string{"deployments", "-n", ns1, "-o", "yaml"}},
		{name: "yaml -A", args: []string{"pods", "-A", "-l", sel, "-o", "yaml"}},
		{name: "jsonpath", args: []string{"pods", "-A", "-l", sel, "-o", `jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.containers[0].image}{"\n"}{end}`}},
		{name: "jsonpath of a list", args: []string{"deployments", "-n", ns1, "-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "custom-columns", args: []string{"pods", "-A", "-l", sel, "-o", "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,TIER:.metadata.labels.tier,IMAGE:.spec.containers[*].image"}},
		{name: "custom-columns --no-headers", args: []string{"configmaps", "-n", ns2, "--no-headers", "-o", "custom-columns=NAME:.metadata.name,MODE:.data.mode"}},
		{name: "empty table -n", args: []string{"pods", "-n", empty}, table: true},
		{name: "empty table -A", args: []string{"pods", "-A", "-l", "parity=none"}, table: true},
		{name: "empty table of several types -n", args: []string{"pods,deployments", "-n", empty}, table: true},
		{name: "empty wide", args: []string{"pods", "-n", empty, "-o", "wide"}, table: true},
		{name: "empty name", args: []string{"pods", "-n", empty, "-o", "name"}},
		{name: "empty json", args: []string{"pods", "-n", empty, "-o", "json"}},
		{name: "empty yaml -A", args: []string{"deployments", "-A", "-l", "parity=none", "-o", "yaml"}},
		{name: "empty jsonpath", args: []string{"pods", "-n", empty, "-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "empty custom-columns", args: []string{"pods", "-n", empty, "-o", "custom-columns=NAME:.metadata.name"}},
		{name: "columns of several types", args: []string{"deployments,statefulsets,services", "-n", cols}, table: true},
		{name: "columns of pods -A --show-kind -L", args: []string{"pods", "-A", "-l", colSel, "--show-kind", "-L", "columns"}, table: true},
		{name: "columns of a CRD -A", args: []string{"widgets", "-A"}, table: true},
		{name: "columns of a CRD by its group", args: []string{"widgets." + widgetsGroup, "-n", cols, "--show-labels"}, table: true},
	}
	// The columns of each kind, in its table and -o wide.
	for _, kind := range []string{"pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs", "services",
		"configmaps", "secrets", "persistentvolumeclaims", "ingresses", "widgets", "gadgets",
		"replicationcontrollers", "resourcequotas", "poddisruptionbudgets", "horizontalpodautoscalers", "roles", "rolebindings",
		"limitranges", "leases", "endpoints", "endpointslices", "networkpolicies"} {
		cases = append(cases,
			parityCase{name: "columns of " + kind, args: []string{kind, "-n", cols}, table: true},
			parityCase{name: "columns of " + kind + " -o wide", args: []string{kind, "-n", cols, "-o", "wide"}, table: true})
	}
	for _, kind := range []string{"nodes", "namespaces", "persistentvolumes", "storageclasses", "ingressclasses",
		"clusterroles", "clusterrolebindings", "priorityclasses", "certificatesigningrequests"} {
		cases = append(cases,
			parityCase{name: "columns of " + kind, args: []string{kind, "-l", colSel}, table: true},
			parityCase{name: "columns of " + kind + " -o wide", args: []string{kind, "-l", colSel, "-o", "wide"}, table: true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noHeaders := -1
			if slices.Contains(c.args, "--no-headers") {
				noHeaders = c.noHeaders
			}
			c.check(t, query(t, c.args...), noHeaders)
		})
	}
	t.Run("columns of a CRD the user cannot read", func(t *testing.T) { checkUnreadableCRD(t, cols) })
}

// check compares got, what query printed for c, with what kubectl get
// prints for c's arguments; noHeaders is the AGE column's position for
// --no-headers, else -1.
func (c parityCase) check(t *testing.T, got result, noHeaders int) {
	t.Helper()
	want := kubectl(t, append([]string{"get"}, c.args...)...)
	if got.code != want.code || got.errOut != want.errOut {
		t.Fatalf("query %s\nexit code %d, stderr %q\nkubectl: exit code %d, stderr %q", strings.Join(c.args, " "), got.code, got.errOut, want.code, want.errOut)
	}
	if want.out == "" && want.errOut == "" && !strings.Contains(c.name, "empty") {
		t.Fatalf("kubectl printed nothing for %s", strings.Join(c.args, " "))
	}
	if !c.table {
		if got.out != want.out {
			t.Errorf("query %s printed\n%s\nkubectl get printed\n%s", strings.Join(c.args, " "), got.out, want.out)
		}
		return
	}
	sameTable(t, c.args, got, want, noHeaders)
}

// sameTable fails t unless the table query printed for args, got, is the
// one kubectl get printed, want: the same text once the AGE columns are
// set aside, and the same text when the ages printed agree.
func sameTable(t *testing.T, args []string, got, want result, noHeaders int) {
	t.Helper()
	g, gotAges := framework.AgelessTable(got.out, noHeaders)
	w, wantAges := framework.AgelessTable(want.out, noHeaders)
	switch {
	case !slices.EqualFunc(g, w, slices.Equal):
		t.Errorf("query %s printed (ages aside)\n%s\nkubectl get printed\n%s", strings.Join(args, " "), got.out, want.out)
	case slices.Equal(gotAges, wantAges) && got.out != want.out:
		t.Errorf("query %s is aligned differently:\n%s\nkubectl get printed\n%s", strings.Join(args, " "), got.out, want.out)
	}
}

// TestWideLeavesIndexesOut checks that -o wide prints the columns of
// kubectl get -o wide whatever indexes are declared, in the default
// config file and by --index, and that --index-columns adds a column per
// index it names, in its order, with each object's values: those of the
// pod as the API server has it.
func TestWideLeavesIndexesOut(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	config := "apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexes:\n  pods:\n    byNode: \"has(object.spec.nodeName) ? [object.spec.nodeName] : []\"\n"
	if err := os.MkdirAll(filepath.Join(dir, "kubectl-informer"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl-informer", "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ns := workload.NamespaceName(0)
	c := parityCase{name: "pods -o wide", args: []string{"pods", "-n", ns, "-o", "wide"}, table: true}
	c.check(t, query(t, append(c.args, "--index", "byPhase=object.status.phase")...), -1)

	out := query(t, "pods", "-n", ns, "-o", "wide", "--index", "byPhase=object.status.phase", "--index-columns", "byPhase,byNode").ok(t)
	pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range pods.Items {
		node := p.Spec.NodeName
		if node == "" {
			node = "<none>"
		}
		want[p.Name] = string(p.Status.Phase) + " " + node
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if h := strings.Fields(rows[0]); len(h) < 2 || h[len(h)-2] != "BYPHASE" || h[len(h)-1] != "BYNODE" {
		t.Fatalf("--index-columns byPhase,byNode printed the header %q; want it to end in BYPHASE BYNODE", rows[0])
	}
	if len(rows)-1 != len(want) {
		t.Fatalf("--index-columns printed %d rows, want the %d pods of %s:\n%s", len(rows)-1, len(want), ns, out)
	}
	for _, row := range rows[1:] {
		f := strings.Fields(row)
		if got := strings.Join(f[len(f)-2:], " "); got != want[f[0]] {
			t.Errorf("pod %s has %q in its index columns, want %q", f[0], got, want[f[0]])
		}
	}
}

package query_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestNamesMatchKubectl names objects as kubectl get takes them, TYPE
// NAME... and TYPE/NAME..., and compares what query and the project's
// kubectl print on each stream, and their exit codes: objects that do not
// exist are reported in kubectl's words after the others are printed; one
// named object is printed by itself, not in a List. Tables are compared
// cell by cell but for their ages (see framework.AgelessTable).
func TestNamesMatchKubectl(t *testing.T) {
	ns := cluster.NewNamespace(t, "names")
	for _, name := range []string{"web-0", "web-1", "db-0"} {
		cluster.CreatePod(t, ns, name, map[string]string{"app": strings.TrimSuffix(name, name[len(name)-2:])})
	}
	createDeployment(t, ns, "web", map[string]string{"app": "web"})
	nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(nodes.Items) < 2 {
		t.Fatalf("nodes: %v (%d)", err, len(nodes.Items))
	}
	node0, node1 := nodes.Items[0].Name, nodes.Items[1].Name

	cases := []struct {
		name  string
		args  []string
		table bool
		// code is query's exit code where kubectl's differs (a usage
		// error is 2 here, 1 in kubectl); 0: kubectl's.
		code int
	}{
		{name: "names in the order given", args: []string{"pods", "web-1", "db-0", "-n", ns, "-o", "name"}},
		{name: "TYPE/NAME", args: []string{"pod/web-0", "-n", ns, "-o", "name"}},
		{name: "TYPE/NAME of several types", args: []string{"pod/web-1", "deploy/web", "po/db-0", "-n", ns, "-o", "name"}},
		{name: "a name of several types", args: []string{"pods,deployments", "web", "-n", ns, "-o", "name"}},
		{name: "a missing name among others", args: []string{"pods", "web-0", "nope", "db-0", "-n", ns, "-o", "name"}},
		{name: "missing names only", args: []string{"pods", "nope", "nada", "-n", ns}, table: true},
		{name: "a table of named objects", args: []string{"pods", "db-0", "web-1", "-n", ns}, table: true},
		{name: "a table with a missing name", args: []string{"pod/web-1", "deployment/nope", "-n", ns}, table: true},
		{name: "one object as JSON", args: []string{"pod/web-0", "-n", ns, "-o", "json"}},
		{name: "one object as YAML", args: []string{"pods", "db-0", "-n", ns, "-o", "yaml"}},
		{name: "one object, jsonpath", args: []string{"pod/web-1", "-n", ns, "-o", "jsonpath={.metadata.name} {.spec.containers[0].image}"}},
		{name: "one missing object as JSON", args: []string{"pods", "nope", "-n", ns, "-o", "json"}},
		{name: "two objects as JSON, one missing", args: []string{"pods", "web-1", "nope", "-n", ns, "-o", "json"}},
		{name: "cluster-scoped names with -A", args: []string{"nodes", node1, node0, "-A", "-o", "name"}},
		{name: "namespaced names with -A", args: []string{"pods", "web-0", "-A", "-o", "name"}, code: 2},
		{name: "-A wins over -n", args: []string{"pods", "-A", "-n", ns, "-l", "app=db", "-o", "name"}},
		// Usage errors exit with 2 here, 1 in kubectl.
		{name: "names with a label selector", args: []string{"pods", "web-0", "-n", ns, "-l", "app=web"}, code: 2},
		{name: "TYPE/NAME with a field selector", args: []string{"pod/web-0", "-n", ns, "--field-selector", "status.phase=Pending"}, code: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := query(t, c.args...)
			want := kubectl(t, append([]string{"get"}, c.args...)...)
			if c.code != 0 {
				want.code = c.code
			}
			if got.code != want.code || got.errOut != want.errOut {
				t.Fatalf("query %s\nexit code %d, stderr %q\nkubectl: exit code %d, stderr %q", strings.Join(c.args, " "), got.code, got.errOut, want.code, want.errOut)
			}
			if c.table {
				gotRows, _ := framework.AgelessTable(got.out, -1)
				wantRows, _ := framework.AgelessTable(want.out, -1)
				if !slices.EqualFunc(gotRows, wantRows, slices.Equal) {
					t.Errorf("query %s printed the rows\n%s\nkubectl get printed\n%s", strings.Join(c.args, " "), got.out, want.out)
				}
				return
			}
			if got.out != want.out {
				t.Errorf("query %s printed\n%s\nkubectl get printed\n%s", strings.Join(c.args, " "), got.out, want.out)
			}
		})
	}
}

// TestSortDescending checks --sort-by -EXPR and --reverse on strings and
// timestamps against the order of the objects the API lists.
func TestSortDescending(t *testing.T) {
	ns := cluster.NewNamespace(t, "desc")
	for _, name := range []string{"b", "d", "a", "c"} {
		cluster.CreatePod(t, ns, name, nil)
	}
	// kubectl get --sort-by sorts ascending only: descending is its order
	// reversed, where no two keys are equal.
	asc := kubectl(t, "get", "pods", "-n", ns, "--sort-by", ".metadata.name", "-o", "name")
	lines := strings.Split(strings.TrimSpace(asc.out), "\n")
	slices.Reverse(lines)
	desc := strings.Join(lines, "\n") + "\n"
	for _, args := range [][]string{
		{"--sort-by", "-object.metadata.name"},
		{"--sort-by", "object.metadata.name", "--reverse"},
		{"--reverse"},
	} {
		got := query(t, append([]string{"pods", "-n", ns, "-o", "name"}, args...)...).ok(t)
		if got != desc || len(lines) != 4 {
			t.Errorf("query %s printed\n%s\nwant kubectl's ascending order reversed\n%s", strings.Join(args, " "), got, desc)
		}
	}

	// Timestamps: the newest first, ties in namespace/name order.
	list, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var want strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&want, "pod/%s\n", p.Name)
	}
	got := query(t, "pods", "-n", ns, "-o", "name", "--sort-by", "-object.metadata.creationTimestamp").ok(t)
	if got != want.String() {
		t.Errorf("--sort-by -object.metadata.creationTimestamp printed\n%s\nwant\n%s", got, want.String())
	}

	// --group-by counts without --count.
	got = query(t, "pods", "-n", ns, "--group-by", "object.metadata.namespace").ok(t)
	if fields := strings.Fields(got); len(fields) != 2 || fields[0] != ns || fields[1] != "4" {
		t.Errorf("--group-by without --count printed %q, want %s 4", got, ns)
	}
}

// TestRBACHints checks that the kubectl auth can-i command a forbidden
// query suggests names the cluster, the user, and the scope of the query,
// by running it with the project's kubectl: it must answer "no". A --as
// that the API server refuses gets a hint about impersonation.
func TestRBACHints(t *testing.T) {
	kc := cluster.UnprivilegedKubeconfig
	raw, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := raw.CurrentContext
	flags := fmt.Sprintf("--kubeconfig %s --context %s", kc, ctx)
	cases := []struct {
		args  []string
		canI  string
		other bool // the hint also offers -n
	}{
		{args: []string{"pods", "-n", "shop"}, canI: "kubectl auth can-i list pods -n shop " + flags, other: true},
		{args: []string{"pods", "-A"}, canI: "kubectl auth can-i list pods -A " + flags, other: true},
		{args: []string{"nodes"}, canI: "kubectl auth can-i list nodes " + flags},
		{args: []string{"nodes", "--context", ctx}, canI: "kubectl auth can-i list nodes " + flags},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(t, append([]string{"query", "--kubeconfig", kc}, c.args...)...)
			if r.code != 1 || !strings.Contains(r.errOut, "(check with "+c.canI+")") {
				t.Fatalf("exit %d, stderr %q; want 1 and the hint %q", r.code, r.errOut, c.canI)
			}
			if strings.Contains(r.errOut, "or query a namespace you may read") != c.other {
				t.Errorf("stderr %q: offering -n is %v, want %v", r.errOut, !c.other, c.other)
			}
			checkCanI(t, c.canI, "no")
		})
	}

	// The admin may impersonate: the hint checks as the impersonated user.
	r := run(t, "query", "--kubeconfig", cluster.Kubeconfig, "--as", "e2e-unprivileged", "pods", "-n", "shop")
	adminCtx := ""
	if cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig); err == nil {
		adminCtx = cfg.CurrentContext
	}
	canI := fmt.Sprintf("kubectl auth can-i list pods -n shop --kubeconfig %s --context %s --as e2e-unprivileged", cluster.Kubeconfig, adminCtx)
	if r.code != 1 || !strings.Contains(r.errOut, "(check with "+canI+")") {
		t.Fatalf("--as: exit %d, stderr %q; want 1 and the hint %q", r.code, r.errOut, canI)
	}
	checkCanI(t, canI, "no")

	// A --token given on the command line is the identity checked: the
	// hint carries it as a placeholder, never the secret itself, and with
	// the token put in its place the command answers for the token's
	// service account, not for the kubeconfig's admin.
	ns := cluster.NewNamespace(t, "token-hint")
	token := cluster.ServiceAccountToken(t, ns, "nobody")
	userless := userlessKubeconfig(t)
	r = run(t, "query", "--kubeconfig", userless, "--token", token, "pods", "-n", "shop")
	canI = fmt.Sprintf("kubectl auth can-i list pods -n shop --kubeconfig %s --context %s --token %s", userless, adminCtx, factory.TokenPlaceholder)
	if r.code != 1 || !strings.Contains(r.errOut, "(check with "+canI+")") || strings.Contains(r.errOut, token) {
		t.Fatalf("--token: exit %d, stderr %q; want 1 and the hint %q, without the token", r.code, r.errOut, canI)
	}
	checkCanI(t, strings.Replace(canI, factory.TokenPlaceholder, token, 1), "no")

	// The unprivileged user may not impersonate.
	r = run(t, "query", "--kubeconfig", kc, "--as", "someone-else", "pods", "-n", "shop")
	if r.code != 1 || !strings.Contains(r.errOut, app.ImpersonationHint) || strings.Contains(r.errOut, "RBAC denied list/watch") {
		t.Fatalf("--as refused: exit %d, stderr %q; want 1 and %q", r.code, r.errOut, app.ImpersonationHint)
	}
	checkCanI(t, "kubectl auth can-i impersonate users --kubeconfig "+kc, "no")
}

// userlessKubeconfig writes the admin's kubeconfig without its client
// certificate: the cluster and context only, for credentials given by flags.
func userlessKubeconfig(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.ClientCertificateData, u.ClientKeyData, u.ClientCertificate, u.ClientKey = nil, nil, "", ""
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkCanI runs a suggested kubectl auth can-i command line with the
// project's kubectl and expects its answer.
func checkCanI(t *testing.T, line, answer string) {
	t.Helper()
	words := strings.Fields(line)
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), words[1:]...)
	out, _ := cmd.Output()
	if got := strings.TrimSpace(string(out)); got != answer {
		t.Errorf("%s answered %q, want %q", line, got, answer)
	}
}

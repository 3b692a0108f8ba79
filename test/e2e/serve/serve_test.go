package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// readerNamespace is the one namespace whose pods the service account of
// TestServe may list.
const readerNamespace = "shop"

// zoneWhere reads nodes with get(): a query with it reads both pods and
// nodes.
const zoneWhere = `has(object.spec.nodeName) && get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] == "zone-b"`

// TestServe runs one server and checks what each kind of caller gets from
// it, then that it stops cleanly.
func TestServe(t *testing.T) {
	s := startServer(t)
	empty := cluster.NewNamespace(t, "empty")

	t.Run("Admin", func(t *testing.T) { testAdmin(t, s, empty) })
	t.Run("NamespaceReader", func(t *testing.T) { testNamespaceReader(t, s) })
	t.Run("NoRBAC", func(t *testing.T) { testNoRBAC(t, s) })
	t.Run("Impersonation", func(t *testing.T) { testImpersonation(t, s) })
	t.Run("InvalidToken", func(t *testing.T) { testInvalidToken(t, s) })
	t.Run("NoCredentials", func(t *testing.T) { testNoCredentials(t, s) })
	t.Run("Unserved", func(t *testing.T) { testUnserved(t, s) })

	if code := s.run.Stop(t); code != 0 {
		t.Fatalf("serve exited %d when stopped, want 0\nstderr:\n%s", code, s.run.ErrOut)
	}
	log := s.run.ErrOut.String()
	if !strings.Contains(log, `msg="serving queries"`) {
		t.Errorf("the server's log has no \"serving queries\" line:\n%s", log)
	}
	// One line per request, naming the caller and the outcome, never an
	// object.
	if !slices.ContainsFunc(framework.Lines(log), func(l string) bool {
		return strings.Contains(l, "msg=query") && strings.Contains(l, "user=system:serviceaccount:"+readerNamespace+":") && strings.Contains(l, "code=403")
	}) {
		t.Errorf("the server's log has no line for the service account's forbidden query:\n%s", log)
	}
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.Contains(log, p.Name) {
			t.Errorf("the server's log names the pod %s:\n%s", p.Name, log)
			break
		}
	}
	// The listener is closed.
	hc := s.anonymousClient(t)
	hc.Timeout = 5 * time.Second
	if resp, err := hc.Get(s.url + "/healthz"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("GET /healthz after Stop answered %s", resp.Status)
	}
	hc.CloseIdleConnections()
}

// testAdmin checks that a user who may list everything gets, for every
// form of query, exactly what the same local query prints: standard
// output, standard error and exit code.
func testAdmin(t *testing.T, s *server, empty string) {
	cases := []struct {
		name string
		args []string
		// code is the exit code of both; quiet means standard output is
		// empty.
		code  int
		quiet bool
		// warns is part of the local query's standard error.
		warns string
		// age is the AGE column's position in a table printed with
		// --no-headers.
		age int
	}{
		{name: "table", args: []string{"pods", "-A"}},
		{name: "wide", args: []string{"pods", "-A", "-o", "wide"}},
		{name: "name", args: []string{"pods", "-A", "-o", "name"}},
		{name: "json", args: []string{"pods", "-n", "payments", "-o", "json"}},
		{name: "yaml", args: []string{"deployments", "-A", "-o", "yaml"}},
		{name: "jsonpath", args: []string{"nodes", "-o", "jsonpath", "--template", `{range .items[*]}{.metadata.name} {.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}`}},
		{name: "cluster-scoped", args: []string{"nodes", "--show-labels"}},
		{name: "count", args: []string{"pods", "-A", "--count"}},
		{name: "count group-by", args: []string{"pods", "-A", "--count", "--group-by", "object.status.phase"}},
		{name: "by config index", args: []string{"pods", "-A", "--by", "byNode=node-002"}},
		{name: "index columns", args: []string{"pods", "-A", "-o", "wide", "--index-columns", "byNode,namespace"}},
		{name: "index columns of the request", args: []string{"pods", "-A", "--index", "byTier=object.metadata.labels.tier", "--index-columns", "byTier,byNode"}},
		{name: "by config index of nodes", args: []string{"nodes", "--by", "byZone=zone-a", "-o", "name"}},
		{name: "by config index of deployments", args: []string{"deployments", "-A", "--by", "byApp=web"}},
		{name: "by index of the request", args: []string{"pods", "-A", "--index", "byTier=object.metadata.labels.tier", "--by", "byTier=frontend", "-o", "name"}},
		{name: "by failing index of the request", args: []string{"pods", "-A", "--index", `byAPI=object.metadata.name.startsWith("api-") ? "api" : object.metadata.labels.none`,
			"--by", "byAPI=api", "-o", "name"}, warns: `warning: index "byAPI": `},
		{name: "where get nodes", args: []string{"pods", "-A", "--where", zoneWhere}},
		{name: "sort-by limit columns", args: []string{"pods", "-A",
			"--sort-by", "-object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()", "--limit", "7",
			"--columns", `node=object.spec.?nodeName.orValue(""),phase=object.status.phase`}},
		{name: "label selector", args: []string{"pods", "-A", "-l", "tier=frontend", "-L", "app"}},
		{name: "field selector", args: []string{"pods", "-A", "--field-selector", "spec.nodeName=node-001"}},
		{name: "namespace", args: []string{"pods", "-n", "payments", "--no-headers"}, age: 4},
		{name: "several resources", args: []string{"deployments,pods", "-n", readerNamespace}},
		{name: "several resources sort-by limit", args: []string{"deployments,pods", "-A", "--sort-by", "object.metadata.name", "--limit", "5", "-o", "name"}},
		{name: "several resources group-by limit", args: []string{"pods,deployments", "-A", "--count", "--group-by", `object.metadata.labels["app"]`, "--limit", "3"}},
		{name: "empty namespace", args: []string{"pods", "-n", empty}, quiet: true},
		{name: "nothing matches", args: []string{"pods", "-A", "--where", `object.metadata.name == "none"`}, quiet: true},
		{name: "no such field", args: []string{"pods", "-A", "--where", "object.spec.noSuchField == 1"}, code: app.ExitUsage, quiet: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			local := localQuery(t, c.args...)
			remote := s.query(t, cluster.Kubeconfig, c.args...)
			age := -1
			if slices.Contains(c.args, "--no-headers") {
				age = c.age
			}
			if !sameAnswer(local, remote, age) {
				t.Fatalf("query %s: --query-server differs from the local query\n%s", strings.Join(c.args, " "), diff("local", local, "--query-server", remote))
			}
			if local.code != c.code || (local.out == "") != c.quiet || !strings.Contains(local.errOut, c.warns) {
				t.Fatalf("query %s: exit code %d, stdout empty %t; want %d, %t, stderr holding %q\n%s", strings.Join(c.args, " "),
					local.code, local.out == "", c.code, c.quiet, c.warns, diff("local", local, "--query-server", remote))
			}
		})
	}
	// The answers above are not those of an empty or partial cache.
	r := s.query(t, cluster.Kubeconfig, "pods", "-A", "--count")
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.out != strconv.Itoa(len(pods.Items))+"\n" {
		t.Errorf("--count printed %q (exit %d), want %d", r.out, r.code, len(pods.Items))
	}
	// --limit is a limit in all over several resources.
	if r := s.query(t, cluster.Kubeconfig, "deployments,pods", "-A", "--sort-by", "object.metadata.name", "--limit", "5", "-o", "name"); r.code != 0 || len(framework.Lines(r.out)) != 5 {
		t.Errorf("--limit 5 over deployments and pods printed %d lines (exit %d), want 5:\n%s", len(framework.Lines(r.out)), r.code, r.out)
	}
	if r := s.query(t, cluster.Kubeconfig, "pods", "-n", empty); r.errOut != "No resources found in "+empty+" namespace.\n" {
		t.Errorf("an empty namespace printed on stderr %q", r.errOut)
	}
}

// testNamespaceReader checks a service account, authenticated with a
// bearer token (a TokenReview), that may list pods in one namespace only.
func testNamespaceReader(t *testing.T, s *server) {
	kubeconfig, user := serviceAccountKubeconfig(t, readerNamespace, "pod-reader")

	// Across namespaces: the pods of its namespace, as the admin lists
	// them there.
	got := s.query(t, kubeconfig, "pods", "-A")
	want := localQuery(t, "pods", "-A", "--field-selector", "metadata.namespace="+readerNamespace)
	if !sameAnswer(got, want, -1) || want.code != 0 || want.out == "" {
		t.Errorf("the service account's query pods -A differs from the admin's query of namespace %s\n%s", readerNamespace, diff("admin", want, "service account", got))
	}
	pods, err := cluster.Client.CoreV1().Pods(readerNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, "pod/"+p.Name)
	}
	slices.Sort(names)
	r := s.query(t, kubeconfig, "pods", "-A", "-o", "name")
	printed := framework.Lines(r.out)
	slices.Sort(printed)
	if r.code != 0 || r.errOut != "" || len(names) == 0 || !slices.Equal(printed, names) {
		t.Errorf("query pods -A -o name: exit %d, stderr %q, printed %v; want the %d pods of %s: %v", r.code, r.errOut, printed, len(names), readerNamespace, names)
	}
	if r := s.query(t, kubeconfig, "pods", "-A", "--count"); r.code != 0 || r.out != strconv.Itoa(len(names))+"\n" {
		t.Errorf("query pods -A --count: exit %d, printed %q; want %d", r.code, r.out, len(names))
	}
	if r, want := s.query(t, kubeconfig, "pods", "-n", readerNamespace, "-o", "name"), localQuery(t, "pods", "-n", readerNamespace, "-o", "name"); r != want {
		t.Errorf("query pods -n %s differs from the admin's\n%s", readerNamespace, diff("admin", want, "service account", r))
	}

	forbidden := []struct {
		args []string
		msg  string
	}{
		{[]string{"nodes"}, `nodes is forbidden: User "` + user + `" cannot list resource "nodes" in API group "" at the cluster scope`},
		{[]string{"pods", "-n", "payments"}, `pods is forbidden: User "` + user + `" cannot list resource "pods" in API group "" in the namespace "payments"`},
		{[]string{"deployments", "-A"}, `deployments.apps is forbidden: User "` + user + `" cannot list resource "deployments" in API group "apps" at the cluster scope, nor in any namespace that holds some`},
		// The query reads nodes through get().
		{[]string{"pods", "-A", "--where", zoneWhere}, `nodes is forbidden: User "` + user + `" cannot list resource "nodes" in API group "" at the cluster scope (read by get("nodes", …) in --where)`},
		{[]string{"pods", "-n", readerNamespace, "--where", zoneWhere}, `nodes is forbidden: User "` + user + `" cannot list resource "nodes" in API group "" at the cluster scope (read by get("nodes", …) in --where)`},
	}
	for _, f := range forbidden {
		r := s.query(t, kubeconfig, f.args...)
		if r.code != app.ExitRuntime || r.out != "" || !strings.HasPrefix(r.errOut, "error: Error from the query server (Forbidden): ") || !strings.Contains(r.errOut, f.msg) {
			t.Errorf("query %s as %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(f.args, " "), user, r.code, r.out, r.errOut, f.msg)
		}
	}
}

// testNoRBAC checks a user authenticated with a client certificate and
// granted nothing.
func testNoRBAC(t *testing.T, s *server) {
	kubeconfig, _, err := cluster.AddUser("e2e-serve-no-rbac")
	if err != nil {
		t.Fatal(err)
	}
	r := s.query(t, kubeconfig, "pods", "-A")
	want := `error: Error from the query server (Forbidden): pods is forbidden: User "e2e-serve-no-rbac" cannot list resource "pods" in API group "" at the cluster scope, nor in any namespace that holds some` + "\n"
	if r.code != app.ExitRuntime || r.out != "" || r.errOut != want {
		t.Errorf("query pods -A: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.out, r.errOut, want)
	}
	r = s.query(t, kubeconfig, "nodes", "--count")
	if r.code != app.ExitRuntime || r.out != "" || !strings.Contains(r.errOut, `nodes is forbidden: User "e2e-serve-no-rbac"`) {
		t.Errorf("query nodes --count: exit %d, stdout %q, stderr %q; want forbidden", r.code, r.out, r.errOut)
	}
}

// testInvalidToken checks a bearer token the API server does not know.
func testInvalidToken(t *testing.T, s *server) {
	kubeconfig := cluster.TokenKubeconfig(t, "invalid", "not-a-token")
	r := s.query(t, kubeconfig, "pods", "-A")
	if r.code != app.ExitRuntime || r.out != "" || !strings.Contains(r.errOut, "401 Unauthorized") {
		t.Errorf("query with an invalid token: exit %d, stdout %q, stderr %q; want exit 1 and 401 Unauthorized", r.code, r.out, r.errOut)
	}
}

// testNoCredentials checks requests that present no credentials at all.
func testNoCredentials(t *testing.T, s *server) {
	hc := s.anonymousClient(t)
	defer hc.CloseIdleConnections()
	code, body := s.post(t, hc, strings.NewReader(`{"resources":["pods"]}`))
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("the 401's body is not a Status: %v\n%s", err, body)
	}
	if code != http.StatusUnauthorized || st.Kind != "Status" || st.Status != metav1.StatusFailure ||
		st.Code != http.StatusUnauthorized || st.Reason != metav1.StatusReasonUnauthorized || st.Message == "" {
		t.Errorf("POST without credentials: %d %s; want 401 and an Unauthorized Status", code, body)
	}
	// GET is not a query: refused before authentication.
	resp, err := hc.Get(s.url + "/v1/query")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET /v1/query: %s, Allow %q; want 405 and Allow: POST", resp.Status, resp.Header.Get("Allow"))
	}
	// Health needs no credentials.
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := hc.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without credentials: %s, want 200", path, resp.Status)
		}
	}
}

// sameAnswer tells whether two runs of a query printed the same, but for
// the ages in tables: an age is computed from the clock when each prints,
// and a second may pass between the two. For a table printed with
// --no-headers, noHeaders is the AGE column's position; else it is -1.
func sameAnswer(a, b result, noHeaders int) bool {
	if a.code != b.code || a.errOut != b.errOut {
		return false
	}
	if a.out == b.out {
		return true
	}
	if noHeaders < 0 && !strings.Contains(a.out, "AGE") {
		return false
	}
	ra, _ := framework.AgelessTable(a.out, noHeaders)
	rb, _ := framework.AgelessTable(b.out, noHeaders)
	return slices.EqualFunc(ra, rb, slices.Equal)
}

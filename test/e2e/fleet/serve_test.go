package fleet_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// fleetServer is "kubectl informer serve" over the three clusters and an
// unreachable context, gone: east is the home cluster.
type fleetServer struct {
	run      *framework.Run
	url, ca  string
	kubefile string
}

// startFleetServer starts the server and returns once it serves.
func startFleetServer(t *testing.T) *fleetServer {
	t.Helper()
	path := kubeconfigWith(t, "gone")
	addr := framework.ClosedPort(t)
	certDir := t.TempDir()
	s := &fleetServer{
		run: clusters[0].StartPlugin(t, "serve", "pods,nodes,databases", "-A", "--kubeconfig", path,
			"--context", "east,west,north,gone", "--listen-address", addr, "--cert-dir", certDir),
		url:      "https://" + addr,
		ca:       filepath.Join(certDir, queryserver.SelfSignedCertFile),
		kubefile: path,
	}
	framework.Eventually(t, "the server logs that it serves queries", func() bool {
		return strings.Contains(s.run.ErrOut.String(), `msg="serving queries"`)
	})
	return s
}

// query runs "kubectl informer query ARGS --query-server URL" with kubeconfig's
// current context as the caller.
func (s *fleetServer) query(t *testing.T, kubeconfig string, args ...string) (int, string, string) {
	t.Helper()
	args = append([]string{"query", "--kubeconfig", kubeconfig}, args...)
	return run(t, append(args, "--query-server", s.url, "--server-ca", s.ca)...)
}

// TestServeFleet runs one query server over three clusters, and a fourth
// context it cannot reach, and checks what a cluster-admin of the home
// cluster and a user who may only list its pods get.
func TestServeFleet(t *testing.T) {
	s := startFleetServer(t)
	log := s.run.ErrOut.String()
	for _, want := range []string{
		`warning: cluster "north" has no resource type "databases"`,
		`warning: this server could not fill its caches of cluster "gone"`,
		"home=east clusters=east,west,north unserved=gone",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the server's log lacks %q:\n%s", want, log)
		}
	}
	t.Run("Admin", func(t *testing.T) { testServeFleetAdmin(t, s) })
	t.Run("Reader", func(t *testing.T) { testServeFleetReader(t, s) })
	t.Run("Mistakes", func(t *testing.T) { testServeFleetMistakes(t, s) })
	if code := s.run.Stop(t); code != 0 {
		t.Fatalf("serve exited %d when stopped, want 0\nstderr:\n%s", code, s.run.ErrOut)
	}
}

// testServeFleetAdmin: the admin of east gets, over the clusters it names,
// what the same query over the same contexts prints from local caches:
// standard output, standard error and exit code; over all of them, the
// answer of the three and a partial answer for gone.
func testServeFleetAdmin(t *testing.T, s *fleetServer) {
	kubeconfig := fleetKubeconfig(t)
	cases := [][]string{
		{"pods", "-A", "-o", "name"},
		{"pods", "-A", "--count"},
		{"pods", "-A", "--group-by", "cluster + \"/\" + object.status.phase"},
		{"pods", "-A", "--group-by", "object.metadata.namespace", "--aggregate", "n=count()",
			"--aggregate", "mean=avg(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())", "--sort-by", "-mean", "--limit", "2"},
		{"pods", "-A", "--sort-by", "object.metadata.name", "--limit", "7", "-o", "json"},
		{"pods", "-A", "--where", `cluster != "east" && object.status.phase == "Running"`, "-o", "name"},
		// get() reads the node of the pod's own cluster: the clusters
		// have 2, 4 and 3 nodes.
		{"pods", "-A", "--where", `has(object.spec.nodeName) && get("nodes", object.spec.nodeName).metadata.name != ""`, "--group-by", "cluster"},
		{"databases", "-A", "-o", "name"},
		// A table, compared without its AGE cells: the two commands
		// print a second apart at times.
		{"nodes", "--columns", "NAME=object.metadata.name"},
	}
	for _, args := range cases {
		for _, contexts := range []string{"east,west,north", "north,west", "west"} {
			name := strings.Join(args, " ") + " @" + contexts
			local := append(append([]string{"query"}, args...), "--context", contexts)
			wantCode, wantOut, wantErr := run(t, local...)
			code, out, errOut := s.query(t, kubeconfig, append(slices.Clone(args), "--server-clusters", contexts)...)
			same := out == wantOut
			if args[0] == "nodes" {
				got, _ := framework.AgelessTable(out, -1)
				want, _ := framework.AgelessTable(wantOut, -1)
				same = len(got) > 0 && fmt.Sprint(got) == fmt.Sprint(want)
			}
			if code != wantCode || !same || errOut != wantErr {
				t.Errorf("%s: the server answered (exit %d)\n%s%s\nwant, as locally (exit %d):\n%s%s", name, code, out, errOut, wantCode, wantOut, wantErr)
			}
		}
	}
	// All: the three clusters, and gone named in a warning, exit 3.
	code, out, errOut := s.query(t, kubeconfig, "pods", "-A", "--server-all-clusters", "--group-by", "cluster")
	want := fmt.Sprintf("east %d\nnorth %d\nwest %d", len(pods(t, 0)), len(pods(t, 2)), len(pods(t, 1)))
	if got := groups(out); got != want {
		t.Errorf("--server-all-clusters --group-by cluster: %q, want %q", got, want)
	}
	if code != 3 || !strings.Contains(errOut, `warning: cluster "gone": this server could not fill its caches`) ||
		!strings.Contains(errOut, "1 of 4 clusters did not answer") {
		t.Errorf("--server-all-clusters: exit %d, want 3 and a warning naming gone\n%s", code, errOut)
	}
	// Only the unserved cluster: refused, exit 1.
	code, _, errOut = s.query(t, kubeconfig, "pods", "-A", "--server-clusters", "gone")
	if code != 1 || !strings.Contains(errOut, "503") || !strings.Contains(errOut, `could not fill its caches of cluster "gone"`) {
		t.Errorf("--server-clusters gone: exit %d, want 1 and 503\n%s", code, errOut)
	}
}

// groups returns the rows of a --group-by answer as "KEY COUNT" lines,
// sorted: the answer orders them by count.
func groups(out string) string {
	var lines []string
	for _, r := range rows(out) {
		lines = append(lines, strings.Join(r, " "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// testServeFleetReader: a user whom east allows to list pods only reads
// east's: the other clusters are forbidden, named in a warning when the
// query reads east too (exit 3), refused when it reads only them.
func testServeFleetReader(t *testing.T, s *fleetServer) {
	kubeconfig, _ := clusters[0].AddUserAllowed(t, "fleet-reader",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "get"}})
	east := strconv.Itoa(len(pods(t, 0)))
	framework.Eventually(t, "the reader may list east's pods through the server", func() bool {
		code, out, _ := s.query(t, kubeconfig, "pods", "-A", "--count")
		return code == 0 && strings.TrimSpace(out) == east
	})
	code, out, errOut := s.query(t, kubeconfig, "pods", "-A", "--count", "--server-clusters", "east,west")
	if code != 3 || strings.TrimSpace(out) != east {
		t.Errorf("east,west: exit %d, count %q; want 3 and east's %s\n%s", code, out, east, errOut)
	}
	for _, want := range []string{`warning: cluster "west": forbidden: the caller may read`, "cluster-admin", "1 of 2 clusters did not answer"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("east,west: stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, errOut = s.query(t, kubeconfig, "pods", "-A", "--count", "--server-clusters", "west,north")
	if code != 1 || out != "" || !strings.Contains(errOut, "Forbidden") || !strings.Contains(errOut, `User "fleet-reader"`) {
		t.Errorf("west,north: exit %d, out %q; want 1, nothing and Forbidden naming the user\n%s", code, out, errOut)
	}
	// Nodes of east: not listed by its RBAC, as with one cluster.
	code, _, errOut = s.query(t, kubeconfig, "nodes")
	if code != 1 || !strings.Contains(errOut, "Forbidden") {
		t.Errorf("nodes: exit %d, want 1 and Forbidden\n%s", code, errOut)
	}
}

// testServeFleetMistakes: clusters the server does not hold, and the
// flags that choose them, given wrong.
func testServeFleetMistakes(t *testing.T, s *fleetServer) {
	kubeconfig := fleetKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--server-clusters", "east,south"}, `this server serves no cluster "south"; it serves east, west, north, gone`},
		{[]string{"--server-clusters", "east", "--server-all-clusters"}, "give one of them"},
	} {
		code, _, errOut := s.query(t, kubeconfig, append([]string{"pods", "-A"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--context", "east,west", "--home-context", "north"}, `--home-context "north" is not among the contexts served`},
		{[]string{"--home-context", "east"}, "--home-context chooses among several contexts"},
		{[]string{"--all-contexts", "--context-selector", "^(west|north)$"}, `the current context "east" is not among the contexts selected`},
	} {
		code, _, errOut := run(t, append([]string{"serve", "pods", "-A"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("serve %v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

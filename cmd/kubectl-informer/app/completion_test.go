package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// kubeconfig writes a kubeconfig whose contexts all point at server.
func kubeconfig(t *testing.T, server string) string {
	t.Helper()
	const text = `apiVersion: v1
kind: Config
clusters:
- name: alpha-cluster
  cluster: {server: %[1]s}
- name: beta-cluster
  cluster: {server: %[1]s}
users:
- name: alice
  user: {token: a}
- name: bob
  user: {token: b}
contexts:
- name: alpha
  context: {cluster: alpha-cluster, user: alice}
- name: alpha-admin
  context: {cluster: alpha-cluster, user: bob}
- name: beta
  context: {cluster: beta-cluster, user: bob}
current-context: alpha
`
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(text, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Discovery caches stay out of the home directory.
	t.Setenv("KUBECACHEDIR", t.TempDir())
	return p
}

// closedServer returns a loopback URL where nothing listens.
func closedServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "https://" + addr
}

// silentServer returns a loopback URL that accepts connections and never
// answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// complete runs "kubectl-informer __complete ARGS" and returns the choices
// and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errOut := run(append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %q: exit %d\n%s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestStaticCompletions(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(cfg, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods:
    byImage: object.spec.containers.map(c, c.image)
    byNode: object.spec.?nodeName.orValue(null)
  nodes:
    byZone: object.metadata.labels["topology.kubernetes.io/zone"]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfig(t, closedServer(t))
	tests := []struct {
		name      string
		args      []string
		want      []string // exactly, in order; nil: see contains
		contains  []string
		directive string
	}{
		{name: "verbs", args: []string{""}, contains: []string{
			"completion\tPrint the shell completion script of kubectl-informer",
			"query\tAnswer a query from informer caches, with CEL filters and indexes",
			"watch\t", "indexes\t", "export\t", "version\t"}, directive: ":4"},
		{name: "shells", args: []string{"completion", ""}, want: []string{"bash", "zsh", "fish", "powershell"}, directive: ":4"},
		{name: "query -o", args: []string{"query", "pods", "-o", ""}, contains: []string{"json", "yaml", "wide", "name", "jsonpath", "custom-columns"}, directive: ":4"},
		{name: "query --output=", args: []string{"query", "pods", "--output="}, contains: []string{"json", "wide"}, directive: ":4"},
		{name: "watch -o", args: []string{"watch", "pods", "-o", ""}, want: []string{"json"}, directive: ":4"},
		{name: "version -o", args: []string{"version", "-o", ""}, want: []string{"json", "yaml"}, directive: ":4"},
		{name: "version arguments", args: []string{"version", ""}, want: []string{}, directive: ":4"},
		{name: "export --log.format", args: []string{"export", "--log.format", ""}, want: []string{"logfmt", "json"}, directive: ":4"},
		{name: "export --config", args: []string{"export", "--config", ""}, want: []string{"yaml", "yml"}, directive: ":8"},
		{name: "export --web.config.file", args: []string{"export", "--web.config.file", ""}, want: []string{"yaml", "yml"}, directive: ":8"},
		{name: "query --config", args: []string{"query", "--config", ""}, want: []string{"yaml", "yml"}, directive: ":8"},
		{name: "indexes --config", args: []string{"indexes", "--config", ""}, want: []string{"yaml", "yml"}, directive: ":8"},
		{name: "query --where", args: []string{"query", "pods", "--where", ""}, want: []string{}, directive: ":4"},
		{name: "watch --columns", args: []string{"watch", "pods", "--columns", ""}, want: []string{}, directive: ":4"},
		{name: "--by from --index", args: []string{"query", "pods", "--config", cfg, "--index", "byOwner=object.metadata.ownerReferences.map(r, r.name)", "--by", ""},
			want: []string{
				"byImage=\tobject.spec.containers.map(c, c.image)",
				"byNode=\tobject.spec.?nodeName.orValue(null)",
				"byOwner=\tobject.metadata.ownerReferences.map(r, r.name)",
				"namespace=\tbuilt in"},
			directive: ":6"},
		{name: "--by prefix", args: []string{"query", "pods", "--config", cfg, "--by", "byN"}, want: []string{"byNode=\tobject.spec.?nodeName.orValue(null)"}, directive: ":6"},
		{name: "--by of another resource", args: []string{"query", "nodes", "--config", cfg, "--by", ""},
			want: []string{"byZone=\tobject.metadata.labels[\"topology.kubernetes.io/zone\"]", "namespace=\tbuilt in"}, directive: ":6"},
		{name: "--by before any resource", args: []string{"query", "--config", cfg, "--by", "by"},
			want: []string{"byImage=\tobject.spec.containers.map(c, c.image)", "byNode=\tobject.spec.?nodeName.orValue(null)", "byZone=\tobject.metadata.labels[\"topology.kubernetes.io/zone\"]"}, directive: ":6"},
		{name: "--index wins over the config", args: []string{"query", "pods", "--config", cfg, "--index", "byNode=object.spec.nodeName", "--by", "byNode"},
			want: []string{"byNode=\tobject.spec.nodeName"}, directive: ":6"},
		{name: "--index-columns", args: []string{"query", "pods", "--config", cfg, "--index-columns", "byI"},
			want: []string{"byImage\tobject.spec.containers.map(c, c.image)"}, directive: ":4"},
		{name: "--index-columns after a comma", args: []string{"query", "pods", "--config", cfg, "--index-columns", "byImage,byN"},
			want: []string{"byImage,byNode\tobject.spec.?nodeName.orValue(null)"}, directive: ":4"},
		{name: "--by value", args: []string{"query", "pods", "--by", "byNode="}, want: []string{}, directive: ":4"},
		{name: "--context", args: []string{"query", "--kubeconfig", kc, "--context", ""}, want: []string{"alpha", "alpha-admin", "beta"}, directive: ":4"},
		{name: "--context prefix", args: []string{"watch", "--kubeconfig", kc, "--context", "alpha-"}, want: []string{"alpha-admin"}, directive: ":4"},
		{name: "--cluster", args: []string{"indexes", "--kubeconfig", kc, "--cluster", ""}, want: []string{"alpha-cluster", "beta-cluster"}, directive: ":4"},
		{name: "--user", args: []string{"export", "--kubeconfig", kc, "--user", "b"}, want: []string{"bob"}, directive: ":4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive := complete(t, tt.args...)
			if directive != tt.directive {
				t.Errorf("directive %s, want %s", directive, tt.directive)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			for _, c := range tt.contains {
				if !containsPrefix(got, c) {
					t.Errorf("got %q, want a choice starting with %q", got, c)
				}
			}
		})
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestClusterCompletionsFailQuietly asks an unreachable cluster and one that
// never answers: no choices, no files, and no longer than the bound.
func TestClusterCompletionsFailQuietly(t *testing.T) {
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 300 * time.Millisecond
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexes:\n  pods:\n    byNode: object.spec.nodeName\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, server := range []struct{ name, url string }{{"closed", closedServer(t)}, {"silent", silentServer(t)}} {
		kc := kubeconfig(t, server.url)
		for _, args := range [][]string{
			{"query", "--kubeconfig", kc, "po"},
			{"watch", "--kubeconfig", kc, "pods,"},
			{"indexes", "--kubeconfig", kc, ""},
			{"query", "--kubeconfig", kc, "pods", "-n", ""},
			{"export", "--kubeconfig", kc, "--namespace", "d"},
			// "po" is "pods" only to the cluster: the config's index is not offered.
			{"query", "--kubeconfig", kc, "po", "--index", "x=object.kind", "--config", cfg, "--by", ""},
		} {
			start := time.Now()
			got, directive := complete(t, args...)
			took := time.Since(start)
			if args[len(args)-2] == "--by" {
				// What needs no cluster is still offered.
				if want := []string{"namespace=\tbuilt in", "x=\tobject.kind"}; !reflect.DeepEqual(got, want) || directive != ":6" {
					t.Errorf("%s: %q: got %q %s, want %q :6", server.name, args, got, directive, want)
				}
			} else if len(got) != 0 || directive != ":4" {
				t.Errorf("%s: %q: got %q %s, want nothing and :4", server.name, args, got, directive)
			}
			// Without the bound, client-go's request timeout (32s) would
			// end the wait for the silent server; the margin to it is a
			// hundred times the bound, for a busy machine.
			if took >= 30*time.Second {
				t.Errorf("%s: %q took %v: the bound %v did not end the wait", server.name, args, took, completionTimeout)
			}
		}
	}
}

func TestResourceCompletions(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", ShortNames: []string{"po"}, Verbs: []string{"get", "list", "watch"}},
			{Name: "pods/log", Kind: "Pod", Verbs: []string{"get"}},
			{Name: "podtemplates", Kind: "PodTemplate", Verbs: []string{"list", "watch"}},
			{Name: "bindings", Kind: "Binding", Verbs: []string{"create"}},
			{Name: "events", Kind: "Event", ShortNames: []string{"ev"}, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Kind: "Event", ShortNames: []string{"ev"}, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "policy/v1", APIResources: []metav1.APIResource{
			{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", ShortNames: []string{"pdb"}, Verbs: []string{"list", "watch"}},
		}},
	}
	tests := []struct {
		prefix, toComplete string
		named              []string
		want               []string
	}{
		{"", "po", nil, []string{
			"po\tPod (v1)",
			"poddisruptionbudgets\tPodDisruptionBudget (policy/v1)",
			"poddisruptionbudgets.policy\tPodDisruptionBudget (policy/v1)",
			"pods\tPod (v1)",
			"podtemplates\tPodTemplate (v1)",
		}},
		{"", "dep", nil, []string{"deploy\tDeployment (apps/v1)", "deployments\tDeployment (apps/v1)", "deployments.apps\tDeployment (apps/v1)"}},
		{"", "ev", nil, []string{"ev\tEvent (v1)", "events\tEvent (v1)", "events.events.k8s.io\tEvent (events.k8s.io/v1)"}},
		{"pods,", "po", []string{"pods"}, []string{
			"pods,po",
			"pods,poddisruptionbudgets",
			"pods,poddisruptionbudgets.policy",
			"pods,podtemplates",
		}},
		{"", "bin", nil, nil},
	}
	for _, tt := range tests {
		got := resourceCompletions(lists, tt.prefix, tt.toComplete, sets.New(tt.named...))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q%q: got %q, want %q", tt.prefix, tt.toComplete, got, tt.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range shells {
		code, out, errOut := run("completion", shell)
		if code != ExitOK || !strings.Contains(out, "kubectl-informer") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, stderr %q; script:\n%.300s", shell, code, errOut, out)
		}
	}
	_, withDesc, _ := run("completion", "fish")
	_, noDesc, _ := run("completion", "fish", "--no-descriptions")
	if withDesc == noDesc || !strings.Contains(noDesc, "__completeNoDesc") {
		t.Error("completion fish --no-descriptions writes the same script")
	}
	if code, _, errOut := run("completion", "tcsh"); code != ExitUsage || !strings.Contains(errOut, `unknown shell "tcsh": want one of bash, zsh, fish, powershell`) {
		t.Errorf("completion tcsh: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := run("completion"); code != ExitUsage {
		t.Errorf("completion without a shell: exit %d, want %d", code, ExitUsage)
	}
}

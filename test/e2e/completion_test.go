package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// The namespace and the CRD the completion tests expect to be offered.
const (
	completionNamespace = "completion-e2e"
	potionGroup         = "e2e.kubectl-informer.io"
	potionDesc          = "Potion (" + potionGroup + "/v1)"
)

// completionFixtures creates the namespace and the CRD potions (short name
// "pot", so that "po" completes it next to pods) unless they exist, and
// waits until discovery serves the CRD.
func completionFixtures(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: completionNamespace}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "potions." + potionGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: potionGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "potions", Singular: "potion", Kind: "Potion", ListKind: "PotionList", ShortNames: []string{"pot"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, framework.HangTimeout, true, func(context.Context) (bool, error) {
		list, err := cluster.Client.Discovery().ServerResourcesForGroupVersion(potionGroup + "/v1")
		if err != nil {
			return false, nil
		}
		return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "potions" }), nil
	})
	if err != nil {
		t.Fatalf("discovery does not serve potions: %v", err)
	}
}

// completer runs a command of the release with bin first on PATH and a
// discovery cache of its own, and returns the choices it prints and its
// directive line.
type completer struct {
	t   *testing.T
	env []string
	// standIn is set once the stand-in for bash-completion was logged.
	standIn bool
}

func newCompleter(t *testing.T, bin string) *completer {
	return &completer{t: t, env: append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECACHEDIR="+t.TempDir())}
}

func (c *completer) run(name string, args ...string) ([]string, string) {
	c.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("%s %q: %v\n%s", name, args, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func wantChoices(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: %q is not offered; got %q", what, w, got)
		}
	}
}

// TestCompletionAgainstCluster completes with the released binary against
// the control plane: resource types from discovery (with a CRD created
// here), comma lists, namespaces, and --by names of a config resource named
// otherwise than on the command line.
func TestCompletionAgainstCluster(t *testing.T) {
	_, bin := hostRelease(t)
	completionFixtures(t)
	c := newCompleter(t, bin)
	plugin := filepath.Join(bin, exeName("kubectl-informer"))

	got, directive := c.run(plugin, "__complete", "query", "po")
	wantChoices(t, "query po", got,
		"pods\tPod (v1)", "po\tPod (v1)",
		"pot\t"+potionDesc, "potions\t"+potionDesc, "potions."+potionGroup+"\t"+potionDesc)
	if directive != ":4" {
		t.Errorf("query po: directive %s, want :4 (no files)", directive)
	}
	for _, g := range got {
		if !strings.HasPrefix(g, "po") {
			t.Errorf("query po: %q does not start with po", g)
		}
	}

	got, _ = c.run(plugin, "__complete", "watch", "pods,dep")
	// After a comma without descriptions, which bash could not match (see TestCompletionInBash).
	wantChoices(t, "watch pods,dep", got, "pods,deployments.apps", "pods,deploy")

	got, _ = c.run(plugin, "__complete", "indexes", "pods", "pot")
	wantChoices(t, "indexes pods pot", got, "pot\t"+potionDesc, "potions\t"+potionDesc)

	got, directive = c.run(plugin, "__complete", "query", "pods", "-n", "completion-")
	if !slices.Equal(got, []string{completionNamespace}) || directive != ":4" {
		t.Errorf("-n completion-: got %q %s, want %q :4", got, directive, completionNamespace)
	}
	got, _ = c.run(plugin, "__complete", "watch", "pods", "--namespace", "")
	wantChoices(t, "--namespace", got, completionNamespace, "default", "kube-system")

	// Forbidden: nothing, without an error.
	got, directive = c.run(plugin, "__complete", "query", "pods", "--kubeconfig", cluster.UnprivilegedKubeconfig, "-n", "")
	if len(got) != 0 || directive != ":4" {
		t.Errorf("-n as the unprivileged user: got %q %s, want nothing", got, directive)
	}

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(cfg, []byte("apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexes:\n  potions:\n    byColour: object.spec.colour\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	got, directive = c.run(plugin, "__complete", "query", "pot", "--config", cfg, "--by", "")
	if want := []string{"byColour=\tobject.spec.colour", "namespace=\tbuilt in"}; !slices.Equal(got, want) || directive != ":6" {
		t.Errorf("query pot --by: got %q %s, want %q :6", got, directive, want)
	}
	got, _ = c.run(plugin, "__complete", "query", "pods", "--config", cfg, "--by", "")
	if !slices.Equal(got, []string{"namespace=\tbuilt in"}) {
		t.Errorf("query pods --by: got %q, want only the namespace index", got)
	}
}

// TestCompletionThroughKubectl completes "kubectl informer ..." with the
// built kubectl, which runs kubectl_complete-informer from the release on
// PATH.
func TestCompletionThroughKubectl(t *testing.T) {
	_, bin := hostRelease(t)
	if runtime.GOOS == "windows" {
		t.Skip("kubectl_complete-informer.cmd is not run here")
	}
	completionFixtures(t)
	c := newCompleter(t, bin)
	kubectl := filepath.Join(cluster.BinDir, "kubectl")

	got, _ := c.run(kubectl, "__complete", "informer", "")
	wantChoices(t, "kubectl informer", got, "query\tAnswer a query from informer caches, with CEL filters and indexes", "completion\tPrint the shell completion script of kubectl-informer")

	got, directive := c.run(kubectl, "__complete", "informer", "query", "po")
	wantChoices(t, "kubectl informer query po", got, "pods\tPod (v1)", "pot\t"+potionDesc)
	if directive != ":4" {
		t.Errorf("kubectl informer query po: directive %s, want :4", directive)
	}

	got, _ = c.run(kubectl, "__complete", "informer", "query", "pods", "-n", "completion-")
	if !slices.Equal(got, []string{completionNamespace}) {
		t.Errorf("kubectl informer query pods -n completion-: got %q", got)
	}
}

// bashDriver calls a bash completion function as bash does on Tab, with
// the script sourced, and prints COMPREPLY, one choice a line. It uses
// bash-completion's _get_comp_words_by_ref where the package is installed,
// and otherwise a stand-in that takes COMP_WORDS as bash split them: the
// two differ only for words holding "=" or ":", and the words completed
// here hold neither.
const bashDriver = `
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
    . /usr/share/bash-completion/bash_completion
fi
if ! declare -F _get_comp_words_by_ref >/dev/null; then
    echo "no bash-completion: a stand-in _get_comp_words_by_ref" >&2
    _get_comp_words_by_ref() {
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    }
fi
. "$1"
fn=$2
shift 2
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
COMP_KEY=9
COLUMNS=200
COMPREPLY=()
"$fn"
for c in "${COMPREPLY[@]}"; do
    printf '%s\n' "$c"
done
`

// bashComplete completes the last of words with the completion function fn
// of script, in bash, and returns COMPREPLY.
func (c *completer) bashComplete(script, fn string, words ...string) []string {
	c.t.Helper()
	f := filepath.Join(c.t.TempDir(), "completion.bash")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{"--norc", "--noprofile", "-c", bashDriver, "bash", f, fn}, words...)...)
	cmd.Env = c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("bash completing %q: %v\n%s", words, err, errOut.String())
	}
	if strings.Contains(errOut.String(), "no bash-completion") && !c.standIn {
		c.standIn = true
		c.t.Log("bash-completion is not installed: _get_comp_words_by_ref is a stand-in")
	}
	if out.Len() == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// bashWord returns the argument bash passes for word as written on the
// command line (with its quoting).
func (c *completer) bashWord(word string) string {
	c.t.Helper()
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", "printf %s "+word).Output()
	if err != nil {
		c.t.Fatalf("bash printf %s: %v", word, err)
	}
	return string(out)
}

// TestCompletionInBash presses Tab in bash with the scripts of
// "kubectl-informer completion bash" and of "kubectl completion bash"
// (which asks kubectl_complete-informer): a resource after a comma is
// completed, and a single choice is written so that bash passes it as the
// completed list. zsh and fish are not installed where the tests run: only
// bash is tested.
func TestCompletionInBash(t *testing.T) {
	_, bin := hostRelease(t)
	if runtime.GOOS == "windows" {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is not on PATH: %v", err)
	}
	completionFixtures(t)
	c := newCompleter(t, bin)
	plugin := filepath.Join(bin, exeName("kubectl-informer"))
	kubectl := filepath.Join(cluster.BinDir, "kubectl")
	script := func(name string) string {
		cmd := exec.Command(name, "completion", "bash")
		cmd.Env = c.env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s completion bash: %v", name, err)
		}
		return string(out)
	}
	for _, tc := range []struct {
		name, script, fn string
		words            []string
	}{
		{"kubectl-informer", script(plugin), "__start_kubectl-informer", []string{"kubectl-informer", "query"}},
		{"kubectl informer", script(kubectl), "__start_kubectl", []string{"kubectl", "informer", "query"}},
	} {
		words := func(w ...string) []string { return append(slices.Clone(tc.words), w...) }
		got := c.bashComplete(tc.script, tc.fn, words("po,de")...)
		wantChoices(t, tc.name+" query po,de", got, "po,deploy", "po,deployments", "po,deployments.apps")
		for _, g := range got {
			if !strings.HasPrefix(g, "po,de") {
				t.Errorf("%s query po,de: %q offered", tc.name, g)
			}
		}
		got = c.bashComplete(tc.script, tc.fn, words("po,deployments.a")...)
		if len(got) != 1 || c.bashWord(got[0]) != "po,deployments.apps" {
			t.Errorf("%s query po,deployments.a: COMPREPLY %q, want the one word po,deployments.apps", tc.name, got)
		}
		// Without a comma the choices keep their descriptions.
		got = c.bashComplete(tc.script, tc.fn, words("potions.e")...)
		if !slices.Equal(got, []string{"potions." + potionGroup}) {
			t.Errorf("%s query potions.e: COMPREPLY %q, want potions.%s", tc.name, got, potionGroup)
		}
		got = c.bashComplete(tc.script, tc.fn, words("pot")...)
		if !slices.ContainsFunc(got, func(g string) bool {
			return strings.HasPrefix(g, "pot ") && strings.HasSuffix(g, " ("+potionDesc+")")
		}) {
			t.Errorf("%s query pot: COMPREPLY %q, want pot with its description", tc.name, got)
		}
	}
}

// TestCompletionObjectNames completes object names as kubectl get does:
// after a type, after TYPE/, after TYPE/NAME (the types with a slash), in
// the namespace of -n or --namespace or of the --context of the
// --kubeconfig given. Each answer is byte-compared with kubectl's
// "__complete get" of the same arguments.
func TestCompletionObjectNames(t *testing.T) {
	_, bin := hostRelease(t)
	c := newCompleter(t, bin)
	plugin := filepath.Join(bin, exeName("kubectl-informer"))
	kubectl := filepath.Join(cluster.BinDir, "kubectl")
	ctx := context.Background()

	ns := cluster.NewNamespace(t, "names")
	other := cluster.NewNamespace(t, "names-other")
	for _, name := range []string{"api-0", "api-1", "web-0"} {
		cluster.CreatePod(t, ns, name, nil)
	}
	for namespace, names := range map[string][]string{ns: {"api-cfg", "web-cfg"}, other: {"api-other"}} {
		for _, name := range names {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if _, err := cluster.Client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A kubeconfig whose context "other" has the namespace other.
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	current := *cfg.Contexts[cfg.CurrentContext]
	current.Namespace = other
	cfg.Contexts["other"] = &current
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// The names the API server lists in a namespace, starting with prefix.
	names := func(list func() ([]string, error), prefix string) []string {
		t.Helper()
		all, err := list()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	podNames := func(namespace string) func() ([]string, error) {
		return func() ([]string, error) {
			list, err := cluster.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
			var out []string
			for _, p := range list.Items {
				out = append(out, p.Name)
			}
			return out, err
		}
	}
	cmNames := func(namespace string) func() ([]string, error) {
		return func() ([]string, error) {
			list, err := cluster.Client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
			var out []string
			for _, cm := range list.Items {
				out = append(out, cm.Name)
			}
			return out, err
		}
	}
	withType := func(typ string, names []string) []string {
		var out []string
		for _, n := range names {
			out = append(out, typ+"/"+n)
		}
		return out
	}
	leaveOut := func(names []string, given string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == given })
	}

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"pods", "-n", ns, "api-"}, names(podNames(ns), "api-")},
		{[]string{"-n", ns, "pods/"}, withType("pods", names(podNames(ns), ""))},
		{[]string{"-n", ns, "po/w"}, withType("po", names(podNames(ns), "w"))},
		{[]string{"-n", ns, "pods,cm", ""}, append(names(podNames(ns), ""), names(cmNames(ns), "")...)},
		{[]string{"-n", ns, "pods", "api-0", ""}, leaveOut(names(podNames(ns), ""), "api-0")},
		{[]string{"-n", ns, "pods/api-0", "configmaps/"}, withType("configmaps", names(cmNames(ns), ""))},
		{[]string{"--namespace", other, "cm", "api"}, names(cmNames(other), "api")},
		{[]string{"--kubeconfig", kubeconfig, "--context", "other", "cm", ""}, names(cmNames(other), "")},
	} {
		what := "query " + strings.Join(tt.args, " ")
		got, directive := c.run(plugin, append([]string{"__complete", "query"}, tt.args...)...)
		if len(tt.want) == 0 || !slices.Equal(got, tt.want) || directive != ":4" {
			t.Errorf("%s: got %q %s, want %q :4", what, got, directive, tt.want)
		}
		kgot, kdirective := c.run(kubectl, append([]string{"__complete", "get"}, tt.args...)...)
		if !slices.Equal(got, kgot) || directive != kdirective {
			t.Errorf("%s: got %q %s, kubectl get completes %q %s", what, got, directive, kgot, kdirective)
		}
	}

	// After TYPE/NAME, the types follow with a slash, and no space.
	got, directive := c.run(plugin, "__complete", "query", "-n", ns, "pods/api-0", "configm")
	kgot, _ := c.run(kubectl, "__complete", "get", "-n", ns, "pods/api-0", "configm")
	if !slices.Equal(got, []string{"configmaps/"}) || !slices.Equal(got, kgot) || directive != ":6" {
		t.Errorf("query pods/api-0 configm: got %q %s, want %q :6 as kubectl's", got, directive, kgot)
	}
}

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
	wantChoices(t, "watch pods,dep", got, "pods,deployments.apps\tDeployment (apps/v1)", "pods,deploy\tDeployment (apps/v1)")

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

package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// printRBAC runs "kubectl informer export --config CONFIG --print-rbac
// ARGS" in process against the test cluster as the user of kubeconfig and
// returns what it printed. The command must exit 0 by itself, printing
// nothing on stderr: it starts no informer and serves nothing.
func printRBAC(t *testing.T, kubeconfig, config string, args ...string) string {
	t.Helper()
	return printRBACOf(t, kubeconfig, config, append([]string{"--config", config}, args...)...)
}

// printRBACOf is printRBAC with the flags that choose what is served
// (--config, --profile) in args; what names it in messages.
func printRBACOf(t *testing.T, kubeconfig, what string, args ...string) string {
	t.Helper()
	out, errOut := &framework.SyncBuffer{}, &framework.SyncBuffer{}
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}
	cmd := app.NewRootCommand(streams)
	cmd.SetArgs(append([]string{"export", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--print-rbac"}, args...))
	done := make(chan int, 1)
	go func() { done <- app.Execute(cmd, streams) }()
	select {
	case code := <-done:
		if code != app.ExitOK || errOut.String() != "" {
			t.Fatalf("export --print-rbac of %s: exit %d\nstderr:\n%s", what, code, errOut)
		}
	case <-time.After(framework.HangTimeout):
		t.Fatalf("export --print-rbac of %s did not exit within %s\nstdout:\n%s\nstderr:\n%s", what, framework.HangTimeout, out, errOut)
	}
	return out.String()
}

// rbacAccess is what a ServiceAccount may list and watch, as
// resource.group (the resource alone in the core group).
type rbacAccess struct {
	// everywhere: granted in every namespace (cluster-scoped resources
	// included) by the ClusterRole.
	everywhere []string
	// namespaces: granted in one namespace only by a Role there.
	namespaces map[string][]string
}

// in returns what the ServiceAccount may list and watch in namespace, as
// resource.group/verb, sorted.
func (a rbacAccess) in(namespace string) []string {
	var out []string
	for _, r := range append(slices.Clone(a.everywhere), a.namespaces[namespace]...) {
		out = append(out, r+"/list", r+"/watch")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkPrintedRBAC checks the objects --print-rbac printed: a ServiceAccount
// name in namespace, then the ClusterRole and its binding when anything is
// granted everywhere, then a Role and a RoleBinding per namespace, in the
// order of their namespaces; every rule grants exactly list and watch on
// the resources of one API group, sorted, and the rules are sorted by
// group; together they grant want.
func checkPrintedRBAC(t *testing.T, objs []*unstructured.Unstructured, name, namespace string, want rbacAccess) {
	t.Helper()
	wantKeys := []string{"ServiceAccount/" + namespace + "/" + name}
	if len(want.everywhere) > 0 {
		wantKeys = append(wantKeys, "ClusterRole//"+name, "ClusterRoleBinding//"+name)
	}
	for _, ns := range slices.Sorted(func(yield func(string) bool) {
		for ns := range want.namespaces {
			if !yield(ns) {
				return
			}
		}
	}) {
		wantKeys = append(wantKeys, "Role/"+ns+"/"+name, "RoleBinding/"+ns+"/"+name)
	}
	var gotKeys []string
	for _, u := range objs {
		gotKeys = append(gotKeys, key(u))
	}
	if !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("printed %q, want %q", gotKeys, wantKeys)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: namespace}}
	checkRules := func(what string, rules []rbacv1.PolicyRule, want []string) {
		t.Helper()
		var got, groups []string
		for _, r := range rules {
			if len(r.APIGroups) != 1 || !slices.Equal(r.Verbs, []string{"list", "watch"}) ||
				!slices.IsSorted(r.Resources) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
				t.Errorf("%s: rule %+v: want one API group, sorted resources and exactly the verbs list and watch", what, r)
				continue
			}
			groups = append(groups, r.APIGroups[0])
			for _, res := range r.Resources {
				got = append(got, qualified(res, r.APIGroups[0]))
			}
		}
		if !slices.IsSorted(groups) || len(slices.Compact(slices.Clone(groups))) != len(groups) {
			t.Errorf("%s: rules of the API groups %q: want one rule per group, sorted by group", what, groups)
		}
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
			t.Errorf("%s grants list and watch on %q, want %q", what, got, want)
		}
	}
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			fromUnstructured(t, u, &cr)
			checkRules("ClusterRole "+cr.Name, cr.Rules, want.everywhere)
		case "Role":
			var r rbacv1.Role
			fromUnstructured(t, u, &r)
			checkRules("Role "+r.Namespace+"/"+r.Name, r.Rules, want.namespaces[r.Namespace])
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			fromUnstructured(t, u, &b)
			if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}) || !reflect.DeepEqual(b.Subjects, subject) {
				t.Errorf("ClusterRoleBinding %s binds %+v to %+v, want the ClusterRole %s to %+v", b.Name, b.RoleRef, b.Subjects, name, subject)
			}
		case "RoleBinding":
			var b rbacv1.RoleBinding
			fromUnstructured(t, u, &b)
			if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}) || !reflect.DeepEqual(b.Subjects, subject) {
				t.Errorf("RoleBinding %s/%s binds %+v to %+v, want the Role %s to %+v", b.Namespace, b.Name, b.RoleRef, b.Subjects, name, subject)
			}
		}
	}
}

// applyRBAC applies RBAC manifests, those of --print-rbac or of
// deploy/serve: first in a server-side dry run, which must pass without a
// warning, then for real, until the test ends.
func applyRBAC(t *testing.T, manifests string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(file, []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := kubectl("apply", "--dry-run=server", "--validate=strict", "-f", file, "-o", "json")
	if err != nil || stderr != "" {
		t.Fatalf("kubectl apply --dry-run=server of the RBAC: %v\n%s", err, stderr)
	}
	admitted := 0
	check := func(u *unstructured.Unstructured) {
		admitted++
		if u.GetUID() == "" {
			t.Errorf("%s came back without a UID: not admitted by the server", key(u))
		}
	}
	for _, u := range decodeAll(t, []byte(out)) {
		if !u.IsList() {
			check(u)
			continue
		}
		if err := u.EachListItem(func(o runtime.Object) error {
			check(o.(*unstructured.Unstructured))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if want := len(decodeAll(t, []byte(manifests))); admitted != want {
		t.Errorf("the dry run returned %d objects, want %d", admitted, want)
	}
	if _, stderr, err := kubectl("apply", "--server-side", "--validate=strict", "-f", file); err != nil || stderr != "" {
		t.Fatalf("kubectl apply --server-side of the RBAC: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if _, stderr, err := kubectl("delete", "--ignore-not-found", "--wait=false", "-f", file); err != nil {
			t.Errorf("deleting the RBAC: %v\n%s", err, stderr)
		}
	})
}

// serviceAccountUser is the user name of a ServiceAccount.
func serviceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// impersonating returns a clientset acting as user; the API server adds a
// ServiceAccount's groups.
func impersonating(t *testing.T, user string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkGranted checks that client, acting as user, may do exactly want in
// namespace (as grantedIn lists it), waiting up to 30 seconds: the
// authorizer sees new roles and bindings a moment after they are written.
func checkGranted(t *testing.T, client kubernetes.Interface, user, namespace string, want []string) {
	t.Helper()
	var got []string
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		granted, err := grantedIn(ctx, client, namespace)
		if err != nil {
			lastErr = err
			return false, nil
		}
		got = granted
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Errorf("%s in namespace %s may %q, want %q (last error: %v)", user, namespace, got, want, lastErr)
	}
}

// grantedIn returns what the client's user may do on resources in
// namespace, as resource.group/verb, or resource.group[name]/verb for a rule
// restricted to resource names, sorted, leaving out what every
// authenticated user may do: create reviews of its own access.
func grantedIn(ctx context.Context, client kubernetes.Interface, namespace string) ([]string, error) {
	review, err := client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	if review.Status.Incomplete {
		return nil, fmt.Errorf("incomplete rules review: %s", review.Status.EvaluationError)
	}
	var out []string
	for _, r := range review.Status.ResourceRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if v == "create" && strings.HasPrefix(res, "selfsubject") {
						continue
					}
					if len(r.ResourceNames) > 0 {
						for _, name := range r.ResourceNames {
							out = append(out, qualified(res, g)+"["+name+"]/"+v)
						}
						continue
					}
					out = append(out, qualified(res, g)+"/"+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkAccess checks, once the applied RBAC has reached the API server's
// authorizer, that the ServiceAccount may do exactly what want says in each
// of namespaces (and in a namespace of its own it has no Role in), with a
// rules review, and with access reviews that it cannot get what it may
// list, nor list secrets, nor list outside their namespaces what its Roles
// grant.
func checkAccess(t *testing.T, user string, want rbacAccess, namespaces ...string) {
	t.Helper()
	client := impersonating(t, user)
	namespaces = append(namespaces, "default")
	for ns := range want.namespaces {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	for _, ns := range namespaces {
		checkGranted(t, client, user, ns, want.in(ns))
	}
	ctx := context.Background()

	allowed := func(verb, resource, namespace string) bool {
		t.Helper()
		res, group, _ := strings.Cut(resource, ".")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + strings.Split(user, ":")[2], "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: verb, Group: group, Resource: res, Namespace: namespace,
			},
		}}
		got, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Allowed
	}
	for _, verb := range []string{"list", "watch"} {
		for _, r := range want.everywhere {
			if !allowed(verb, r, "") {
				t.Errorf("%s may not %s %s in all namespaces", user, verb, r)
			}
		}
		for ns, rs := range want.namespaces {
			for _, r := range rs {
				if !allowed(verb, r, ns) {
					t.Errorf("%s may not %s %s in %s", user, verb, r, ns)
				}
				if !slices.Contains(want.everywhere, r) && allowed(verb, r, "") {
					t.Errorf("%s may %s %s in all namespaces, want only in %s", user, verb, r, ns)
				}
			}
		}
	}
	for _, r := range append(slices.Clone(want.everywhere), "secrets") {
		if allowed("get", r, "default") {
			t.Errorf("%s may get %s", user, r)
		}
	}
	for _, ns := range []string{"", "default"} {
		if allowed("list", "secrets", ns) {
			t.Errorf("%s may list secrets in namespace %q", user, ns)
		}
	}
}

// exportAs runs the exporter with config as user and waits until it is
// ready with every request succeeding ("ok" alone), which it cannot be
// unless it may list and watch everything it reads. It returns the
// exporter's URL.
func exportAs(t *testing.T, user, config string) string {
	t.Helper()
	url, _ := exportRun(t, user, config)
	return url
}

// exportRun is exportAs with more flags, returning the run too.
func exportRun(t *testing.T, user, config string, flags ...string) (string, *framework.Run) {
	t.Helper()
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, append([]string{"export", "--as", user, "--cache-dir", t.TempDir(), "--config", config, "--web.listen-address", addr}, flags...)...)
	url := "http://" + addr
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		code, body := httpGet(url + "/readyz")
		if code == http.StatusOK && body == "ok\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter running as %s is not ready after %s: %d %s\nstderr:\n%s", user, framework.HangTimeout, code, body, run.ErrOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(strings.ToLower(run.ErrOut.String()), "forbidden") {
		t.Errorf("the exporter running as %s was forbidden something:\n%s", user, run.ErrOut)
	}
	return url, run
}

// httpGet returns the status and body of a GET, or 0 and the error.
// seriesOf returns the series of an exposition in the text format as
// framework.SeriesLines writes them, none when it does not parse.
func seriesOf(body string) []string {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil
	}
	return framework.SeriesLines(mfs, nil)
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPrintRBACKubeStateMetricsPods prints the RBAC of the example that
// deploy/base ships, as a user who may list and watch nothing, with the
// default name and the namespace of --rbac-namespace (-n would scope the
// pods to it, see TestPrintRBACNamespacedLookups); applies it; and checks that the
// ServiceAccount may list and watch pods and nothing else, and that the
// exporter runs on that alone.
func TestPrintRBACKubeStateMetricsPods(t *testing.T) {
	ns := cluster.NewNamespace(t, "rbac-ksm")
	config := filepath.Join(cluster.Root, exampleFile)
	printed := printRBAC(t, cluster.UnprivilegedKubeconfig, config, "--rbac-namespace", ns)
	const name = "kubectl-informer-exporter"
	want := rbacAccess{everywhere: []string{"pods"}}
	checkPrintedRBAC(t, decodeAll(t, []byte(printed)), name, ns, want)
	applyRBAC(t, printed)
	user := serviceAccountUser(ns, name)
	checkAccess(t, user, want, ns)
	exportAs(t, user, config)
}

// TestPrintRBACCustomResourceAndLookups prints the RBAC of a config that
// watches a custom resource under its short name, reads nodes with get()
// and deployments with byIndex(), and watches configmaps in one namespace
// only: a ClusterRole for the first three, a Role in that namespace for
// configmaps. Applied, the ServiceAccount may do that and no more, and the
// exporter running as it serves the series of a Database and a ConfigMap.
func TestPrintRBACCustomResourceAndLookups(t *testing.T) {
	installDatabaseCRD(t)
	saNamespace := cluster.NewNamespace(t, "rbac-sa")
	watched := cluster.NewNamespace(t, "rbac-watched")
	config := filepath.Join(t.TempDir(), "config.yaml")
	text := `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
prefix: rbac_
resources:
- resource: db
  metrics:
  - name: database_info
    help: A database, with the zone of a node and the deployments of its namespace.
    type: info
    labels:
      namespace: object.metadata.namespace
      database: object.metadata.name
      zone: >-
        get("nodes", "node-001") != null
          ? get("nodes", "node-001").metadata.?labels[?"topology.kubernetes.io/zone"].orValue("")
          : ""
      deployments: size(byIndex("deployments.apps", "namespace", object.metadata.namespace))
- resource: configmaps
  namespaces: [` + watched + `]
  metrics:
  - name: configmap_info
    help: A configmap of the watched namespace.
    type: info
    labels:
      namespace: object.metadata.namespace
      configmap: object.metadata.name
`
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	const name = "rbac-crd-exporter"
	printed := printRBAC(t, cluster.UnprivilegedKubeconfig, config, "--rbac-name", name, "--rbac-namespace", saNamespace)
	want := rbacAccess{
		everywhere: []string{"databases." + workload.DatabaseGroup, "deployments.apps", "nodes"},
		namespaces: map[string][]string{watched: {"configmaps"}},
	}
	checkPrintedRBAC(t, decodeAll(t, []byte(printed)), name, saNamespace, want)
	applyRBAC(t, printed)
	user := serviceAccountUser(saNamespace, name)
	checkAccess(t, user, want, saNamespace)

	ctx := context.Background()
	if _, err := cluster.Client.CoreV1().ConfigMaps(watched).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db.yaml")
	if err := os.WriteFile(db, []byte(`apiVersion: `+workload.DatabaseGroup+`/v1
kind: Database
metadata:
  name: orders
  namespace: `+watched+`
spec:
  engine: postgres
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := cluster.Kubectl("create", "-f", db); err != nil {
		t.Fatalf("creating a Database: %v\n%s", err, out)
	}
	url := exportAs(t, user, config)
	wantSeries := []string{
		`rbac_configmap_info{configmap="probe",namespace="` + watched + `"} 1`,
		`rbac_database_info{database="orders",deployments="0",namespace="` + watched + `",zone=""} 1`,
	}
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		_, body := httpGet(url + "/metrics")
		series := seriesOf(body)
		missing := slices.DeleteFunc(slices.Clone(wantSeries), func(s string) bool { return slices.Contains(series, s) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q:\n%s", missing, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDeployBaseRBACIsPrintRBAC checks that the RBAC of deploy/base is
// exactly what --print-rbac prints for the config its ConfigMap holds,
// for its ServiceAccount: no more, so that the manifests stay
// least-privilege, and no less, so that the exporter runs.
func TestDeployBaseRBACIsPrintRBAC(t *testing.T) {
	checkRBACIsPrintRBAC(t, "deploy/base", func(config string, sa *unstructured.Unstructured) string {
		if config == "" {
			t.Fatal("deploy/base renders no ConfigMap with a config.yaml")
		}
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		return printRBAC(t, cluster.Kubeconfig, file, "--rbac-name", sa.GetName(), "--rbac-namespace", sa.GetNamespace())
	})
}

// TestDeployKubeStateMetricsRBACIsPrintRBAC: the overlay that replaces
// kube-state-metrics grants what --print-rbac prints for the profile.
func TestDeployKubeStateMetricsRBACIsPrintRBAC(t *testing.T) {
	checkRBACIsPrintRBAC(t, "deploy/kube-state-metrics", func(config string, sa *unstructured.Unstructured) string {
		if config != "" {
			t.Error("deploy/kube-state-metrics renders a config file; the profile needs none")
		}
		return printRBACOf(t, cluster.Kubeconfig, "the kube-state-metrics profile", "--profile", profiles.KubeStateMetrics,
			"--rbac-name", sa.GetName(), "--rbac-namespace", sa.GetNamespace())
	})
}

// checkRBACIsPrintRBAC checks that the RBAC objects dir renders are those
// printed returns, given the config.yaml of its ConfigMap ("" when none) and
// its ServiceAccount: the same objects with the same rules, role
// references and subjects.
func checkRBACIsPrintRBAC(t *testing.T, dir string, printed func(config string, sa *unstructured.Unstructured) string) {
	t.Helper()
	out, stderr, err := kubectl("kustomize", filepath.Join(cluster.Root, dir))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	rendered := decodeAll(t, []byte(out))
	var config string
	var sa *unstructured.Unstructured
	rbacKinds := map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}
	renderedRBAC := map[string]*unstructured.Unstructured{}
	for _, u := range rendered {
		switch kind := u.GetKind(); {
		case kind == "ConfigMap":
			if c, ok, _ := unstructured.NestedString(u.Object, "data", "config.yaml"); ok {
				config = c
			}
		case kind == "ServiceAccount":
			sa = u
		case rbacKinds[kind]:
			renderedRBAC[key(u)] = u
		}
	}
	if sa == nil {
		t.Fatalf("%s renders no ServiceAccount", dir)
	}
	objs := decodeAll(t, []byte(printed(config, sa)))
	type grants struct {
		Rules    []rbacv1.PolicyRule `json:"rules,omitempty"`
		RoleRef  *rbacv1.RoleRef     `json:"roleRef,omitempty"`
		Subjects []rbacv1.Subject    `json:"subjects,omitempty"`
	}
	for _, u := range objs {
		if !rbacKinds[u.GetKind()] {
			continue
		}
		r, ok := renderedRBAC[key(u)]
		if !ok {
			t.Errorf("%s has no %s; --print-rbac prints\n%s", dir, key(u), toYAML(t, u))
			continue
		}
		delete(renderedRBAC, key(u))
		var got, want grants
		fromUnstructured(t, r, &got)
		fromUnstructured(t, u, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s's %s differs from what --print-rbac prints:\n%s\nwant:\n%s", dir, key(u), toYAML(t, r), toYAML(t, u))
		}
	}
	for k := range renderedRBAC {
		t.Errorf("%s has %s, which --print-rbac does not print", dir, k)
	}
}

func toYAML(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installDatabaseCRD installs the workload's Database CRD, once, and waits
// until kubectl's discovery sees it.
func installDatabaseCRD(t *testing.T) {
	t.Helper()
	client, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	crd := workload.DatabaseCRD()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for the Database CRD to be established: %v", err)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		out, err := cluster.Kubectl("api-resources", "--api-group="+workload.DatabaseGroup, "-o", "name")
		return err == nil && strings.Contains(out, "databases"), nil
	})
	if err != nil {
		t.Fatalf("waiting for discovery to serve the Database CRD: %v", err)
	}
}

// TestDeployServeRBAC applies the RBAC of deploy/serve and checks that the
// query server's ServiceAccount may do exactly what the server needs, in
// the namespaces where it runs, where users run and in kube-system: list and
// watch each resource it serves, create TokenReviews and
// SubjectAccessReviews, and get, list and watch the one ConfigMap of
// kube-system that holds the client CA. Nothing else: it may not get what
// it lists, touch secrets or other ConfigMaps, or impersonate anyone. Then
// it runs the server with the Deployment's arguments and config as that
// ServiceAccount, and queries it as a user with a client certificate
// (verified against the client CA) and as one with a bearer token
// (verified with a TokenReview), each authorized with SubjectAccessReviews:
// neither query succeeds unless every grant is there.
func TestDeployServeRBAC(t *testing.T) {
	rendered := renderServe(t)
	d := queryDeployment(t, rendered)
	args := parseServeArgs(t, d.Spec.Template.Spec.Containers[0].Args)
	served := resolve(t, args.resources)
	var manifests []string
	var config string
	for _, u := range rendered {
		switch u.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			manifests = append(manifests, toYAML(t, u))
		case "ConfigMap":
			config, _, _ = unstructured.NestedString(u.Object, "data", filepath.Base(queryConfigFile))
		}
	}
	if config == "" {
		t.Fatalf("%s renders no ConfigMap with a %s", serveDir, filepath.Base(queryConfigFile))
	}
	// The ServiceAccount exists: createNamespace created it.
	applyRBAC(t, strings.Join(manifests, "---\n"))

	user := serviceAccountUser(namespace, queryServiceAccount)
	client := impersonating(t, user)
	authReader := []string{}
	for _, v := range []string{"get", "list", "watch"} {
		authReader = append(authReader, "configmaps[extension-apiserver-authentication]/"+v)
	}
	for _, ns := range []string{"default", namespace, "kube-system"} {
		want := queryServerGrants(served)
		if ns == "kube-system" {
			want = slices.Sorted(slices.Values(append(want, authReader...)))
		}
		checkGranted(t, client, user, ns, want)
	}

	type access struct {
		verb, resource, subresource, namespace, name string
	}
	allowed := func(a access) bool {
		t.Helper()
		res, group, _ := strings.Cut(a.resource, ".")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: group, Resource: res, Subresource: a.subresource, Namespace: a.namespace, Name: a.name,
			},
		}}
		got, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Allowed
	}
	mayNot := []access{
		{verb: "get", resource: "configmaps", namespace: "kube-system", name: "kube-root-ca.crt"},
		{verb: "list", resource: "configmaps", namespace: "kube-system"},
		{verb: "get", resource: "configmaps", namespace: namespace},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: namespace, name: queryServiceAccount},
		{verb: "impersonate", resource: "users"},
		{verb: "impersonate", resource: "serviceaccounts", namespace: namespace},
		{verb: "create", resource: "pods", subresource: "exec", namespace: "default", name: "any"},
		{verb: "create", resource: "localsubjectaccessreviews.authorization.k8s.io", namespace: "default"},
	}
	may := []access{
		{verb: "create", resource: "tokenreviews.authentication.k8s.io"},
		{verb: "create", resource: "subjectaccessreviews.authorization.k8s.io"},
	}
	for _, v := range []string{"get", "list", "watch"} {
		may = append(may, access{verb: v, resource: "configmaps", namespace: "kube-system", name: "extension-apiserver-authentication"})
	}
	for _, ns := range []string{"", "default", "kube-system", namespace} {
		for _, v := range []string{"get", "list", "watch"} {
			mayNot = append(mayNot, access{verb: v, resource: "secrets", namespace: ns})
		}
	}
	for _, r := range served {
		may = append(may, access{verb: "list", resource: r}, access{verb: "watch", resource: r})
		for _, v := range []string{"get", "create", "update", "patch", "delete", "deletecollection"} {
			mayNot = append(mayNot, access{verb: v, resource: r, namespace: "default", name: "any"})
		}
	}
	for _, a := range may {
		if !allowed(a) {
			t.Errorf("%s may not %+v", user, a)
		}
	}
	for _, a := range mayNot {
		if allowed(a) {
			t.Errorf("%s may %+v", user, a)
		}
	}

	srv := startQueryServer(t, user, args, config)
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "serve-rbac")
	const node = "serve-rbac-node"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "on-node"},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The admin authenticates with a client certificate, and uses an
	// index of the shipped config.
	srv.query(t, cluster.Kubeconfig, "pod/"+pod.Name, "pods", "-A", "--by", "byNode="+node, "-o", "name")

	// A ServiceAccount authenticates with a bearer token, and may list
	// pods in its namespace only.
	const reader = "pod-reader"
	if _, err := cluster.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: reader}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: reader}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cluster.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, reader, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The query server caches a denial: query once the Role is in force.
	readerClient := impersonating(t, serviceAccountUser(ns, reader))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		granted, err := grantedIn(ctx, readerClient, ns)
		return err == nil && slices.Contains(granted, "pods/list"), nil
	})
	if err != nil {
		t.Fatalf("%s may still not list pods in %s", reader, ns)
	}
	srv.query(t, tokenKubeconfig(t, tr.Status.Token), "pod/"+pod.Name, "pods", "-n", ns, "-o", "name")

	for _, s := range []string{"forbidden", "client certificates are not accepted"} {
		if strings.Contains(strings.ToLower(srv.run.ErrOut.String()), s) {
			t.Errorf("the query server running as %s logged %q:\n%s", user, s, srv.run.ErrOut)
		}
	}
}

// TestPrintRBACNamespacedLookups prints the RBAC of a config whose pods,
// watched in one namespace only, read configmaps with get(): once with the
// namespace in the entry, once with -n (for both --print-rbac and the
// exporter). Both give a Role in that namespace for pods and configmaps,
// and nothing cluster-wide; the exporter runs as the ServiceAccount on that
// alone, reads the configmap of its namespace, exports no pod of another
// namespace, and answers a get() of a namespace it does not watch with an
// evaluation error, counted and logged with the fix.
func TestPrintRBACNamespacedLookups(t *testing.T) {
	const metrics = `  metrics:
  - name: pod_settings_info
    help: A pod, with the mode of its namespace's settings.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      mode: >-
        get("configmaps", object.metadata.namespace, "settings") != null
          ? get("configmaps", object.metadata.namespace, "settings").data.mode
          : "none"
  - name: pod_system_settings_info
    help: A pod, with the settings of kube-system, which the exporter does not watch.
    type: info
    labels:
      pod: object.metadata.name
      found: 'string(get("configmaps", "kube-system", "settings") != null)'
`
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		entry string
		flags func(watched string) []string
	}{
		{"namespaces in the entry", "- resource: pods\n  namespaces: [%s]\n", func(string) []string { return nil }},
		{"-n", "- resource: pods\n", func(watched string) []string { return []string{"-n", watched} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saNamespace := cluster.NewNamespace(t, "rbac-sa")
			watched := cluster.NewNamespace(t, "rbac-watched")
			other := cluster.NewNamespace(t, "rbac-other")
			entry := tc.entry
			if strings.Contains(entry, "%s") {
				entry = fmt.Sprintf(entry, watched)
			}
			config := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(config, []byte("apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nprefix: rbac_\nresources:\n"+entry+metrics), 0o600); err != nil {
				t.Fatal(err)
			}
			name := "rbac-ns-exporter"
			printed := printRBAC(t, cluster.UnprivilegedKubeconfig, config, append(tc.flags(watched), "--rbac-name", name, "--rbac-namespace", saNamespace)...)
			want := rbacAccess{namespaces: map[string][]string{watched: {"configmaps", "pods"}}}
			checkPrintedRBAC(t, decodeAll(t, []byte(printed)), name, saNamespace, want)
			applyRBAC(t, printed)
			user := serviceAccountUser(saNamespace, name)
			checkAccess(t, user, want, saNamespace, other)

			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "fast"}}
			for _, ns := range []string{watched, other} {
				if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cluster.CreatePod(t, watched, "p1", nil)
			cluster.CreatePod(t, other, "p2", nil)
			url, run := exportRun(t, user, config, tc.flags(watched)...)
			metric := `rbac_pod_settings_info{mode="fast",namespace="` + watched + `",pod="p1"} 1`
			errorsLine := regexp.MustCompile(`(?m)^kubectl_informer_metric_evaluation_errors_total\{metric="rbac_pod_system_settings_info"\} [1-9]`)
			deadline := time.Now().Add(time.Minute)
			var body string
			for {
				_, body = httpGet(url + "/metrics")
				if slices.Contains(seriesOf(body), metric) && errorsLine.MatchString(body) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/metrics lacks %s or a counted evaluation error of rbac_pod_system_settings_info:\n%s", metric, body)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if strings.Contains(body, `pod="p2"`) || strings.Contains(body, "rbac_pod_system_settings_info{") {
				t.Errorf("/metrics has a pod of %s, or a series of a get() of kube-system:\n%s", other, body)
			}
			for _, want := range []string{
				`kubectl_informer_resource_healthy{namespace="` + watched + `",resource="configmaps"} 1`,
				`kubectl_informer_resource_healthy{namespace="` + watched + `",resource="pods"} 1`,
			} {
				if !strings.Contains(body, want+"\n") {
					t.Errorf("/metrics lacks %s", want)
				}
			}
			// Evaluation errors are logged every 30 s at most.
			hint := `configmaps are not watched in namespace \"kube-system\", only in ` + watched
			deadline = time.Now().Add(2 * time.Minute)
			for !strings.Contains(run.ErrOut.String(), hint) {
				if time.Now().After(deadline) {
					t.Fatalf("the logs do not say %s:\n%s", hint, run.ErrOut)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

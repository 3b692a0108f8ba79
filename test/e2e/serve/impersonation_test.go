package serve_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// podListers is a group that may list pods everywhere.
const podListers = "e2e-serve-pod-listers"

// testImpersonation checks --as and --as-group with --query-server: the query
// is answered as the user impersonated, and only when the caller may
// impersonate it, as the API server decides.
func testImpersonation(t *testing.T, s *server) {
	grant(t, "e2e-serve-pod-listers", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: podListers},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}})
	waitAllowed(t, authorizationv1.SubjectAccessReviewSpec{User: "someone", Groups: []string{podListers},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}})
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := strconv.Itoa(len(pods.Items)) + "\n"

	// The admin may impersonate anyone: each query is answered as the
	// user it names.
	r := s.query(t, cluster.Kubeconfig, "pods", "-A", "--as", "nobody")
	want := `error: Error from the query server (Forbidden): pods is forbidden: User "nobody" cannot list resource "pods" in API group "" at the cluster scope, nor in any namespace that holds some` + "\n"
	if r.code != app.ExitRuntime || r.out != "" || r.errOut != want {
		t.Errorf("query pods -A --as nobody as the admin: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.out, r.errOut, want)
	}
	if r := s.query(t, cluster.Kubeconfig, "pods", "-A", "--count", "--as", "someone", "--as-group", podListers); r.code != 0 || r.out != all {
		t.Errorf("query pods -A --count --as someone --as-group %s: exit %d, stdout %q, stderr %q; want %q", podListers, r.code, r.out, r.errOut, all)
	}
	// A service account named with --as gets what its own token gets.
	saKubeconfig, sa := serviceAccountKubeconfig(t, readerNamespace, "pod-reader")
	got := s.query(t, cluster.Kubeconfig, "pods", "-A", "-o", "name", "--as", sa)
	if own := s.query(t, saKubeconfig, "pods", "-A", "-o", "name"); got != own || own.code != 0 || own.out == "" {
		t.Errorf("query pods -A --as %s differs from the service account's own query\n%s", sa, diff("own token", own, "--as", got))
	}
	if r := s.query(t, cluster.Kubeconfig, "nodes", "--as", sa); r.code != app.ExitRuntime || !strings.Contains(r.errOut, `nodes is forbidden: User "`+sa+`"`) {
		t.Errorf("query nodes --as %s: exit %d, stdout %q, stderr %q; want forbidden for %s", sa, r.code, r.out, r.errOut, sa)
	}

	// A caller who may list pods but not impersonate is refused, not
	// answered as itself.
	lister, _, err := cluster.AddUser("e2e-serve-lister", podListers)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.query(t, lister, "pods", "-A", "--count"); r.code != 0 || r.out != all {
		t.Fatalf("query pods -A --count as a member of %s: exit %d, stdout %q, stderr %q; want %q", podListers, r.code, r.out, r.errOut, all)
	}
	r = s.query(t, lister, "pods", "-A", "--count", "--as", "nobody")
	want = `error: Error from the query server (Forbidden): users "nobody" is forbidden: User "e2e-serve-lister" cannot impersonate resource "users" in API group "" at the cluster scope`
	if r.code != app.ExitRuntime || r.out != "" || !strings.HasPrefix(r.errOut, want) {
		t.Errorf("query --as nobody by a user who may not impersonate: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.out, r.errOut, want)
	}

	// A caller who may impersonate users but not groups: --as-group is
	// refused.
	grant(t, "e2e-serve-user-impersonator", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "e2e-serve-user-impersonator"},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
	impersonator, _, err := cluster.AddUser("e2e-serve-user-impersonator")
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, authorizationv1.SubjectAccessReviewSpec{User: "e2e-serve-user-impersonator",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "someone"}})
	r = s.query(t, impersonator, "pods", "-A", "--count", "--as", "someone", "--as-group", podListers)
	want = `error: Error from the query server (Forbidden): groups "` + podListers + `" is forbidden: User "e2e-serve-user-impersonator" cannot impersonate resource "groups" in API group "" at the cluster scope`
	if r.code != app.ExitRuntime || r.out != "" || !strings.HasPrefix(r.errOut, want) {
		t.Errorf("query --as-group by a user who may impersonate users only: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.out, r.errOut, want)
	}
	// The user alone it may impersonate, and is then answered as that
	// user, who may list nothing.
	r = s.query(t, impersonator, "pods", "-A", "--count", "--as", "someone")
	if r.code != app.ExitRuntime || r.out != "" || !strings.Contains(r.errOut, `pods is forbidden: User "someone" cannot list resource "pods"`) {
		t.Errorf("query --as someone by a user who may impersonate users: exit %d, stdout %q, stderr %q; want forbidden for someone", r.code, r.out, r.errOut)
	}
}

// grant binds subject to a new ClusterRole named name with rules.
func grant(t *testing.T, name string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	_, err := cluster.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_, err = cluster.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

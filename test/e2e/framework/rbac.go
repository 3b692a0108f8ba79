package framework

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// AddUserAllowed adds a user authenticated as name whom RBAC allows rules
// in every namespace, through a ClusterRole and a ClusterRoleBinding both
// named name, deleted when the test ends. It returns the user's
// kubeconfig and REST config.
func (c *Cluster) AddUserAllowed(t testing.TB, name string, rules ...rbacv1.PolicyRule) (kubeconfig string, cfg *rest.Config) {
	t.Helper()
	kubeconfig, cfg, err := c.AddUser(name)
	if err != nil {
		t.Fatal(err)
	}
	c.bindClusterRole(t, name, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}, rules)
	return kubeconfig, cfg
}

// bindClusterRole creates a ClusterRole of rules and a ClusterRoleBinding
// of it to subject, both named name, deleted when the test ends.
func (c *Cluster) bindClusterRole(t testing.TB, name string, subject rbacv1.Subject, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	rbac := c.Client.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// ServiceAccountToken creates the ServiceAccount name in namespace, bound
// to a ClusterRole of rules (none: no binding) named namespace-name, and
// returns a token the API server issues for it (a TokenRequest), as a
// pod of that ServiceAccount holds; the ClusterRole and its binding are
// deleted when the test ends.
func (c *Cluster) ServiceAccountToken(t testing.TB, namespace, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(rules) > 0 {
		c.bindClusterRole(t, namespace+"-"+name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}, rules)
	}
	tr, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

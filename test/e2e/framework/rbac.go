package framework

import (
	"context"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// ServiceAccountKubeconfig creates the ServiceAccount name in namespace,
// bound by a Role and a RoleBinding named name to rules in that namespace
// (none: no grant; any of them may already exist), and writes a kubeconfig
// that authenticates with a token of it (a TokenRequest for an hour) and
// nothing else. With rules, it returns once the API server's authorizer
// allows the first verb of the first rule on its first resource. It also
// returns the account's user name.
func (c *Cluster) ServiceAccountKubeconfig(t testing.TB, namespace, name string, rules ...rbacv1.PolicyRule) (kubeconfig, user string) {
	t.Helper()
	ctx := context.Background()
	created := func(err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	created(err)
	user = "system:serviceaccount:" + namespace + ":" + name
	if len(rules) > 0 {
		rbac := c.Client.RbacV1()
		_, err = rbac.Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		created(err)
		_, err = rbac.RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
		}, metav1.CreateOptions{})
		created(err)
		r := rules[0]
		Eventually(t, user+" may "+r.Verbs[0]+" "+r.Resources[0], func() bool {
			sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               user,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: r.Resources[0]},
			}}, metav1.CreateOptions{})
			return err == nil && sar.Status.Allowed
		})
	}
	expiry := int64(3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" {
		t.Fatal("the TokenRequest returned no token")
	}
	return c.TokenKubeconfig(t, namespace+"-"+name, tr.Status.Token), user
}

// TokenKubeconfig writes a kubeconfig for the cluster that authenticates
// with the bearer token alone, and returns its path.
func (c *Cluster) TokenKubeconfig(t testing.TB, name, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

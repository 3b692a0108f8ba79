package serve_test

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestServedRelationErrors checks that a relationship function the server
// cannot answer is named in the message as the query writes it, with what
// would answer it: a resource the server does not serve, the command that
// would serve it; a resource the caller may not list, the verb refused.
// None names the built-in indexes the functions read.
func TestServedRelationErrors(t *testing.T) {
	s := startServer(t)
	ns := cluster.NewNamespace(t, "relation-errors")
	tests := []struct {
		name, kubeconfig string
		args             []string
		want             []string
	}{{
		name: "children of a resource not served",
		args: []string{"deployments", "-n", ns, "--columns", `n=children(object, "replicasets").size()`},
		want: []string{`--columns n: children(…, "replicasets"): this server does not serve replicasets.apps; it serves `,
			"(a server started with kubectl informer serve ", ",replicasets.apps would serve it too)"},
	}, {
		name: "events not served",
		args: []string{"pods", "-n", ns, "--where", `events(object).size() > 0`},
		want: []string{`--where: events(): this server does not serve events; it serves `, ",events would serve it too)"},
	}, {
		name: "selected of a resource not served",
		args: []string{"deployments", "-n", ns, "--columns", `n=selected(object, "replicasets").size()`},
		want: []string{`--columns n: selected(…, "replicasets"): this server does not serve replicasets.apps`},
	}}
	// A caller who may list deployments, not pods.
	kubeconfig, user := cluster.ServiceAccountKubeconfig(t, ns, "deployments-only",
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list", "watch", "get"}})
	waitAllowed(t, authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Group: "apps", Resource: "deployments"}})
	tests = append(tests, struct {
		name, kubeconfig string
		args             []string
		want             []string
	}{
		name: "selected pods the caller may not list", kubeconfig: kubeconfig,
		args: []string{"deployments", "-n", ns, "--columns", `n=selected(object, "pods").size()`},
		want: []string{`cannot list resource "pods" in API group "" in the namespace "` + ns + `" (read by selected(…, "pods") in --columns n)`},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := tt.kubeconfig
			if kc == "" {
				kc = cluster.Kubeconfig
			}
			r := s.query(t, kc, tt.args...)
			if r.code == 0 {
				t.Fatalf("exit 0, want an error\n%s", r.out)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.errOut, w) {
					t.Errorf("stderr %q does not say %q", r.errOut, w)
				}
			}
			for _, internal := range []string{"@controller", "@involvedObject", "byIndex(", "get()/byIndex()"} {
				if strings.Contains(r.errOut, internal) {
					t.Errorf("stderr %q names %q, which the query does not write", r.errOut, internal)
				}
			}
		})
	}
}

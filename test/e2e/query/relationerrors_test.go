package query_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// internalNames are names the relationship functions read that no query
// writes: messages must name the functions instead.
var internalNames = []string{"@controller", "@involvedObject", "@label", "byIndex(", "get()/byIndex()"}

// checkSays checks that stderr says each of want and names none of
// internalNames.
func checkSays(t *testing.T, stderr string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
	for _, internal := range internalNames {
		if strings.Contains(stderr, internal) {
			t.Errorf("stderr %q names %q, which the query does not write", stderr, internal)
		}
	}
}

// TestRelationErrors checks the messages of relationship functions that
// cannot be answered from local caches: each names the call as written
// and what would answer it.
func TestRelationErrors(t *testing.T) {
	ns := cluster.NewNamespace(t, "relation-errors")

	t.Run("not cached in a session", func(t *testing.T) {
		r := queryInput(t, strings.Join([]string{
			`:columns n=children(object, "replicasets").size()`,
			`:columns e=events(object).size()`,
			`:columns o=owner(object)`,
			`:columns s=selected(object, "pods").size()`,
		}, "\n"), "deployments", "-n", ns, "-i")
		checkSays(t, r.errOut,
			`:columns n: children(…, "replicasets") reads "replicasets", which is not cached here (the caches hold deployments.apps): start a new query whose flags call children(…, "replicasets"), or that names "replicasets"`,
			`:columns e: events() reads "events", which is not cached here`,
			`:columns o: owner() reads "cronjob.batch", "daemonset.apps", "job.batch", "replicaset.apps", "replicationcontroller", "statefulset.apps", which are not cached here (the caches hold deployments.apps): start a new query whose flags call owner()`,
			`:columns s: selected(…, "pods") reads "pods", which is not cached here`)
		if n := strings.Count(r.errOut, ":columns o:"); n != 1 {
			t.Errorf("owner() is the subject of %d messages, want one:\n%s", n, r.errOut)
		}
	})

	t.Run("cached without the index in a session", func(t *testing.T) {
		r := queryInput(t, `:columns n=children(object, "replicasets").size()`, "deployments", "-n", ns, "-i",
			"--columns", `x=get("replicasets", "`+ns+`", "none") == null`)
		checkSays(t, r.errOut, `:columns n: children(…, "replicasets") reads replicasets.apps through an index its cache here does not have (replicasets was cached for get() alone): start a new query that names "replicasets", or whose flags call children(…, "replicasets")`)
	})

	t.Run("selected() of a cache without the index in a session", func(t *testing.T) {
		r := queryInput(t, `:columns s=selected(object, "pods").size()`, "deployments", "-n", ns, "-i",
			"--columns", `x=get("pods", "`+ns+`", "none") == null`)
		checkSays(t, r.errOut, `:columns s: selected(…, "pods") reads pods through an index its cache here does not have (pods was cached for get() alone): start a new query that names "pods", or whose flags call selected(…, "pods")`)
	})

	t.Run("a resource the server does not have", func(t *testing.T) {
		r := query(t, "deployments", "-n", ns, "--columns", `n=children(object, "replicasetz").size()`)
		if r.code != 2 {
			t.Errorf("exit %d, want 2 (usage)", r.code)
		}
		checkSays(t, r.errOut, `children(…, "replicasetz"): the server doesn't have a resource type "replicasetz"`)
	})

	t.Run("a resource RBAC denies", func(t *testing.T) {
		kc, _ := cluster.ServiceAccountKubeconfig(t, ns, "deployments-reader",
			rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list", "watch", "get"}})
		var r result
		// Until the grant of deployments is in force, their list is denied.
		framework.Eventually(t, "the list of deployments allowed", func() bool {
			r = run(t, "query", "--kubeconfig", kc, "deployments", "-n", ns, "--columns", `n=children(object, "replicasets").size()`)
			return !strings.Contains(r.errOut, `"deployments"`)
		})
		if r.code == 0 {
			t.Fatalf("exit 0, want the list of replicasets denied\n%s", r.out)
		}
		checkSays(t, r.errOut, `RBAC denied list/watch of replicasets.apps in namespace "`+ns+`" (read by children(…, "replicasets") in --columns n)`)
	})
}

package query_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createDeployment creates a deployment with the given labels on itself
// and its pod template. No controller runs: it makes no pods.
func createDeployment(t *testing.T, ns, name string, labels map[string]string) {
	t.Helper()
	sel := map[string]string{"app": name}
	tmpl := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tmpl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLimitOverSeveralResources checks that --limit cuts the answer that
// several resources make together, after it is ordered, and not each
// resource's own: the objects each resource would keep by itself, and the
// groups each would count first, are not those of the whole answer.
func TestLimitOverSeveralResources(t *testing.T) {
	ns := cluster.NewNamespace(t, "limit")
	// rank orders the objects across both resources; team groups them:
	// each resource's largest team (p, r: 3) is smaller than z, the
	// second of each (2 + 2).
	podRanks := map[string][2]string{"p-a": {"01", "p"}, "p-b": {"04", "p"}, "p-c": {"05", "p"}, "p-d": {"08", "z"}, "p-e": {"09", "z"}}
	deployRanks := map[string][2]string{"d-a": {"02", "r"}, "d-b": {"03", "r"}, "d-c": {"06", "r"}, "d-d": {"07", "z"}, "d-e": {"10", "z"}}
	for _, name := range slices.Sorted(maps.Keys(podRanks)) {
		cluster.CreatePod(t, ns, name, map[string]string{"rank": podRanks[name][0], "team": podRanks[name][1]})
	}
	for _, name := range slices.Sorted(maps.Keys(deployRanks)) {
		createDeployment(t, ns, name, map[string]string{"rank": deployRanks[name][0], "team": deployRanks[name][1]})
	}
	const rank = `object.metadata.labels["rank"]`

	// The oracle for listings is kubectl get itself, which prints several
	// resource types one after the other and, with --sort-by, orders the
	// list of them all (the ranks sort the same as strings or numbers).
	kubectlNames := func(args ...string) []string {
		out, err := cluster.Kubectl(append([]string{"get", "pods,deployments", "-n", ns, "-o", "name"}, args...)...)
		if err != nil {
			t.Fatalf("kubectl: %v\n%s", err, out)
		}
		return lines(out)
	}
	all := kubectlNames()
	if len(all) != 10 {
		t.Fatalf("kubectl get lists %d objects, want 10:\n%s", len(all), strings.Join(all, "\n"))
	}
	sorted := kubectlNames("--sort-by", "{.metadata.labels.rank}")

	t.Run("names in resource order", func(t *testing.T) {
		got := lines(query(t, "pods,deployments", "-n", ns, "--limit", "6", "-o", "name").ok(t))
		if want := all[:6]; !slices.Equal(got, want) {
			t.Errorf("--limit 6 -o name printed\n%s\nwant the first 6 of kubectl's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("names sorted across resources", func(t *testing.T) {
		got := lines(query(t, "po,deploy", "-n", ns, "--sort-by", rank, "--limit", "3", "-o", "name").ok(t))
		want := sorted[:3]
		if !slices.Equal(want, []string{"pod/p-a", "deployment.apps/d-a", "deployment.apps/d-b"}) {
			t.Fatalf("kubectl --sort-by printed %q", sorted)
		}
		if !slices.Equal(got, want) {
			t.Errorf("--sort-by rank --limit 3 -o name printed %q, want %q", got, want)
		}
	})

	t.Run("tables keep the first of the merged order", func(t *testing.T) {
		out := query(t, "po,deploy", "-n", ns, "--sort-by", rank, "--limit", "3").ok(t)
		// One table per resource, as kubectl prints several types.
		var names []string
		for _, l := range lines(out) {
			if f := strings.Fields(l); len(f) > 0 && f[0] != "NAME" {
				names = append(names, f[0])
			}
		}
		if want := sorted[:3]; !slices.Equal(names, want) {
			t.Errorf("--sort-by rank --limit 3 printed the rows %q, want %q:\n%s", names, want, out)
		}
		if n := strings.Count(out, "NAME"); n != 2 {
			t.Errorf("%d tables, want 2 (pods, deployments):\n%s", n, out)
		}
	})

	t.Run("json lists the first of the merged order", func(t *testing.T) {
		out := query(t, "po,deploy", "-n", ns, "--sort-by", rank, "--limit", "4", "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}{\"\\n\"}{end}").ok(t)
		want := []string{"Pod/p-a", "Deployment/d-a", "Deployment/d-b", "Pod/p-b"}
		if got := lines(out); !slices.Equal(got, want) {
			t.Errorf("--sort-by rank --limit 4 -o jsonpath printed %q, want %q", got, want)
		}
	})

	t.Run("groups merged before the cut", func(t *testing.T) {
		teams := map[string]int{}
		for _, m := range []map[string][2]string{podRanks, deployRanks} {
			for _, v := range m {
				teams[v[1]]++
			}
		}
		type group struct {
			team  string
			count int
		}
		var groups []group
		for team, n := range teams {
			groups = append(groups, group{team, n})
		}
		slices.SortFunc(groups, func(a, b group) int {
			if a.count != b.count {
				return b.count - a.count
			}
			return strings.Compare(a.team, b.team)
		})
		var want []string
		for _, g := range groups[:1] {
			want = append(want, fmt.Sprintf("%s %d", g.team, g.count))
		}
		if want[0] != "z 4" {
			t.Fatalf("the objects do not make z the largest team: %v", groups)
		}
		out := query(t, "po,deploy", "-n", ns, "--count", "--group-by", `object.metadata.labels["team"]`, "--limit", "1").ok(t)
		var got []string
		for _, l := range lines(out) {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		if !slices.Equal(got, want) {
			t.Errorf("--count --group-by team --limit 1 printed %q, want %q", got, want)
		}
	})
}

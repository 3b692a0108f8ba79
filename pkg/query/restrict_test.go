package query

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// TestRunNamespaces checks Spec.Namespaces, with and without the namespace
// index and with selectors: only the objects of the allowed namespaces,
// intersected with Spec.Namespace.
func TestRunNamespaces(t *testing.T) {
	var objs []any
	for _, p := range testPods() {
		objs = append(objs, p)
	}
	noNamespaceIndex := cache.Indexers{"byNode": byNode, "byPhase": byPhase}
	for name, idx := range map[string]cache.Indexer{
		"namespace index":    podIndexer(t),
		"no namespace index": newIndexer(t, noNamespaceIndex, objs...),
	} {
		tests := []struct {
			name string
			spec Spec
			want []string
		}{
			{"allowed namespaces", Spec{Namespaces: []string{"other", "kube-system"}},
				[]string{"kube-system/dns-0", "kube-system/px-a", "other/web-2"}},
			{"none allowed", Spec{Namespaces: []string{}}, []string{}},
			{"an allowed namespace asked for", Spec{Namespace: "other", Namespaces: []string{"other", "default"}},
				[]string{"other/web-2"}},
			{"a namespace asked for but not allowed", Spec{Namespace: "kube-system", Namespaces: []string{"other"}}, []string{}},
			{"with a selector", Spec{Namespaces: []string{"default"}, Selectors: []Selector{{Index: "byNode", Value: "n1"}}},
				[]string{"default/db-0", "default/web-0"}},
			{"unknown namespace", Spec{Namespaces: []string{"nosuch"}}, []string{}},
		}
		for _, tt := range tests {
			res, err := Run(idx, tt.spec)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, tt.name, err)
			}
			if got := keys(res); !slices.Equal(got, tt.want) {
				t.Errorf("%s, %s: %v, want %v", name, tt.name, got, tt.want)
			}
		}
	}
}

// TestRunFilter checks that Spec.Filter removes candidates before Where,
// which neither sees nor counts them.
func TestRunFilter(t *testing.T) {
	seen := 0
	res, err := Run(podIndexer(t), Spec{
		Filter: func(obj any) bool { return obj.(*corev1.Pod).Spec.NodeName == "n1" },
		Where: func(obj any) (bool, error) {
			seen++
			if obj.(*corev1.Pod).Name == "px-a" {
				return false, errors.New("boom")
			}
			return true, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(res), []string{"default/db-0", "default/web-0"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if seen != 3 {
		t.Errorf("Where saw %d objects, want the 3 the filter kept", seen)
	}
	if got, want := warningStrings(res), []string{"--where: 1 of 3 objects failed: kube-system/px-a: boom"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// TestRunStop checks that an error Spec.Stop accepts ends the query, from
// each expression that evaluates, while the others are counted.
func TestRunStop(t *testing.T) {
	spent := errors.New("spent")
	stop := func(err error) bool { return errors.Is(err, spent) }
	failOn := func(name string, err error) ValueFunc {
		return func(obj any) (any, error) {
			if obj.(*corev1.Pod).Name == name {
				return nil, err
			}
			return obj.(*corev1.Pod).Name, nil
		}
	}
	where := func(name string, err error) PredicateFunc {
		return func(obj any) (bool, error) {
			_, e := failOn(name, err)(obj)
			return e == nil, e
		}
	}
	for name, spec := range map[string]Spec{
		"where":    {Where: where("web-1", spent)},
		"sort-by":  {SortBy: failOn("web-1", spent)},
		"group-by": {Count: true, GroupBy: failOn("web-1", spent)},
		"columns":  {Columns: []Column{{Name: "x", Value: failOn("web-1", spent)}}},
	} {
		spec.Stop = stop
		if _, err := Run(podIndexer(t), spec); !errors.Is(err, spent) {
			t.Errorf("%s: %v, want the stopping error", name, err)
		}
	}
	// Other errors are counted as before.
	res, err := Run(podIndexer(t), Spec{Where: where("web-1", errors.New("other")), Stop: stop})
	if err != nil || res.Matched != 5 || len(res.Warnings) != 1 {
		t.Errorf("an error Stop refuses: %v, %d matched, %v; want 5 matched and a warning", err, res.Matched, res.Warnings)
	}
}

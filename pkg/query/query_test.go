package query

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestRunObjects(t *testing.T) {
	tests := []struct {
		name         string
		spec         Spec
		want         []string
		wantMatched  int
		wantWarnings []string
	}{
		{
			name: "everything in namespace/name order",
			spec: Spec{},
			want: []string{"default/db-0", "default/web-0", "default/web-1", "kube-system/dns-0", "kube-system/px-a", "other/web-2"},
		},
		{
			name: "one namespace through the namespace index",
			spec: Spec{Namespace: "kube-system"},
			want: []string{"kube-system/dns-0", "kube-system/px-a"},
		},
		{
			name: "one selector",
			spec: Spec{Selectors: []Selector{{Index: "byNode", Value: "n1"}}},
			want: []string{"default/db-0", "default/web-0", "kube-system/px-a"},
		},
		{
			name: "selectors intersect",
			spec: Spec{Selectors: []Selector{{Index: "byNode", Value: "n1"}, {Index: "byPhase", Value: "Running"}}},
			want: []string{"default/web-0"},
		},
		{
			name: "disjoint selectors",
			spec: Spec{Selectors: []Selector{{Index: "byNode", Value: "n2"}, {Index: "byPhase", Value: "Pending"}}},
			want: []string{},
		},
		{
			name: "selector without matches",
			spec: Spec{Selectors: []Selector{{Index: "byNode", Value: "n9"}, {Index: "byPhase", Value: "Running"}}},
			want: []string{},
		},
		{
			name: "selector and namespace",
			spec: Spec{Namespace: "default", Selectors: []Selector{{Index: "byPhase", Value: "Running"}}},
			want: []string{"default/web-0", "default/web-1"},
		},
		{
			name: "where",
			spec: Spec{Where: phaseIs(corev1.PodPending)},
			want: []string{"default/db-0", "other/web-2"},
		},
		{
			name: "selector then where",
			spec: Spec{Selectors: []Selector{{Index: "byNode", Value: "n1"}}, Where: phaseIs(corev1.PodRunning)},
			want: []string{"default/web-0"},
		},
		{
			name: "where failures exclude the object and are summarised",
			spec: Spec{Where: func(obj any) (bool, error) {
				v, err := restarts(obj)
				if err != nil {
					return false, err
				}
				return v.(int64) > 2, nil
			}},
			want:         []string{"default/web-0", "default/web-1"},
			wantWarnings: []string{"--where: 3 of 6 objects failed: default/db-0: index out of range: 0"},
		},
		{
			name: "distinct failure messages are counted",
			spec: Spec{Where: func(obj any) (bool, error) {
				p := obj.(*corev1.Pod)
				if p.Spec.NodeName == "" {
					return false, errors.New("no such key: nodeName")
				}
				if p.Status.Phase != corev1.PodRunning {
					return false, errors.New("no such key: ready")
				}
				return true, nil
			}},
			want:         []string{"default/web-0", "default/web-1", "kube-system/dns-0"},
			wantWarnings: []string{"--where: 3 of 6 objects failed: default/db-0: no such key: ready (and 1 other error)"},
		},
		{
			name: "sort numerically, not lexically",
			spec: Spec{Where: phaseIs(corev1.PodRunning), SortBy: restarts, Selectors: []Selector{{Index: "byPhase", Value: "Running"}}},
			// dns-0 has no restart count: it sorts first, as null.
			want:         []string{"kube-system/dns-0", "default/web-0", "default/web-1"},
			wantWarnings: []string{"--sort-by: 1 of 3 objects failed: kube-system/dns-0: index out of range: 0"},
		},
		{
			name: "sort strings lexically, ties by namespace/name",
			spec: Spec{SortBy: phase},
			want: []string{"kube-system/px-a", "default/db-0", "other/web-2", "default/web-0", "default/web-1", "kube-system/dns-0"},
		},
		{
			name: "sort with nulls first",
			spec: Spec{SortBy: nodeName},
			want: []string{"other/web-2", "default/db-0", "default/web-0", "kube-system/px-a", "default/web-1", "kube-system/dns-0"},
		},
		{
			name: "sort by name across namespaces",
			spec: Spec{SortBy: name},
			want: []string{"default/db-0", "kube-system/dns-0", "kube-system/px-a", "default/web-0", "default/web-1", "other/web-2"},
		},
		{
			name:        "limit after sorting",
			spec:        Spec{SortBy: name, Limit: 2},
			want:        []string{"default/db-0", "kube-system/dns-0"},
			wantMatched: 6,
		},
		{
			name: "descending strings, ties still by namespace/name",
			spec: Spec{SortBy: phase, Descending: true},
			want: []string{"default/web-0", "default/web-1", "kube-system/dns-0", "default/db-0", "other/web-2", "kube-system/px-a"},
		},
		{
			name: "descending timestamps: the newest first",
			spec: Spec{SortBy: created, Descending: true},
			want: []string{"default/db-0", "kube-system/px-a", "default/web-0", "default/web-1", "other/web-2", "kube-system/dns-0"},
		},
		{
			name: "descending with nulls last",
			spec: Spec{SortBy: nodeName, Descending: true},
			want: []string{"default/web-1", "kube-system/dns-0", "default/db-0", "default/web-0", "kube-system/px-a", "other/web-2"},
		},
		{
			name:        "descending before the limit",
			spec:        Spec{SortBy: name, Descending: true, Limit: 2},
			want:        []string{"other/web-2", "default/web-1"},
			wantMatched: 6,
		},
		{
			name: "descending without a sort key: namespace/name reversed",
			spec: Spec{Descending: true},
			want: []string{"other/web-2", "kube-system/px-a", "kube-system/dns-0", "default/web-1", "default/web-0", "default/db-0"},
		},
		{
			name: "named objects in the order named",
			spec: Spec{Namespace: "default", Objects: []string{"web-1", "db-0"}},
			want: []string{"default/web-1", "default/db-0"},
		},
		{
			name:         "named objects sorted by a key",
			spec:         Spec{Namespace: "default", Objects: []string{"web-1", "db-0", "web-0"}, SortBy: restarts},
			want:         []string{"default/db-0", "default/web-0", "default/web-1"},
			wantWarnings: []string{"--sort-by: 1 of 3 objects failed: default/db-0: index out of range: 0"},
		},
		{
			name: "named objects that a selector admits",
			spec: Spec{Namespace: "default", Objects: []string{"web-1", "db-0", "web-0"}, Selectors: []Selector{{Index: "byNode", Value: "n1"}}},
			want: []string{"default/db-0", "default/web-0"},
		},
		{
			name: "named objects of another namespace are not there",
			spec: Spec{Namespace: "other", Objects: []string{"web-0"}},
			want: []string{},
		},
		{
			name:        "limit larger than the result",
			spec:        Spec{Namespace: "other", Limit: 5},
			want:        []string{"other/web-2"},
			wantMatched: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(podIndexer(t), tt.spec)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Mode != ModeObjects {
				t.Errorf("mode = %v, want ModeObjects", res.Mode)
			}
			if got := keys(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objects = %q, want %q", got, tt.want)
			}
			wantMatched := tt.wantMatched
			if wantMatched == 0 {
				wantMatched = len(tt.want)
			}
			if res.Matched != wantMatched {
				t.Errorf("matched = %d, want %d", res.Matched, wantMatched)
			}
			if got := warningStrings(res); !reflect.DeepEqual(got, tt.wantWarnings) {
				t.Errorf("warnings = %q, want %q", got, tt.wantWarnings)
			}
		})
	}
}

func TestRunNamespaceWithoutNamespaceIndex(t *testing.T) {
	var objs []any
	for _, p := range testPods() {
		objs = append(objs, p)
	}
	idx := newIndexer(t, cache.Indexers{"byNode": byNode}, objs...)
	res, err := Run(idx, Spec{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default/db-0", "default/web-0", "default/web-1"}
	if got := keys(res); !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %q, want %q", got, want)
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name     string
		indexers cache.Indexers
		spec     Spec
		want     string
	}{
		{
			name:     "unknown index",
			indexers: podIndexers,
			spec:     Spec{Selectors: []Selector{{Index: "byNode", Value: "n1"}, {Index: "byZone", Value: "a"}}},
			want:     `unknown index "byZone"; known indexes: byNode, byPhase, namespace`,
		},
		{
			name:     "no indexes at all",
			indexers: cache.Indexers{},
			spec:     Spec{Selectors: []Selector{{Index: "byNode", Value: "n1"}}},
			want:     `unknown index "byNode": this resource has no indexes`,
		},
		{
			name:     "invalid spec",
			indexers: podIndexers,
			spec: Spec{
				Limit:     -1,
				Selectors: []Selector{{Value: "n1"}},
				Columns:   []Column{{Name: "node", Value: nodeName}, {Name: "node", Value: nodeName}, {Name: "x"}, {Value: nodeName}},
				GroupBy:   nodeName,
			},
			want: `limit must not be negative, got -1
selector "=n1" has no index name; use INDEX=VALUE
column "node" is defined twice
column "x" has no value function
column 4 has no name
group-by requires count: it counts objects per value`,
		},
		{
			name:     "count with sort-by and columns",
			indexers: podIndexers,
			spec:     Spec{Count: true, SortBy: name, Columns: []Column{{Name: "node", Value: nodeName}}},
			want: `sort-by cannot be used with count: groups are ordered by count
columns cannot be used with count`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(newIndexer(t, tt.indexers, testPods()[0]), tt.spec)
			if err == nil {
				t.Fatalf("Run succeeded, want error %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestRunCount(t *testing.T) {
	tests := []struct {
		name         string
		spec         Spec
		wantMode     Mode
		wantMatched  int
		wantGroups   []Group
		wantWarnings []string
	}{
		{
			name:        "bare count",
			spec:        Spec{Count: true},
			wantMode:    ModeCount,
			wantMatched: 6,
		},
		{
			name:        "count ignores limit",
			spec:        Spec{Count: true, Limit: 2, Where: phaseIs(corev1.PodPending)},
			wantMode:    ModeCount,
			wantMatched: 2,
		},
		{
			name:        "count by index",
			spec:        Spec{Count: true, Selectors: []Selector{{Index: "byNode", Value: "n1"}}},
			wantMode:    ModeCount,
			wantMatched: 3,
		},
		{
			name:        "group by a string, largest first, ties by value, null as <none>",
			spec:        Spec{Count: true, GroupBy: nodeName},
			wantMode:    ModeGroups,
			wantMatched: 6,
			wantGroups:  []Group{{"n1", 3}, {"n2", 2}, {"<none>", 1}},
		},
		{
			name:        "ties ordered by value",
			spec:        Spec{Count: true, GroupBy: phase},
			wantMode:    ModeGroups,
			wantMatched: 6,
			wantGroups:  []Group{{"Running", 3}, {"Pending", 2}, {"Failed", 1}},
		},
		{
			name:        "a list counts the object once per distinct element; empty list is <none>",
			spec:        Spec{Count: true, GroupBy: images},
			wantMode:    ModeGroups,
			wantMatched: 6,
			// web-1 runs nginx twice and counts once; dns-0 has no containers.
			wantGroups: []Group{{"nginx", 3}, {"<none>", 1}, {"envoy", 1}, {"postgres", 1}, {"proxy", 1}},
		},
		{
			name:        "numbers group and order numerically",
			spec:        Spec{Count: true, GroupBy: podValue(func(p *corev1.Pod) (any, error) { return int64(len(p.Name)), nil })},
			wantMode:    ModeGroups,
			wantMatched: 6,
			wantGroups:  []Group{{"5", 4}, {"4", 2}},
		},
		{
			name:         "group-by failures are left out and summarised",
			spec:         Spec{Count: true, GroupBy: restarts},
			wantMode:     ModeGroups,
			wantMatched:  6,
			wantGroups:   []Group{{"1", 1}, {"3", 1}, {"10", 1}},
			wantWarnings: []string{"--group-by: 3 of 6 objects failed: default/db-0: index out of range: 0"},
		},
		{
			name:        "limit keeps the largest groups",
			spec:        Spec{Count: true, GroupBy: images, Limit: 2},
			wantMode:    ModeGroups,
			wantMatched: 6,
			wantGroups:  []Group{{"nginx", 3}, {"<none>", 1}},
		},
		{
			name:        "no objects, no groups",
			spec:        Spec{Count: true, GroupBy: phase, Namespace: "nowhere"},
			wantMode:    ModeGroups,
			wantMatched: 0,
			wantGroups:  []Group{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(podIndexer(t), tt.spec)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Mode != tt.wantMode {
				t.Errorf("mode = %v, want %v", res.Mode, tt.wantMode)
			}
			if res.Matched != tt.wantMatched {
				t.Errorf("matched = %d, want %d", res.Matched, tt.wantMatched)
			}
			if diff := cmp.Diff(tt.wantGroups, res.Groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if res.Items != nil {
				t.Errorf("items = %v, want none", keys(res))
			}
			if got := warningStrings(res); !reflect.DeepEqual(got, tt.wantWarnings) {
				t.Errorf("warnings = %q, want %q", got, tt.wantWarnings)
			}
		})
	}
}

func TestRunColumns(t *testing.T) {
	res, err := Run(podIndexer(t), Spec{
		Namespace: "default",
		Columns:   []Column{{Name: "node", Value: nodeName}, {Name: "restarts", Value: restarts}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"node", "restarts"}; !reflect.DeepEqual(res.ColumnNames, want) {
		t.Errorf("column names = %q, want %q", res.ColumnNames, want)
	}
	var got []string
	for _, it := range res.Items {
		var cells []string
		for _, v := range it.Values {
			cells = append(cells, FormatValue(v))
		}
		got = append(got, indexers.ObjectName(it.Object)+" "+strings.Join(cells, " "))
	}
	want := []string{"default/db-0 n1 <error>", "default/web-0 n1 3", "default/web-1 n2 10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}
	var evalErr *EvalError
	if e, ok := res.Items[0].Values[1].(*EvalError); !ok || !errors.As(e, &evalErr) || evalErr.Error() != "index out of range: 0" {
		t.Errorf("failed cell = %#v, want an *EvalError", res.Items[0].Values[1])
	}
	wantWarnings := []string{"--columns restarts: 1 of 3 objects failed: default/db-0: index out of range: 0"}
	if got := warningStrings(res); !reflect.DeepEqual(got, wantWarnings) {
		t.Errorf("warnings = %q, want %q", got, wantWarnings)
	}
}

// TestRunDoesNotMutate runs every kind of query, prints it in every format
// and checks that the cached objects are unchanged.
func TestRunDoesNotMutate(t *testing.T) {
	objs := []any{
		pod("default", "web-0", "n1", corev1.PodRunning, 3, 0, "nginx"),
		widget("default", "w-1", "red", 0),
		partial("default", "p-1", 0),
		deployment("default", "d-1", 1, 0),
	}
	objs[0].(*corev1.Pod).ManagedFields = nil
	var before []any
	for _, o := range objs {
		before = append(before, deepCopy(o))
	}
	idx := newIndexer(t, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, objs...)
	for _, format := range []string{"", "wide", "json", "yaml", "kyaml", "name", "jsonpath={.items[*].metadata.name}", "custom-columns=N:.metadata.name", "go-template={{range .items}}{{.metadata.name}}{{end}}"} {
		res, err := Run(idx, Spec{SortBy: func(obj any) (any, error) { return indexers.ObjectName(obj), nil }})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPrinter(format, PrintOptions{GroupVersionKind: podTypeMeta.GroupVersionKind(), Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := p.Print(&out, res); err != nil {
			t.Fatalf("-o %q: %v", format, err)
		}
	}
	for i := range objs {
		if !equality.Semantic.DeepEqual(objs[i], before[i]) {
			t.Errorf("object %d changed:\n%#v\nwas:\n%#v", i, objs[i], before[i])
		}
	}
}

func deepCopy(obj any) any {
	return obj.(runtime.Object).DeepCopyObject()
}

// TestRunWhileUpdating runs queries while the indexer is being updated, as
// an informer does; run with -race.
func TestRunWhileUpdating(t *testing.T) {
	idx := podIndexer(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 500 {
			for _, p := range testPods() {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", RestartCount: int32(i)}}
				if i%2 == 0 {
					p.Spec.NodeName = "n3"
				}
				if err := idx.Update(p); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	specs := []Spec{
		{Selectors: []Selector{{Index: "byNode", Value: "n1"}, {Index: "byPhase", Value: "Running"}}},
		{SortBy: restarts, Limit: 2, Columns: []Column{{Name: "node", Value: nodeName}}},
		{Count: true, GroupBy: nodeName},
	}
	for {
		select {
		case <-done:
			return
		default:
		}
		for _, spec := range specs {
			res, err := Run(idx, spec)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPrinter("json", PrintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode == ModeObjects {
				if err := p.Print(io.Discard, res); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestRunNamedObjectsMissing: names of Spec.Objects that the indexer does
// not hold in the namespace are Missing; one held but not matched is not.
func TestRunNamedObjectsMissing(t *testing.T) {
	res, err := Run(podIndexer(t), Spec{Namespace: "default", Objects: []string{"web-9", "web-0", "dns-0"}, Where: phaseIs(corev1.PodPending)})
	if err != nil {
		t.Fatal(err)
	}
	// dns-0 is in kube-system; web-0 exists but is not Pending: it is
	// not missing, only not matched.
	if got, want := res.Missing, []string{"web-9", "dns-0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
	if len(res.Items) != 0 || res.Matched != 0 {
		t.Errorf("items %q, matched %d; want none", keys(res), res.Matched)
	}
}

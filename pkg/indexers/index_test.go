package indexers_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestIndexFunc(t *testing.T) {
	env := newEnv(t)
	objects := []*unstructured.Unstructured{
		pod("default", "a", "n1", "Running"),
		pod("default", "b", "n2", "Pending"),
		pod("default", "c", "", "Pending"), // no nodeName: fails, or not indexed
		pod("other", "d", "n1", "Running"),
	}
	tests := []struct {
		name     string
		expr     string
		value    string
		wantKeys []string
		wantStat indexers.IndexStat
	}{{
		name:     "string",
		expr:     `object.status.phase`,
		value:    "Pending",
		wantKeys: []string{"default/b", "default/c"},
		wantStat: indexers.IndexStat{Evaluated: 4, Errors: []indexers.ErrorCount{}},
	}, {
		name:     "list",
		expr:     `object.spec.containers.map(c, c.name).map(n, object.metadata.namespace + "/" + n)`,
		value:    "other/app",
		wantKeys: []string{"other/d"},
		wantStat: indexers.IndexStat{Evaluated: 4, Errors: []indexers.ErrorCount{}},
	}, {
		name:     "null",
		expr:     `has(object.spec.nodeName) ? object.spec.nodeName : null`,
		value:    "n1",
		wantKeys: []string{"default/a", "other/d"},
		wantStat: indexers.IndexStat{Evaluated: 4, Errors: []indexers.ErrorCount{}},
	}, {
		name:     "failure",
		expr:     `object.spec.nodeName`,
		value:    "n1",
		wantKeys: []string{"default/a", "other/d"},
		wantStat: indexers.IndexStat{Evaluated: 4, Failed: 1, Errors: []indexers.ErrorCount{{Message: "no such key: nodeName", Count: 1, Object: "default/c"}}},
	}, {
		name:     "wrong type at run time",
		expr:     `object.status.phase == "Running" ? object.spec.nodeName : object.spec.containers`,
		value:    "n1",
		wantKeys: []string{"default/a", "other/d"},
		wantStat: indexers.IndexStat{Evaluated: 4, Failed: 2, Errors: []indexers.ErrorCount{
			{Message: "must evaluate to string, list(string) or null but got a list containing map", Count: 2, Object: "default/b"},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stats indexers.Stats
			p, err := env.Compile(tt.expr, indexers.KindIndex, `index "test"`)
			if err != nil {
				t.Fatal(err)
			}
			store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"test": indexers.IndexFunc("test", p, &stats)})
			for _, o := range objects {
				if err := store.Add(o); err != nil { // a store panics on an index error
					t.Fatal(err)
				}
			}
			keys, err := store.IndexKeys("test", tt.value)
			sort.Strings(keys)
			if err != nil || !reflect.DeepEqual(keys, tt.wantKeys) {
				t.Errorf("IndexKeys(%q) = %q, %v; want %q", tt.value, keys, err, tt.wantKeys)
			}
			tt.wantStat.Index = "test"
			if got := stats.Snapshot(); !reflect.DeepEqual(got, []indexers.IndexStat{tt.wantStat}) {
				t.Errorf("Snapshot() = %+v, want %+v", got, tt.wantStat)
			}
		})
	}
}

// panickingLookup panics: an index function must survive it.
type panickingLookup struct{}

func (panickingLookup) Get(string, string, string) (any, bool, error) { panic("boom") }
func (panickingLookup) ByIndex(string, string, string) ([]any, error) { panic("boom") }

func TestIndexFuncNeverPanics(t *testing.T) {
	env := newEnv(t)
	var stats indexers.Stats
	p := compile(t, env, `get("nodes", object.spec.nodeName).metadata.name`, indexers.KindIndex).WithLookup(panickingLookup{})
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"byNode": indexers.IndexFunc("byNode", p, &stats)})
	if err := store.Add(pod("default", "a", "n1", "")); err != nil {
		t.Fatal(err)
	}
	snap := stats.Snapshot()
	if len(snap) != 1 || snap[0].Failed != 1 || !strings.Contains(snap[0].Errors[0].Message, "boom") {
		t.Errorf("Snapshot() = %+v, want one failure mentioning the panic", snap)
	}
}

func TestStatsSummary(t *testing.T) {
	env := newEnv(t)
	var stats indexers.Stats
	byNode := indexers.IndexFunc("byNode", compile(t, env, `object.spec.nodeName`, indexers.KindIndex), &stats)
	byOwner := indexers.IndexFunc("byOwner", compile(t, env, `object.metadata.ownerReferences[0].name`, indexers.KindIndex), &stats)
	byPhase := indexers.IndexFunc("byPhase", compile(t, env, `object.status.phase`, indexers.KindIndex), &stats)
	for i := range 10000 {
		node := "n1"
		if i%3000 == 0 {
			node = "" // 4 pods without a node
		}
		o := pod("default", fmt.Sprint("p", i), node, "Running")
		if i%5000 == 0 {
			o.Object["metadata"].(map[string]any)["ownerReferences"] = []any{}
		}
		for _, f := range []cache.IndexFunc{byNode, byOwner, byPhase} {
			if _, err := f(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{
		`index "byNode": 4 of 10000 objects failed: default/p0: no such key: nodeName`,
		`index "byOwner": 10000 of 10000 objects failed: default/p1: no such key: ownerReferences (9998); default/p0: index out of bounds: 0 (2)`,
	}
	if got := stats.Summary(); !reflect.DeepEqual(got, want) {
		t.Errorf("Summary():\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStatsKeepsFewMessages(t *testing.T) {
	env := newEnv(t)
	var stats indexers.Stats
	f := indexers.IndexFunc("byLabel", compile(t, env, `object.metadata.labels[object.spec.label]`, indexers.KindIndex), &stats)
	for i := range 15 {
		o := pod("default", "a", "", "")
		o.Object["spec"].(map[string]any)["label"] = fmt.Sprint("missing", i)
		if _, err := f(o); err != nil {
			t.Fatal(err)
		}
	}
	snap := stats.Snapshot()[0]
	if snap.Failed != 15 || len(snap.Errors) != 10 {
		t.Errorf("Failed %d, %d messages kept; want 15 and 10", snap.Failed, len(snap.Errors))
	}
	if got := stats.Summary()[0]; !strings.HasSuffix(got, "; other errors (5)") {
		t.Errorf("Summary() = %q, want it to end with the failures whose message was not kept", got)
	}
}

func TestNilStats(t *testing.T) {
	env := newEnv(t)
	f := indexers.IndexFunc("byNode", compile(t, env, `object.spec.nodeName`, indexers.KindIndex), nil)
	if values, err := f(pod("default", "a", "", "")); values != nil || err != nil {
		t.Errorf("IndexFunc = %q, %v; want nothing", values, err)
	}
	var stats *indexers.Stats
	if stats.Summary() != nil || stats.Snapshot() != nil {
		t.Error("a nil Stats has counters")
	}
}

func TestIndexers(t *testing.T) {
	env := newEnv(t)
	byNode := compile(t, env, `object.spec.nodeName`, indexers.KindIndex)
	idx, err := indexers.Indexers(map[string]*indexers.Program{"byNode": byNode}, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, idx)
	for _, o := range []any{pod("default", "a", "n1", ""), pod("other", "b", "n1", ""), "not an object"} {
		if err := store.Add(o); err != nil && o != "not an object" {
			t.Fatal(err)
		}
	}
	for _, q := range []struct{ index, value, want string }{
		{indexers.NamespaceIndex, "other", "other/b"},
		{"byNode", "n1", "default/a other/b"},
	} {
		keys, err := store.IndexKeys(q.index, q.value)
		sort.Strings(keys)
		if got := strings.Join(keys, " "); err != nil || got != q.want {
			t.Errorf("IndexKeys(%q, %q) = %q, %v; want %q", q.index, q.value, got, err, q.want)
		}
	}
	for _, name := range []string{"", indexers.NamespaceIndex} {
		if _, err := indexers.Indexers(map[string]*indexers.Program{name: byNode}, nil); err == nil {
			t.Errorf("Indexers accepted an index named %q", name)
		}
	}
}

func TestNamespaceIndexFunc(t *testing.T) {
	if values, err := indexers.NamespaceIndexFunc(pod("default", "a", "", "")); err != nil || !reflect.DeepEqual(values, []string{"default"}) {
		t.Errorf("NamespaceIndexFunc(pod) = %q, %v", values, err)
	}
	if values, err := indexers.NamespaceIndexFunc(42); err != nil || values != nil {
		t.Errorf("NamespaceIndexFunc(42) = %q, %v; want nothing", values, err)
	}
}

// TestIndexFuncConcurrent updates a store from several goroutines while
// reading the stats; run with -race.
func TestIndexFuncConcurrent(t *testing.T) {
	env := newEnv(t)
	var stats indexers.Stats
	f := indexers.IndexFunc("byNode", compile(t, env, `object.spec.nodeName`, indexers.KindIndex), &stats)
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"byNode": f})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				node := fmt.Sprint("n", i%3)
				if i%10 == 0 {
					node = ""
				}
				if err := store.Update(pod("default", fmt.Sprint("p", g, "-", i), node, "")); err != nil {
					t.Error(err)
				}
				_ = stats.Summary()
			}
		})
	}
	wg.Wait()
	snap := stats.Snapshot()[0]
	if snap.Evaluated != 400 || snap.Failed != 40 {
		t.Errorf("Evaluated %d, Failed %d; want 400 and 40", snap.Evaluated, snap.Failed)
	}
}

// TestIndexFuncStopped checks that an index function whose program's budget
// has ended (the command is ending) leaves objects unindexed without
// counting failures: there is nothing to report about the expression.
func TestIndexFuncStopped(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := indexers.NewBudget(ctx, 0)
	for _, expr := range []string{
		`object.status.phase`,
		`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, a + b > 0)) ? object.status.phase : ""`,
	} {
		stats := &indexers.Stats{}
		fn := indexers.IndexFunc("byPhase", compile(t, env, expr, indexers.KindIndex).WithBudget(stopped), stats)
		values, err := fn(pod("default", "a", "n1", "Running"))
		if err != nil || values != nil {
			t.Errorf("%s: index values %q, %v; want none", expr, values, err)
		}
		if snap := stats.Snapshot(); len(snap) != 1 || snap[0].Failed != 0 || len(stats.Summary()) != 0 {
			t.Errorf("%s: stats %+v, summary %q; want no failure", expr, snap, stats.Summary())
		}
	}
}

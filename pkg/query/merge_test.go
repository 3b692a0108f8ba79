package query

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// rankLabel reads the "rank" label as a number; it fails when there is none.
func rankLabel(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	r, ok := m.GetLabels()["rank"]
	if !ok {
		return nil, errors.New(`no such key: rank`)
	}
	return strconv.ParseInt(r, 10, 64)
}

func teamLabel(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return m.GetLabels()["team"], nil
}

// twoResources are a pod indexer and a deployment indexer whose objects
// carry rank and team labels: "name:rank:team" each.
func twoResources(t *testing.T, pods, deploys []string) []cache.Indexer {
	t.Helper()
	label := func(spec string) (string, map[string]string) {
		f := strings.Split(spec, ":")
		l := map[string]string{"team": f[2]}
		if f[1] != "" {
			l["rank"] = f[1]
		}
		return f[0], l
	}
	var po, de []any
	for _, s := range pods {
		n, l := label(s)
		p := pod("default", n+"-0", "", "", 0, time.Hour)
		p.Labels = l
		po = append(po, p)
	}
	for _, s := range deploys {
		n, l := label(s)
		d := deployment("default", n, 1, time.Hour)
		d.Labels = l
		de = append(de, d)
	}
	return []cache.Indexer{newIndexer(t, podIndexers, po...), newIndexer(t, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, de...)}
}

func mergedKeys(results []*Result, sorted bool) []string {
	var out []string
	for _, ref := range MergedOrder(results, sorted, false) {
		out = append(out, indexers.ObjectName(results[ref.Result].Items[ref.Item].Object))
	}
	return out
}

// TestRunAllLimitsTheMergedAnswer checks that over several resources the
// limit keeps the first objects of the answer they make together, and the
// largest groups of their merged counts, not so many of each resource.
func TestRunAllLimitsTheMergedAnswer(t *testing.T) {
	idxs := twoResources(t,
		[]string{"a:1:x", "d:4:x", "e:5:z"},
		[]string{"b:2:z", "c:3:y", "f:6:y", "g::y"})
	both := func(s Spec) []Spec { return []Spec{s, s} }

	t.Run("resource by resource", func(t *testing.T) {
		results, err := RunAll(idxs, both(Spec{Limit: 4}))
		if err != nil {
			t.Fatal(err)
		}
		got := mergedKeys(results, false)
		want := []string{"default/a-0", "default/d-0", "default/e-0", "default/b"}
		if !slices.Equal(got, want) {
			t.Errorf("--limit 4: %q, want %q", got, want)
		}
	})

	t.Run("sorted across resources, columns of the kept objects only", func(t *testing.T) {
		spec := Spec{SortBy: rankLabel, Limit: 3, Columns: []Column{{Name: "rank", Value: rankLabel}}}
		results, err := RunAll(idxs, both(spec))
		if err != nil {
			t.Fatal(err)
		}
		// g has no rank: it sorts first, as null.
		got := mergedKeys(results, true)
		want := []string{"default/g", "default/a-0", "default/b"}
		if !slices.Equal(got, want) {
			t.Errorf("--sort-by rank --limit 3: %q, want %q", got, want)
		}
		for _, r := range results {
			if !slices.Equal(r.ColumnNames, []string{"rank"}) {
				t.Errorf("column names %q", r.ColumnNames)
			}
			for _, it := range r.Items {
				if len(it.Values) != 1 || it.Values[0] == nil {
					t.Errorf("%s has no rank column: %v", indexers.ObjectName(it.Object), it.Values)
				}
			}
		}
		// The column is evaluated on the two deployments kept, not on
		// the three a limit of each resource would keep.
		if got, want := warningStrings(results[1]), []string{
			"--sort-by: 1 of 4 objects failed: default/g: no such key: rank",
			"--columns rank: 1 of 2 objects failed: default/g: no such key: rank",
		}; !slices.Equal(got, want) {
			t.Errorf("warnings of deployments %q, want %q", got, want)
		}
		if got := warningStrings(results[0]); len(got) != 0 {
			t.Errorf("warnings of pods %q", got)
		}
	})

	t.Run("groups merged before the cut", func(t *testing.T) {
		// Per resource the two largest groups are p and q (pods), r and s
		// (deployments), 3 each; z, third in each, is the largest of all.
		idxs := twoResources(t,
			[]string{"a::p", "b::p", "c::p", "d::q", "e::q", "f::q", "g::z", "h::z"},
			[]string{"i::r", "j::r", "k::r", "l::s", "m::s", "n::s", "o::z", "q::z"})
		results, err := RunAll(idxs, both(Spec{Count: true, GroupBy: teamLabel, Limit: 2}))
		if err != nil {
			t.Fatal(err)
		}
		got := MergeGroups(results, 2).Groups
		want := []Group{{"z", 4}, {"p", 3}}
		if !slices.Equal(got, want) {
			t.Errorf("groups %v, want %v", got, want)
		}
	})
}

func TestMergeGroups(t *testing.T) {
	a := &Result{Mode: ModeGroups, Groups: []Group{{"x", 3}, {"y", 1}}}
	b := &Result{Mode: ModeGroups, Groups: []Group{{"y", 3}, {"z", 2}}}
	got := MergeGroups([]*Result{a, b}, 2)
	if len(got.Groups) != 2 || got.Groups[0] != (Group{"y", 4}) || got.Groups[1] != (Group{"x", 3}) {
		t.Fatalf("merged %v, want y=4, x=3", got.Groups)
	}
}

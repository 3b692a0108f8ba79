package query

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// RunAll answers one query over several resources: specs[i] over the
// objects of idxs[i], one Result each, in the same order. The limit applies
// to the answer the resources make together, as it is printed, never to
// each resource alone: groups are counted over every resource (uncut here;
// MergeGroups adds them up and keeps the largest), and objects are put in
// the order of the merged answer (see MergedOrder) before the first
// Spec.Limit of them are kept. Columns are evaluated, and their failures
// counted, only for the objects kept. With one resource it is Run.
func RunAll(idxs []cache.Indexer, specs []Spec) ([]*Result, error) {
	if len(idxs) == 1 {
		res, err := Run(idxs[0], specs[0])
		if err != nil {
			return nil, err
		}
		return []*Result{res}, nil
	}
	results := make([]*Result, len(idxs))
	for i, idx := range idxs {
		sp := specs[i]
		sp.Columns = nil
		if sp.Count || len(sp.Aggregates) > 0 {
			sp.Limit = 0
		}
		res, err := Run(idx, sp)
		if err != nil {
			return nil, err
		}
		results[i] = res
	}
	if specs[0].Count || len(specs[0].Aggregates) > 0 {
		return results, nil
	}
	LimitMerged(results, specs[0].Limit, specs[0].SortBy != nil, specs[0].Descending)
	for i, r := range results {
		if err := evalColumns(r, specs[i]); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// LimitMerged keeps the first limit objects (0: all) of the answer that
// results make together, in MergedOrder (sorted and descending as there),
// and drops the others from their results.
func LimitMerged(results []*Result, limit int, sorted, descending bool) {
	if limit <= 0 {
		return
	}
	refs := MergedOrder(results, sorted, descending)
	if len(refs) <= limit {
		return
	}
	keep := make([][]bool, len(results))
	for i, r := range results {
		keep[i] = make([]bool, len(r.Items))
	}
	for _, ref := range refs[:limit] {
		keep[ref.Result][ref.Item] = true
	}
	for i, r := range results {
		kept := r.Items[:0:0]
		for j, item := range r.Items {
			if keep[i][j] {
				kept = append(kept, item)
			}
		}
		r.Items = kept
	}
}

// ItemRef is the item-th item of the result-th Result.
type ItemRef struct{ Result, Item int }

// MergedOrder returns the items of results (each in Run's order) in the
// order of the answer they make together: with sorted (a --sort-by), by
// sort key across the resources, ties broken by namespace, then name, then
// the order of the resources, as kubectl get --sort-by orders a list of
// several kinds; else resource by resource, as kubectl get prints several
// resource types. With descending, sort keys go from the largest to the
// smallest, ties in the same order as ascending ones.
func MergedOrder(results []*Result, sorted, descending bool) []ItemRef {
	var refs []ItemRef
	for r, res := range results {
		for i := range res.Items {
			refs = append(refs, ItemRef{r, i})
		}
	}
	if !sorted {
		return refs
	}
	type names struct{ namespace, name string }
	keys := make([][]names, len(results))
	for r, res := range results {
		keys[r] = make([]names, len(res.Items))
		for i, item := range res.Items {
			if m, err := meta.Accessor(item.Object); err == nil {
				keys[r][i] = names{m.GetNamespace(), m.GetName()}
			}
		}
	}
	slices.SortStableFunc(refs, func(a, b ItemRef) int {
		if c := Compare(results[a.Result].Items[a.Item].key, results[b.Result].Items[b.Item].key); c != 0 {
			if descending {
				return -c
			}
			return c
		}
		na, nb := keys[a.Result][a.Item], keys[b.Result][b.Item]
		if c := strings.Compare(na.namespace, nb.namespace); c != 0 {
			return c
		}
		return strings.Compare(na.name, nb.name)
	})
	return refs
}

// MergeGroups adds up the groups of results, the answers of RunAll for
// several resources, and keeps the limit largest (all for 0), ordered as
// Run orders groups.
func MergeGroups(results []*Result, limit int) *Result {
	counts := map[string]int{}
	for _, r := range results {
		for _, g := range r.Groups {
			counts[g.Value] += g.Count
		}
	}
	merged := &Result{Mode: ModeGroups}
	for v, n := range counts {
		merged.Groups = append(merged.Groups, Group{Value: v, Count: n})
	}
	sort.Slice(merged.Groups, func(i, j int) bool {
		a, b := merged.Groups[i], merged.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Value < b.Value
	})
	if limit > 0 && len(merged.Groups) > limit {
		merged.Groups = merged.Groups[:limit]
	}
	return merged
}

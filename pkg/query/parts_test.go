package query

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// TestRunInParts runs Where and GroupBy over enough pods to be split among
// goroutines, and checks the answers against counts made here: the same
// matches in namespace/name order, groups, and warnings (failures, the
// smallest failing object, distinct messages) as one goroutine gives; and
// a stopping error in any part ends the query.
func TestRunInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 3 * parallelMin
	if partsOf(n) < 2 {
		t.Fatalf("%d objects are evaluated in %d part", n, partsOf(n))
	}
	objs := make([]any, n)
	for i := range n {
		objs[i] = pod(fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("p-%05d", i), fmt.Sprintf("node-%d", i%13), corev1.PodRunning, int32(i), 0)
	}
	idx := newIndexer(t, cache.Indexers{}, objs...)
	number := func(obj any) int {
		i, _ := strconv.Atoi(strings.TrimPrefix(obj.(*corev1.Pod).Name, "p-"))
		return i
	}
	// Pods whose number is a multiple of 1000 fail, with one of two
	// messages; of the others, multiples of 3 match.
	fail := func(i int) error {
		if i%1000 != 0 {
			return nil
		}
		return fmt.Errorf("failure %d", i/1000%2)
	}
	where := func(obj any) (bool, error) {
		i := number(obj)
		if err := fail(i); err != nil {
			return false, err
		}
		return i%3 == 0, nil
	}
	groupBy := func(obj any) (any, error) {
		i := number(obj)
		if err := fail(i); err != nil {
			return nil, err
		}
		return []any{"all", fmt.Sprintf("node-%d", i%13), "all"}, nil
	}
	var failed, matched int
	perNode := map[string]int{}
	for i := range n {
		switch {
		case fail(i) != nil:
			failed++
		default:
			perNode[fmt.Sprintf("node-%d", i%13)]++
			if i%3 == 0 {
				matched++
			}
		}
	}

	res, err := Run(idx, Spec{Where: where})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != matched || len(res.Items) != matched {
		t.Errorf("where: %d matched, %d items; want %d", res.Matched, len(res.Items), matched)
	}
	for i := 1; i < len(res.Items); i++ {
		a, b := res.Items[i-1].Object.(*corev1.Pod), res.Items[i].Object.(*corev1.Pod)
		if a.Namespace+"/"+a.Name >= b.Namespace+"/"+b.Name {
			t.Fatalf("where: %s/%s before %s/%s", a.Namespace, a.Name, b.Namespace, b.Name)
		}
	}
	want := fmt.Sprintf("--where: %d of %d objects failed: ns-0/p-00000: failure 0 (and 1 other error)", failed, n)
	if got := warningStrings(res); len(got) != 1 || got[0] != want {
		t.Errorf("where: warnings %q, want %q", got, want)
	}

	res, err = Run(idx, Spec{Count: true, GroupBy: groupBy})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 14 || res.Groups[0] != (Group{Value: "all", Count: n - failed}) {
		t.Fatalf("group-by: %d groups, first %+v; want 14, all=%d", len(res.Groups), res.Groups[0], n-failed)
	}
	for _, g := range res.Groups[1:] {
		if g.Count != perNode[g.Value] {
			t.Errorf("group-by: %s counted %d, want %d", g.Value, g.Count, perNode[g.Value])
		}
	}
	want = strings.Replace(want, "--where", "--group-by", 1)
	if got := warningStrings(res); len(got) != 1 || got[0] != want {
		t.Errorf("group-by: warnings %q, want %q", got, want)
	}

	// A stopping error on one object ends the query, whichever part holds
	// it.
	spent := errors.New("budget spent")
	stopAt := func(obj any) error {
		if number(obj) == n-1 {
			return spent
		}
		return nil
	}
	stop := func(err error) bool { return errors.Is(err, spent) }
	for name, spec := range map[string]Spec{
		"where":    {Where: func(obj any) (bool, error) { return true, stopAt(obj) }},
		"group-by": {Count: true, GroupBy: func(obj any) (any, error) { return "x", stopAt(obj) }},
	} {
		spec.Stop = stop
		if _, err := Run(idx, spec); !errors.Is(err, spent) {
			t.Errorf("%s: %v, want the stopping error", name, err)
		}
	}
}

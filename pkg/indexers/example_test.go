package indexers_test

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func examplePod(name, node, phase string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       map[string]any{"nodeName": node},
		"status":     map[string]any{"phase": phase},
	}}
}

func ExampleEnv_Compile() {
	env, err := indexers.NewEnv()
	if err != nil {
		panic(err)
	}
	where, err := env.Compile(`object.status.phase == "Pending"`, indexers.KindPredicate, "--where")
	if err != nil {
		panic(err)
	}
	for _, pod := range []*unstructured.Unstructured{examplePod("a", "n1", "Pending"), examplePod("b", "n1", "Running")} {
		ok, err := where.Match(pod)
		fmt.Println(pod.GetName(), ok, err)
	}
	// Output:
	// a true <nil>
	// b false <nil>
}

func ExampleExprError() {
	env, _ := indexers.NewEnv()
	_, err := env.Compile(`obect.status.phase == "Running"`, indexers.KindPredicate, "--where")
	fmt.Println(err)
	// Output:
	// invalid --where expression: undeclared reference to 'obect' (did you mean "object"?)
	//  | obect.status.phase == "Running"
	//  | ^
}

func ExampleEnv_CompileWithSchema() {
	env, _ := indexers.NewEnv()
	// In a program, the schema comes from ResolveSchema.
	schema := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"status": {SchemaProps: spec.SchemaProps{
				Type:       []string{"object"},
				Properties: map[string]spec.Schema{"phase": *spec.StringProperty()},
			}},
		},
	}}
	_, err := env.CompileWithSchema(`object.staus.phase == "Running"`, indexers.KindPredicate, "--where", schema)
	fmt.Println(err)
	_, err = env.CompileWithSchema(`object.status.phase`, indexers.KindPredicate, "--where", schema)
	fmt.Println(err)
	// Output:
	// invalid --where expression: undefined field 'staus' (did you mean "status"?)
	//  | object.staus.phase == "Running"
	//  |        ^
	// invalid --where expression: must evaluate to bool but got string
}

func ExampleIndexFunc() {
	env, _ := indexers.NewEnv()
	byNode, err := env.Compile(`object.spec.nodeName`, indexers.KindIndex, `index "byNode"`)
	if err != nil {
		panic(err)
	}
	var stats indexers.Stats
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		"byNode": indexers.IndexFunc("byNode", byNode, &stats),
	})
	unscheduled := examplePod("c", "", "Pending")
	delete(unscheduled.Object["spec"].(map[string]any), "nodeName")
	for _, pod := range []*unstructured.Unstructured{examplePod("a", "n1", "Running"), examplePod("b", "n2", "Running"), unscheduled} {
		_ = store.Add(pod) // never fails because of the index function
	}
	keys, _ := store.IndexKeys("byNode", "n1")
	fmt.Println(keys)
	for _, line := range stats.Summary() {
		fmt.Println(line)
	}
	// Output:
	// [default/a]
	// index "byNode": 1 of 3 objects failed: default/c: no such key: nodeName
}

// nodes is a Lookup over a store of nodes.
type nodes struct{ store cache.Store }

func (n nodes) Get(_, _, name string) (any, bool, error) {
	return n.store.GetByKey(name)
}

func (n nodes) ByIndex(_, index, _ string) ([]any, error) {
	return nil, fmt.Errorf("no index %q", index)
}

func ExampleProgram_WithLookup() {
	env, _ := indexers.NewEnv()
	zone, err := env.Compile(`get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"]`,
		indexers.KindValue, `column "zone"`)
	if err != nil {
		panic(err)
	}
	// The informers to start: the expression reads nodes.
	fmt.Println(zone.References())

	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ = store.Add(&unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "n1", "labels": map[string]any{"topology.kubernetes.io/zone": "eu-west-1a"}},
	}})
	v, err := zone.WithLookup(nodes{store}).Value(examplePod("a", "n1", "Running"))
	fmt.Println(v, err)
	// Output:
	// [{nodes [] [get("nodes", …)]}]
	// eu-west-1a <nil>
}

func ExampleProgram_Value() {
	env, _ := indexers.NewEnv()
	pod := examplePod("a", "n1", "Running")
	pod.Object["spec"].(map[string]any)["containers"] = []any{
		map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"memory": "256Mi"}}},
		map[string]any{"name": "sidecar", "resources": map[string]any{"requests": map[string]any{"memory": "64Mi"}}},
	}
	for _, expr := range []string{
		`object.spec.containers.map(c, c.name)`,
		`object.spec.containers.map(c, quantity(c.resources.requests.memory).asInteger()).sum()`,
		`{"node": object.spec.nodeName, "phase": object.status.phase}`,
	} {
		v, err := env.Compile(expr, indexers.KindValue, "column")
		if err != nil {
			panic(err)
		}
		out, err := v.Value(pod)
		if m, ok := out.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Printf("%s=%v ", k, m[k])
			}
			fmt.Println(err)
			continue
		}
		fmt.Printf("%#v %v\n", out, err)
	}
	// Output:
	// []interface {}{"app", "sidecar"} <nil>
	// 335544320 <nil>
	// node=n1 phase=Running <nil>
}

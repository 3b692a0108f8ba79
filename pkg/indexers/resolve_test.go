package indexers_test

import (
	"reflect"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// openAPIDiscovery serves the OpenAPI v3 documents of a real API server
// (core/v1, apps/v1, batch/v1, ...) that client-go embeds for tests. Only
// OpenAPIV3 is implemented.
type openAPIDiscovery struct {
	discovery.DiscoveryInterface
}

func (openAPIDiscovery) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

func resolve(t *testing.T, gvk schema.GroupVersionKind) *spec.Schema {
	t.Helper()
	s, err := indexers.ResolveSchema(openAPIDiscovery{}, gvk)
	if err != nil {
		t.Fatalf("ResolveSchema(%v): %v", gvk, err)
	}
	return s
}

func TestResolveSchema(t *testing.T) {
	if s := resolve(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}); s == nil || s.Properties["spec"].Properties["containers"].Items == nil {
		t.Fatalf("ResolveSchema(v1 Pod) = %v, want the pod schema with references resolved", s)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "example.com", Version: "v1", Kind: "Widget"}, // no such group version
		{Version: "v1", Kind: "Widget"},                       // no such kind
	} {
		if s := resolve(t, gvk); s != nil {
			t.Errorf("ResolveSchema(%v) = a schema, want none", gvk)
		}
	}
}

// countingOpenAPI counts the documents read through it.
type countingOpenAPI struct {
	openapi.Client
	reads *reads
}

type reads struct {
	mu sync.Mutex // guards n
	n  map[string]int
}

func (c countingOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	paths, err := c.Client.Paths()
	out := map[string]openapi.GroupVersion{}
	for p, gv := range paths {
		out[p] = countingGroupVersion{gv, p, c.reads}
	}
	return out, err
}

type countingGroupVersion struct {
	openapi.GroupVersion
	path  string
	reads *reads
}

func (g countingGroupVersion) Schema(contentType string) ([]byte, error) {
	g.reads.mu.Lock()
	g.reads.n[g.path]++
	g.reads.mu.Unlock()
	return g.GroupVersion.Schema(contentType)
}

type countingDiscovery struct {
	discovery.DiscoveryInterface
	client countingOpenAPI
}

func (d countingDiscovery) OpenAPIV3() openapi.Client { return d.client }

// TestSchemasReadEachDocumentOnce resolves kinds of two group versions
// with one Schemas, each kind from two goroutines at once: each gives the
// schema the API server's own resolver gives, and each group version's
// document is read once.
func TestSchemasReadEachDocumentOnce(t *testing.T) {
	d := countingDiscovery{client: countingOpenAPI{openapitest.NewEmbeddedFileClient(), &reads{n: map[string]int{}}}}
	schemas := indexers.NewSchemas(d)
	var wg sync.WaitGroup
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "Node"}, {Version: "v1", Kind: "Service"},
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Version: "v1", Kind: "ConfigMap"},
	} {
		want, err := (&resolver.ClientDiscoveryResolver{Discovery: openAPIDiscovery{}}).ResolveSchema(gvk)
		if err != nil {
			t.Fatalf("the API server's resolver, %v: %v", gvk, err)
		}
		for range 2 {
			wg.Go(func() {
				got, err := schemas.Resolve(gvk)
				if err != nil {
					t.Errorf("Resolve(%v): %v", gvk, err)
					return
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Resolve(%v) differs from the API server's resolver", gvk)
				}
			})
		}
	}
	wg.Wait()
	if want := map[string]int{"api/v1": 1, "apis/apps/v1": 1}; !reflect.DeepEqual(d.client.reads.n, want) {
		t.Errorf("documents read: %v, want %v", d.client.reads.n, want)
	}
}

// TestCompileWithPublishedSchemas compiles expressions against the schemas
// a real API server publishes and evaluates them on JSON objects.
func TestCompileWithPublishedSchemas(t *testing.T) {
	env := newEnv(t)
	podSchema := resolve(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	deploymentSchema := resolve(t, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})

	errorTests := []struct {
		expr   string
		schema *spec.Schema
		want   string
	}{{
		expr:   `object.staus.phase == "Running"`,
		schema: podSchema,
		want: `invalid --where expression: undefined field 'staus' (did you mean "status"?)
 | object.staus.phase == "Running"
 |        ^`,
	}, {
		expr:   `object.spec.containers.exists(c, c.ports.exists(p, p.containerPrt == 80))`,
		schema: podSchema,
		want: `invalid --where expression: undefined field 'containerPrt' (did you mean "containerPort"?)
 | object.spec.containers.exists(c, c.ports.exists(p, p.containerPrt == 80))
 |                                                      ^`,
	}, {
		expr:   `object.metadata.ownerReferences.exists(r, r.knd == "ReplicaSet")`,
		schema: podSchema,
		want: `invalid --where expression: undefined field 'knd' (did you mean "kind"?)
 | object.metadata.ownerReferences.exists(r, r.knd == "ReplicaSet")
 |                                             ^`,
	}, {
		expr:   `object.spec.replicas`,
		schema: deploymentSchema,
		want:   `invalid --where expression: must evaluate to bool but got int`,
	}, {
		expr:   `object.status.readyReplicas == "3"`,
		schema: deploymentSchema,
		want: `invalid --where expression: found no matching overload for '_==_' applied to '(int, string)'
 | object.status.readyReplicas == "3"
 |                             ^`,
	}}
	for _, tt := range errorTests {
		_, err := env.CompileWithSchema(tt.expr, indexers.KindPredicate, "--where", tt.schema)
		if err == nil || err.Error() != tt.want {
			t.Errorf("CompileWithSchema(%q) error:\n%v\nwant:\n%s", tt.expr, err, tt.want)
		}
	}

	o := pod("default", "web-1", "n1", "Running")
	o.Object["metadata"].(map[string]any)["ownerReferences"] = []any{
		map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "1", "controller": true},
	}
	valueTests := []struct {
		expr string
		want any
	}{
		{`object.status.phase == "Running" && object.spec.nodeName == "n1"`, true},
		{`object.metadata.labels.app`, "web"},
		{`object.metadata.namespace`, "default"},
		{`object.metadata.creationTimestamp`, "2024-05-01T10:00:00Z"},
		{`timestamp(object.metadata.creationTimestamp) < timestamp("2025-01-01T00:00:00Z")`, true},
		{`object.metadata.ownerReferences.exists(r, r.controller && r.kind == "ReplicaSet")`, true},
		{`object.spec.containers.map(c, quantity(c.resources.requests.memory).asInteger())`, []any{int64(128 << 20)}},
		{`object.spec.containers.all(c, !has(c.ports))`, true},
		{`object.?spec.?priority.orValue(0)`, int64(0)},
	}
	for _, tt := range valueTests {
		p, err := env.CompileWithSchema(tt.expr, indexers.KindValue, "test", podSchema)
		if err != nil {
			t.Errorf("CompileWithSchema(%q): %v", tt.expr, err)
			continue
		}
		if got, err := p.Value(o); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
	}
}

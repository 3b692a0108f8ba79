package factory

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// countedDiscovery counts the reads of every resource list.
type countedDiscovery struct {
	*fake.FakeDiscovery
	reads int
}

func (c *countedDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	c.reads++
	return c.FakeDiscovery.ServerGroupsAndResources()
}

// TestUnknownNamesReadDiscoveryOnce: names that are no resource type are
// told so, with a suggestion when one is close, and however many are
// asked, the resource lists that categories and suggestions come from
// are read once (within listsTTL).
func TestUnknownNamesReadDiscoveryOnce(t *testing.T) {
	gv := schema.GroupVersion{Version: "v1"}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	m.Add(gv.WithKind("Pod"), meta.RESTScopeNamespace)
	dc := &countedDiscovery{FakeDiscovery: &fake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Categories: []string{"all"}}},
	}}}}}
	r := NewResolver(m, dc)
	_, err := r.Resolve([]string{"podz"})
	if !IsUnknownResource(err) || !strings.Contains(err.Error(), `did you mean "pods"?`) {
		t.Fatalf("podz: %v, want an unknown resource type and pods suggested", err)
	}
	for i := range 200 {
		if _, err := r.Resolve([]string{fmt.Sprintf("nope%d", i)}); !IsUnknownResource(err) {
			t.Fatalf("nope%d: %v, want an unknown resource type", i, err)
		}
	}
	if res, err := r.Resolve([]string{"all"}); err != nil || len(res) != 1 || res[0].GVR.Resource != "pods" {
		t.Errorf("all: %v, %v; want pods", res, err)
	}
	if dc.reads != 1 {
		t.Errorf("the resource lists were read %d times for 202 names, want once", dc.reads)
	}
}

package factory

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/tools/cache"
)

// Lookup reads other resources' cached objects for the CEL functions get()
// and byIndex(). Resources are named as expressions write them ("nodes",
// "configmaps", "deploy"); each is resolved once, when added.
type Lookup struct {
	// byName is written by Add before evaluations start and only read after.
	byName map[string]*Informer
}

// NewLookup returns an empty Lookup.
func NewLookup() *Lookup { return &Lookup{byName: map[string]*Informer{}} }

// Add makes name readable through inf. Call it before any evaluation.
func (l *Lookup) Add(name string, inf *Informer) { l.byName[name] = inf }

func (l *Lookup) informer(resource string) (*Informer, error) {
	inf, ok := l.byName[resource]
	if !ok {
		return nil, fmt.Errorf("no informer for %q", resource)
	}
	return inf, nil
}

// Get returns the cached object namespace/name of resource ("" namespace for
// cluster-scoped resources).
func (l *Lookup) Get(resource, namespace, name string) (any, bool, error) {
	inf, err := l.informer(resource)
	if err != nil {
		return nil, false, err
	}
	switch {
	case inf.Resource.Namespaced && namespace == "":
		return nil, false, fmt.Errorf("%s is namespaced: use get(%q, namespace, name)", inf.Resource, resource)
	case !inf.Resource.Namespaced && namespace != "":
		return nil, false, fmt.Errorf("%s is cluster-scoped: use get(%q, name)", inf.Resource, resource)
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return inf.Informer.GetIndexer().GetByKey(key)
}

// ByIndex returns the cached objects of resource whose index holds value.
func (l *Lookup) ByIndex(resource, index, value string) ([]any, error) {
	inf, err := l.informer(resource)
	if err != nil {
		return nil, err
	}
	idx := inf.Informer.GetIndexer()
	if _, ok := idx.GetIndexers()[index]; !ok {
		return nil, UnknownIndexError(inf.Resource, index, idx.GetIndexers())
	}
	return idx.ByIndex(index, value)
}

// UnknownIndexError says that resource has no index called name and lists
// those it has.
func UnknownIndexError(res Resource, name string, have cache.Indexers) error {
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("unknown index %q for %s: known indexes are %s (define one with --index NAME=CEL)", name, res, strings.Join(names, ", "))
}

package factory

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Lookup reads other resources' cached objects for the CEL functions get()
// and byIndex(). Resources are named as expressions write them ("nodes",
// "configmaps", "deploy"); each is resolved once, when added.
type Lookup struct {
	// byName is written by Add before evaluations start and only read after.
	byName map[string]*lookupEntry
}

// lookupEntry is what a Lookup reads one resource from: an informer of
// every namespace, or informers of some namespaces.
type lookupEntry struct {
	res Resource
	// all reads every namespace (or the cluster-scoped resource); nil when
	// byNamespace reads the namespaces the resource is read in.
	all         *Informer
	byNamespace map[string]*Informer
	// namespaces are the keys of byNamespace, sorted.
	namespaces []string
}

// NewLookup returns an empty Lookup.
func NewLookup() *Lookup { return &Lookup{byName: map[string]*lookupEntry{}} }

// Add makes name readable through infs: one informer of every namespace
// (or of a cluster-scoped resource), or one informer per namespace that
// name is read in, each scoped to its namespace. get() of another
// namespace then fails with a *NamespaceNotWatchedError, and byIndex()
// reads the objects of those namespaces only. Call it before any
// evaluation, once per name.
func (l *Lookup) Add(name string, infs ...*Informer) {
	if len(infs) == 0 {
		return
	}
	e := &lookupEntry{res: infs[0].Resource}
	if len(infs) == 1 && (infs[0].Scope.Namespace == "" || !infs[0].Resource.Namespaced) {
		e.all = infs[0]
	} else {
		e.byNamespace = map[string]*Informer{}
		for _, inf := range infs {
			e.byNamespace[inf.Scope.Namespace] = inf
		}
		e.namespaces = slices.Sorted(maps.Keys(e.byNamespace))
	}
	l.byName[name] = e
}

// With returns a Lookup that reads what l reads and, besides, name through
// infs, as Add would; l is not changed, so programs bound to it may go on
// evaluating while the new Lookup is made and used.
func (l *Lookup) With(name string, infs ...*Informer) *Lookup {
	nl := &Lookup{byName: maps.Clone(l.byName)}
	nl.Add(name, infs...)
	return nl
}

// Informers returns the informers l reads name through, nil when l does
// not read name.
func (l *Lookup) Informers(name string) []*Informer {
	e, ok := l.byName[name]
	if !ok {
		return nil
	}
	return e.informers()
}

// InformersOf returns the informers l reads the resource gvr through,
// under whichever name; nil when l does not read gvr.
func (l *Lookup) InformersOf(gvr schema.GroupVersionResource) []*Informer {
	for _, name := range slices.Sorted(maps.Keys(l.byName)) {
		if e := l.byName[name]; e.res.GVR == gvr {
			return e.informers()
		}
	}
	return nil
}

// All returns every informer l reads, each once, in the order of the
// names it reads them under.
func (l *Lookup) All() []*Informer {
	var out []*Informer
	for _, name := range slices.Sorted(maps.Keys(l.byName)) {
		for _, inf := range l.byName[name].informers() {
			if !slices.Contains(out, inf) {
				out = append(out, inf)
			}
		}
	}
	return out
}

// Resources returns the resources l reads, each once, in the order of
// the names it reads them under.
func (l *Lookup) Resources() []Resource {
	var out []Resource
	for _, name := range slices.Sorted(maps.Keys(l.byName)) {
		r := l.byName[name].res
		if !slices.ContainsFunc(out, func(o Resource) bool { return o.GVR == r.GVR }) {
			out = append(out, r)
		}
	}
	return out
}

func (e *lookupEntry) informers() []*Informer {
	if e.all != nil {
		return []*Informer{e.all}
	}
	out := make([]*Informer, 0, len(e.namespaces))
	for _, ns := range e.namespaces {
		out = append(out, e.byNamespace[ns])
	}
	return out
}

func (l *Lookup) entry(resource string) (*lookupEntry, error) {
	e, ok := l.byName[resource]
	if !ok {
		return nil, fmt.Errorf("no informer for %q", resource)
	}
	return e, nil
}

// in returns the informer that holds namespace's objects.
func (e *lookupEntry) in(namespace string) (*Informer, error) {
	if e.all != nil {
		return e.all, nil
	}
	inf, ok := e.byNamespace[namespace]
	if !ok {
		return nil, &NamespaceNotWatchedError{Resource: e.res, Namespace: namespace, Watched: slices.Clone(e.namespaces)}
	}
	return inf, nil
}

// Get returns the cached object namespace/name of resource ("" namespace for
// cluster-scoped resources).
func (l *Lookup) Get(resource, namespace, name string) (any, bool, error) {
	e, err := l.entry(resource)
	if err != nil {
		return nil, false, err
	}
	switch {
	case e.res.Namespaced && namespace == "":
		return nil, false, fmt.Errorf("%s is namespaced: use get(%q, namespace, name)", e.res, resource)
	case !e.res.Namespaced && namespace != "":
		return nil, false, fmt.Errorf("%s is cluster-scoped: use get(%q, name)", e.res, resource)
	}
	inf, err := e.in(namespace)
	if err != nil {
		return nil, false, err
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return inf.Informer.GetIndexer().GetByKey(key)
}

// ByIndex returns the cached objects of resource whose index holds value.
// For a resource read in some namespaces only, the namespace index of
// another namespace fails with a *NamespaceNotWatchedError, and any other
// index answers with the objects of those namespaces.
func (l *Lookup) ByIndex(resource, index, value string) ([]any, error) {
	e, err := l.entry(resource)
	if err != nil {
		return nil, err
	}
	if e.all != nil {
		return byIndex(e.all, index, value)
	}
	if index == cache.NamespaceIndex {
		inf, err := e.in(value)
		if err != nil {
			return nil, err
		}
		return byIndex(inf, index, value)
	}
	var out []any
	for _, ns := range e.namespaces {
		objs, err := byIndex(e.byNamespace[ns], index, value)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func byIndex(inf *Informer, index, value string) ([]any, error) {
	idx := inf.Informer.GetIndexer()
	if _, ok := idx.GetIndexers()[index]; !ok {
		return nil, UnknownIndexError(inf.Resource, index, idx.GetIndexers())
	}
	return idx.ByIndex(index, value)
}

// ReadsNamespace fails with a *NamespaceNotWatchedError when l reads
// resource in some namespaces only, not in namespace; it implements
// indexers.NamespaceReader.
func (l *Lookup) ReadsNamespace(resource, namespace string) error {
	e, err := l.entry(resource)
	if err != nil || e.all != nil {
		return err
	}
	_, err = e.in(namespace)
	return err
}

// NamespaceNotWatchedError is a get() or byIndex() of a namespace where a
// Lookup does not read the resource.
type NamespaceNotWatchedError struct {
	Resource  Resource
	Namespace string
	// Watched are the namespaces the resource is read in, sorted.
	Watched []string
}

func (e *NamespaceNotWatchedError) Error() string {
	return fmt.Sprintf("%s are not watched in namespace %q, only in %s", e.Resource, e.Namespace, strings.Join(e.Watched, ", "))
}

// UnknownIndexError says that resource has no index called name and lists
// those it has.
func UnknownIndexError(res Resource, name string, have cache.Indexers) error {
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("unknown index %q for %s: known indexes are %s", name, res, strings.Join(names, ", "))
}

// Scope reports whether l reads resource (as an expression names it) and
// whether that resource is namespaced.
func (l *Lookup) Scope(resource string) (namespaced, ok bool) {
	e, ok := l.byName[resource]
	if !ok {
		return false, false
	}
	return e.res.Namespaced, true
}

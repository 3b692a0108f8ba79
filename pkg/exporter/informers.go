package exporter

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// countCaches registers on each informer a watches (lookup-only ones
// included) a handler that counts its objects and the values of the
// indexes c reports, for telemetry to read.
func (a *activeConfig) countCaches(c *Compiled) error {
	reported := reportedIndexes(c, a.informers)
	for _, w := range a.watched() {
		for _, inf := range w.infs {
			if reported[inf] == nil {
				reported[inf] = sets.New[string]()
			}
		}
	}
	for inf, names := range reported {
		all := inf.Informer.GetIndexer().GetIndexers()
		ix := cache.Indexers{}
		for name := range names {
			if fn, ok := all[name]; ok {
				ix[name] = fn
			}
		}
		count := newCacheCount(ix)
		reg, err := inf.Informer.AddEventHandler(count)
		if err != nil {
			return err
		}
		a.counts[inf] = count
		a.regs = append(a.regs, registration{inf, reg})
	}
	return nil
}

// reportedIndexes returns the names of the indexes telemetry reports of
// each informer of informers (the informers of c's resources, in order).
func reportedIndexes(c *Compiled, informers [][]*factory.Informer) map[*factory.Informer]sets.Set[string] {
	out := map[*factory.Informer]sets.Set[string]{}
	for i, infs := range informers {
		for _, inf := range infs {
			if out[inf] == nil {
				out[inf] = sets.New[string]()
			}
			for name := range c.Resources[i].Indexes {
				out[inf].Insert(name)
			}
		}
	}
	return out
}

// informerKey identifies an informer as the factory does: cluster-scoped
// resources have no namespace.
type informerKey struct {
	gvr   string
	scope factory.Scope
}

// informerWant is what a config needs of one informer.
type informerWant struct {
	res   factory.Resource
	scope factory.Scope
	// fields is the union of what the entries read; nil: whole objects.
	fields *jsonval.Paths
	// indexes are the index programs by name.
	indexes map[string]*indexers.Program
	// readers is how many handlers take each object from its event; 0:
	// the cache keeps the objects (see factory.Needs.Readers).
	readers int
	// early are the functions of the readers that compute objects of the
	// first list as they arrive (see factory.Needs.Early).
	early []func(k8sruntime.Object)
}

// earlyNeeds returns the factory.Needs.Early of w: every function of
// w.early in turn, when each reader gave one; nil otherwise.
func (w *informerWant) earlyNeeds() func(k8sruntime.Object) {
	if w.readers == 0 || len(w.early) != w.readers {
		return nil
	}
	if len(w.early) == 1 {
		return w.early[0]
	}
	fns := w.early
	return func(obj k8sruntime.Object) {
		for _, fn := range fns {
			fn(obj)
		}
	}
}

// informerPlan merges the needs of a config's entries per informer.
type informerPlan struct {
	wants map[informerKey]*informerWant
	order []informerKey
}

func newInformerPlan() *informerPlan {
	return &informerPlan{wants: map[informerKey]*informerWant{}}
}

// indexed reports whether an informer of the plan has index functions.
func (p *informerPlan) indexed() bool {
	for _, w := range p.wants {
		if len(w.indexes) > 0 {
			return true
		}
	}
	return false
}

// add merges one entry's needs; nil fields means whole objects. readers
// is how many of the engine's handlers read the objects only as events
// deliver them (see factory.Needs.Readers); 0 when the entry reads the
// cache afterwards (see readsCache), which keeps the objects for every
// entry. Index functions keep them too: the factory sees to that. early,
// when not nil, computes the objects of the first list as they arrive for
// the entry's reader (see factory.Needs.Early).
func (p *informerPlan) add(res factory.Resource, scope factory.Scope, fields *jsonval.Paths, ix map[string]*indexers.Program, readers int, early func(k8sruntime.Object)) informerKey {
	if !res.Namespaced {
		scope.Namespace = ""
	}
	k := informerKey{gvr: res.GVR.String(), scope: scope}
	w, ok := p.wants[k]
	if !ok {
		w = &informerWant{res: res, scope: scope, fields: fields, indexes: map[string]*indexers.Program{}, readers: readers}
		if readers > 0 && early != nil {
			w.early = append(w.early, early)
		}
		p.wants[k] = w
		p.order = append(p.order, k)
	} else {
		if w.fields != nil && (fields == nil || !w.fields.Union(fields)) {
			w.fields = nil
		}
		if readers == 0 || w.readers == 0 {
			w.readers = 0
		} else {
			w.readers += readers
			if early != nil {
				w.early = append(w.early, early)
			}
		}
	}
	for name, prog := range ix {
		if _, dup := w.indexes[name]; !dup {
			w.indexes[name] = prog
		}
	}
	return k
}

// ensure returns a running informer that keeps what w needs, with w's
// indexes. An informer kept from the previous config is reused when it
// keeps enough of the objects and its same-named indexes have the same
// expressions; otherwise it is replaced, which lists again.
func (x *Exporter) ensure(next *activeConfig, w *informerWant, stats *indexers.Stats) (*factory.Informer, error) {
	needs := factory.Needs{Mode: factory.ModeFull, Fields: w.fields, Readers: w.readers, Early: w.earlyNeeds()}
	inf, err := x.factory.Request(w.res, w.scope, needs)
	if err == nil && x.indexesConflict(inf, w.indexes) {
		err = errors.New("an index changed its expression")
	}
	if err != nil {
		x.log.Info("listing again: the new config needs what the cache cannot give", "resource", w.res.String()+namespaceSuffix(w.scope), "reason", err)
		if old := x.factory.Detach(w.res, w.scope); old != nil {
			next.replaced = append(next.replaced, old)
		}
		if inf, err = x.factory.Request(w.res, w.scope, needs); err != nil {
			return nil, err
		}
	}
	if prev := x.current(); prev == nil || !prev.uses(inf) {
		next.started = append(next.started, inf)
	}
	add := map[string]*indexers.Program{}
	for name, prog := range w.indexes {
		if _, ok := x.indexExprs[inf][name]; !ok {
			add[name] = prog
		}
	}
	if len(add) > 0 {
		if _, err := x.factory.Request(w.res, w.scope, factory.Needs{Mode: factory.ModeFull, Fields: w.fields, Indexers: indexers.IndexFuncs(add, stats)}); err != nil {
			return nil, err
		}
		if x.indexExprs[inf] == nil {
			x.indexExprs[inf] = map[string]string{}
		}
		for name, prog := range add {
			x.indexExprs[inf][name] = prog.Expr()
		}
	}
	return inf, nil
}

// indexesConflict reports whether inf has an index of one of the names with
// another expression: client-go cannot replace an index function.
func (x *Exporter) indexesConflict(inf *factory.Informer, ix map[string]*indexers.Program) bool {
	for name, prog := range ix {
		if expr, ok := x.indexExprs[inf][name]; ok && expr != prog.Expr() {
			return true
		}
	}
	return false
}

func (x *Exporter) forgetIndexes(inf *factory.Informer) {
	if inf != nil {
		delete(x.indexExprs, inf)
	}
}

// lookupNeed is a resource read by get() or byIndex(), with the indexes
// byIndex() names and the namespaces it is read in (nil: every one).
type lookupNeed struct {
	name       string
	res        factory.Resource
	indexes    map[string]*indexers.Program
	namespaces []string
}

// lookupNeeds lists the resources that get() and byIndex() read; indexes
// named by byIndex() must be defined on a configured entry of the same
// resource.
func (x *Exporter) lookupNeeds(c *Compiled, resolved []factory.Resource) ([]lookupNeed, error) {
	var progs []*indexers.Program
	for _, r := range c.Resources {
		progs = append(progs, programsOf(r)...)
	}
	wanted := indexers.ReadIndexes(progs)
	var out []lookupNeed
	looked := map[string]factory.Resource{}
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		res, err := x.resolver.ResolveOne(name)
		if clusterFailure(err) {
			return nil, err // no file's mistake: its cause first
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", c.pathReading(name), indexers.ReadBy(progs, name), err)
		}
		looked[name] = res
		ix := map[string]*indexers.Program{}
		for idx := range wanted[name] {
			if idx == indexers.NamespaceIndex {
				continue
			}
			found := false
			for i, r := range c.Resources {
				if resolved[i].GVR == res.GVR {
					if p, ok := r.Indexes[idx]; ok {
						ix[idx], found = p, true
					}
				}
			}
			if !found && indexers.IsBuiltinIndex(idx) {
				p, _, err := x.env.BuiltinIndex(idx)
				if err != nil {
					return nil, err
				}
				ix[idx], found = p, true
			}
			if !found {
				return nil, fmt.Errorf("%s: byIndex(%q, %q, …): define index %q under a resources entry for %s", c.pathReading(name), name, idx, idx, res)
			}
		}
		out = append(out, lookupNeed{name: name, res: res, indexes: ix})
	}
	scopes := lookupNamespaces(c, resolved, looked)
	for i := range out {
		out[i].namespaces = scopes[out[i].name]
	}
	return out, nil
}

// lookupNamespaces returns where an exporter of c reads each resource its
// expressions read with get() and byIndex(), by the name they give it
// (looked): nil for every namespace, else the namespaces, sorted. A
// namespaced resource is read in the namespaces of the entries whose
// expressions read it (under any name) and of the entries of the resource
// itself; in every namespace as soon as one of those entries watches every
// namespace or is of a cluster-scoped resource. entries are the resolved
// resources of c's entries, in order.
func lookupNamespaces(c *Compiled, entries []factory.Resource, looked map[string]factory.Resource) map[string][]string {
	reads := make([]sets.Set[schema.GroupVersionResource], len(c.Resources))
	for i, r := range c.Resources {
		reads[i] = sets.New[schema.GroupVersionResource]()
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				if res, ok := looked[ref.Resource]; ok {
					reads[i].Insert(res.GVR)
				}
			}
		}
	}
	out := map[string][]string{}
	for name, res := range looked {
		if !res.Namespaced {
			out[name] = nil
			continue
		}
		all, set := false, sets.New[string]()
		for i, r := range c.Resources {
			if entries[i].GVR != res.GVR && !reads[i].Has(res.GVR) {
				continue
			}
			if !entries[i].Namespaced || len(r.Config.Namespaces) == 0 {
				all = true
				break
			}
			for _, ns := range r.Config.Namespaces {
				set.Insert(ns)
			}
		}
		if all {
			out[name] = nil
		} else {
			out[name] = slices.Sorted(maps.Keys(set))
		}
	}
	return out
}

// configLookup is the Lookup of a config's expressions: a get() or
// byIndex() of a namespace where the resource is not read fails with an
// error that says how to read it there.
type configLookup struct{ *factory.Lookup }

var _ indexers.Lookup = configLookup{}

// Get implements indexers.Lookup.
func (l configLookup) Get(resource, namespace, name string) (any, bool, error) {
	obj, found, err := l.Lookup.Get(resource, namespace, name)
	return obj, found, notWatchedHint(err)
}

// ByIndex implements indexers.Lookup.
func (l configLookup) ByIndex(resource, index, value string) ([]any, error) {
	objs, err := l.Lookup.ByIndex(resource, index, value)
	return objs, notWatchedHint(err)
}

// ReadsNamespace implements indexers.NamespaceReader.
func (l configLookup) ReadsNamespace(resource, namespace string) error {
	return notWatchedHint(l.Lookup.ReadsNamespace(resource, namespace))
}

func notWatchedHint(err error) error {
	var nw *factory.NamespaceNotWatchedError
	if errors.As(err, &nw) {
		return fmt.Errorf("%w: get() and byIndex() read a resource only in the namespaces of the entries that read it and of its own entry; add %q to the namespaces of one of them", err, nw.Namespace)
	}
	return err
}

// stopUnused stops the informers prev used and next does not.
func (x *Exporter) stopUnused(prev, next *activeConfig) {
	stop := func(infs []*factory.Informer) {
		for _, inf := range infs {
			if !next.uses(inf) {
				x.factory.Stop(inf)
				x.forgetIndexes(inf)
			}
		}
	}
	for _, infs := range prev.informers {
		stop(infs)
	}
	for _, infs := range prev.lookups {
		stop(infs)
	}
}

// scopes returns the scopes of a configured resource: one per namespace,
// or all namespaces.
func scopes(cr *CompiledResource, res factory.Resource) []factory.Scope {
	r := cr.Config
	base := factory.Scope{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
	if res.Namespaced && len(r.Namespaces) == 0 && len(cr.ExcludeNamespaces) > 0 {
		sel := []string{}
		if r.FieldSelector != "" {
			sel = append(sel, r.FieldSelector)
		}
		for _, ns := range cr.ExcludeNamespaces {
			sel = append(sel, "metadata.namespace!="+ns)
		}
		base.FieldSelector = strings.Join(sel, ",")
	}
	if !res.Namespaced || len(r.Namespaces) == 0 {
		return []factory.Scope{base}
	}
	var out []factory.Scope
	for _, ns := range r.Namespaces {
		s := base
		s.Namespace = ns
		out = append(out, s)
	}
	return out
}

// programsOf returns every program evaluated on a resource's objects.
func programsOf(r *CompiledResource) []*indexers.Program {
	var out []*indexers.Program
	for _, name := range slices.Sorted(maps.Keys(r.Indexes)) {
		out = append(out, r.Indexes[name])
	}
	for _, f := range r.Families {
		out = append(out, f.Labels...)
		for _, p := range []*indexers.Program{f.Value, f.Each, f.LabelsFrom} {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// fieldsOf returns the JSON paths the resource's programs read, or nil for
// whole objects.
func fieldsOf(r *CompiledResource) *jsonval.Paths {
	out := &jsonval.Paths{}
	for _, p := range programsOf(r) {
		if !out.Union(p.ObjectPaths()) {
			return nil
		}
	}
	return out
}

// readsCache reports whether the series of r's objects are computed from
// the cache as well as from events: r has indexes, or its expressions call
// get() or byIndex(), whose objects changing recomputes r's objects from
// the cache.
func readsCache(r *CompiledResource) bool {
	if len(r.Indexes) > 0 {
		return true
	}
	for _, p := range programsOf(r) {
		if p.ReadsOthers() {
			return true
		}
	}
	return false
}

// bindLookup binds every program of r that calls get() or byIndex() to l.
func bindLookup(r *CompiledResource, l indexers.Lookup) {
	for name, p := range r.Indexes {
		if p.ReadsOthers() {
			r.Indexes[name] = p.WithLookup(l)
		}
	}
}

// getterOf reads an object by key from whichever of infs holds it.
func getterOf(infs []*factory.Informer) Getter {
	return func(key string) (any, bool, error) {
		for _, inf := range infs {
			obj, ok, err := inf.Informer.GetIndexer().GetByKey(key)
			if err != nil || ok {
				return obj, ok, err
			}
		}
		return nil, false, nil
	}
}

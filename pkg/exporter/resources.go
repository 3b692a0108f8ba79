package exporter

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/cached"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// ResourceInfo is what the API server tells of the resource of an entry of
// a config, for [Compiled.CheckResources].
type ResourceInfo struct {
	// Resource is the entry's resource as discovery resolved it.
	Resource factory.Resource
	// Schema is the resource's OpenAPI v3 schema (see
	// [indexers.ResolveSchema]); nil when the server publishes none, and
	// the entry's expressions stay checked dynamically.
	Schema *spec.Schema
}

// ResolveResources resolves the resource of every entry of c through
// discovery, with its OpenAPI v3 schema, in the order of c.Resources. A
// name the server does not know fails with the error of
// [factory.Resolver.Resolve] (see [factory.IsUnknownResource]), prefixed
// with the file and the entry. A schema that cannot be read is left nil
// and its error returned in schemaErrs.
func ResolveResources(c *Compiled, resolver *factory.Resolver) (infos []ResourceInfo, schemaErrs []error, err error) {
	resolved := make([]factory.Resource, len(c.Resources))
	for i, r := range c.Resources {
		res, err := resolver.ResolveOne(r.Config.Resource)
		if err != nil {
			return nil, nil, c.resourceError(i, r.Config.Resource, err)
		}
		resolved[i] = res
	}
	infos, schemaErrs = withSchemas(resolver, resolved, c.schemaWanted())
	return infos, schemaErrs, nil
}

// withSchemas reads the schema of each resource that wanted says (the
// others, and one that cannot be read, are left nil, the latter with its
// error).
func withSchemas(resolver *factory.Resolver, resolved []factory.Resource, wanted []bool) ([]ResourceInfo, []error) {
	infos := make([]ResourceInfo, len(resolved))
	for i, res := range resolved {
		infos[i].Resource = res
	}
	var errs []error
	// The schemas' documents are cached for this load only (over the
	// discovery client's HTTP cache): the discovery client would keep
	// them, megabytes, for the life of the process.
	d := loadDiscovery{DiscoveryInterface: resolver.Discovery()}
	d.openapi = cached.NewClient(openapi.NewClient(d.RESTClient()))
	schemas := indexers.NewSchemas(d)
	// Documents are decoded while others are read: a few at a time.
	all := make([]error, len(resolved))
	var g errgroup.Group
	g.SetLimit(2 * runtime.GOMAXPROCS(0))
	for i, res := range resolved {
		if !wanted[i] {
			continue
		}
		g.Go(func() error {
			s, err := schemas.Resolve(res.GVK)
			infos[i], all[i] = ResourceInfo{Resource: res, Schema: s}, err
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range all {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return infos, errs
}

// loadDiscovery is a discovery client whose OpenAPI client is the one of a
// load.
type loadDiscovery struct {
	discovery.DiscoveryInterface
	openapi openapi.Client
}

func (d loadDiscovery) OpenAPIV3() openapi.Client { return d.openapi }

// schemaWanted says, for each entry of c.Resources, whether
// CheckResources reads its resource's schema: for an entry of a built-in
// profile, only when one of its expressions learns size bounds from it.
func (c *Compiled) schemaWanted() []bool {
	wanted := make([]bool, 0, len(c.Resources))
	parts, _ := c.partsOf()
	for _, p := range parts {
		n := len(wanted)
		for range p.Resources {
			wanted = append(wanted, !p.builtin)
		}
		if !p.builtin {
			continue
		}
		for _, ce := range p.exprs {
			if i, ok := ce.path[1].(int); ok && ce.prog.UsesObject() && ce.prog.AdoptsSizeBounds() {
				if _, known := p.knownBounds[p.boundKey(i, ce)]; !known {
					wanted[n+i] = true
				}
			}
		}
	}
	return wanted
}

// boundKey identifies an expression of a profile in its size bounds.
type boundKey struct {
	resource, expr string
	each           bool
}

// boundKey returns the key of ce, an expression of the entry i, its
// blanks made single spaces: a selection of a profile's families writes its
// files again, and the YAML encoder breaks long lines elsewhere.
func (c *Compiled) boundKey(i int, ce compiledExpr) boundKey {
	return boundKey{resource: c.Config.Resources[i].Resource, expr: strings.Join(strings.Fields(ce.prog.Expr()), " "), each: ce.withEach}
}

// SizeBound is the size bounds of an expression of a config within which
// it is evaluated without tracking its cost (see
// indexers.Program.SizeBounds), as profiles.SizeBounds holds them.
type SizeBound struct {
	// Resource is the resource of the expression's entry, as written.
	Resource string `json:"resource"`
	// Each: the expression is a label or value of a metric with each.
	Each bool `json:"each,omitempty"`
	// Expr is the expression, its blanks made single spaces.
	Expr   string          `json:"expr"`
	Bounds []jsonval.Sizes `json:"bounds"`
}

// SizeBounds returns the size bounds of the expressions of c that track
// their cost and name object, sorted, each once: once CheckResources has
// checked c, those it learnt from the schemas. They make the file of a
// built-in profile that profiles.SizeBounds reads.
func (c *Compiled) SizeBounds() []SizeBound {
	seen := map[boundKey]bool{}
	var out []SizeBound
	parts, _ := c.partsOf()
	for _, p := range parts {
		for _, ce := range p.exprs {
			i, ok := ce.path[1].(int)
			if !ok || !ce.prog.UsesObject() || !ce.prog.AdoptsSizeBounds() {
				continue
			}
			k := p.boundKey(i, ce)
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, SizeBound{Resource: k.resource, Each: k.each, Expr: k.expr, Bounds: slices.Clone(ce.prog.SizeBounds())})
		}
	}
	slices.SortFunc(out, func(a, b SizeBound) int {
		return cmp.Or(strings.Compare(a.Resource, b.Resource), strings.Compare(a.Expr, b.Expr), boolCompare(a.Each, b.Each))
	})
	return out
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// knownSizeBounds returns the size bounds of the built-in profile name
// (see profiles.SizeBounds), read once.
func knownSizeBounds(name string) map[boundKey][]jsonval.Sizes {
	v, _ := sizeBoundsByProfile.LoadOrStore(name, sync.OnceValue(func() map[boundKey][]jsonval.Sizes {
		var list []SizeBound
		if err := json.Unmarshal(profiles.SizeBounds(name), &list); err != nil {
			return nil // checked against the schemas instead
		}
		out := make(map[boundKey][]jsonval.Sizes, len(list))
		for _, b := range list {
			out[boundKey{resource: b.Resource, expr: b.Expr, each: b.Each}] = b.Bounds
		}
		return out
	}))
	return v.(func() map[boundKey][]jsonval.Sizes)()
}

// sizeBoundsByProfile holds the size bounds of each built-in profile read
// so far, by name.
var sizeBoundsByProfile sync.Map

// releaseSource lets go of what only CheckResources reads: the YAML nodes
// and the compiled expressions' places. CheckResources fails after it.
func (c *Compiled) releaseSource() {
	c.parser, c.exprs = nil, nil
	for _, p := range c.parts {
		p.releaseSource()
	}
}

// CheckResources checks c against what the API server says of its
// resources, one ResourceInfo per entry of c.Resources, in order:
//
//   - every expression is checked again with env against the schema of
//     its resource, as query does, so that a misspelled field
//     (object.spec.nodeNme) or a value of the wrong type
//     (value: object.status.phase, a string) is refused at load instead of
//     failing on every object;
//   - a metric without aggregate whose labels do not tell the objects of a
//     namespaced resource apart would serve the same series once per object:
//     it is refused, naming aggregate: count as the fix (see
//     [Compiled.DuplicateSeries]).
//
// The errors are [*LineError]s, joined and sorted by line, as those of
// [Compile]. The warnings are the metrics of cluster-scoped resources whose
// labels read neither the name nor the UID of the object: fine for a
// resource of a single object, duplicate series otherwise.
func (c *Compiled) CheckResources(env *indexers.Env, infos []ResourceInfo) (warnings []string, err error) {
	if len(infos) != len(c.Resources) {
		return nil, fmt.Errorf("checking %s: %d resources resolved for %d entries", c.Path, len(infos), len(c.Resources))
	}
	if len(c.parts) > 0 {
		parts, offsets := c.partsOf()
		// The parts are checked on every core, and reported in order.
		ws, errs := make([][]string, len(parts)), make([]error, len(parts))
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i, p := range parts {
			g.Go(func() error {
				ws[i], errs[i] = p.CheckResources(env, infos[offsets[i]:offsets[i]+len(p.Resources)])
				return nil
			})
		}
		_ = g.Wait()
		return slices.Concat(ws...), errors.Join(errs...)
	}
	return c.checkResources(env, infos)
}

// checkResources is CheckResources of a config that was not merged, with
// as many infos as resources.
func (c *Compiled) checkResources(env *indexers.Env, infos []ResourceInfo) (warnings []string, err error) {
	if c.parser == nil {
		return nil, errors.New("checking the exporter config: not compiled by Compile")
	}
	p := *c.parser
	p.Errs = nil
	// typed are the expressions checked so far, by resource: each is
	// checked once however many places it is written in.
	type typedKey struct {
		resource int
		programKey
	}
	typed := map[typedKey]*indexers.Checked{}
	for _, ce := range c.exprs {
		i, ok := ce.path[1].(int)
		if !ok || !ce.prog.UsesObject() {
			// An expression that does not name object (each.name) checks
			// against the schema as it did without: object is all the
			// schema declares.
			continue
		}
		if c.builtin {
			// Those of a built-in profile are checked by its tests; only
			// those that learn size bounds from the schema are checked
			// here, unless the profile knows them.
			if !ce.prog.AdoptsSizeBounds() {
				continue
			}
			if b, ok := c.knownBounds[c.boundKey(i, ce)]; ok {
				ce.prog.SetSizeBounds(b)
				continue
			}
		}
		if infos[i].Schema == nil {
			continue
		}
		key := typedKey{i, programKey{expr: ce.prog.Expr(), kind: ce.prog.Kind(), withEach: ce.withEach}}
		if t, done := typed[key]; done {
			ce.prog.AdoptSizeBounds(t)
			continue
		}
		schema := infos[i].Schema
		var t *indexers.Checked
		check := func(expr string, kind indexers.Kind, context string) (*indexers.Program, error) {
			var err error
			t, err = env.CheckWithSchema(expr, kind, context, ce.withEach, schema)
			return nil, err
		}
		p.compileExpr(check, ce.prog.Expr(), ce.prog.Kind(), ce.prog.Context(), ce.path...)
		if t != nil {
			typed[key] = t
		}
		ce.prog.AdoptSizeBounds(t)
	}
	if len(p.Errs) > 0 {
		// A misspelled field would only be reported again, as not
		// identifying the object.
		return nil, p.Err()
	}
	for i, r := range c.Resources {
		for j, f := range r.Families {
			if c.identifies(i, j, infos[i].Resource.Namespaced) {
				continue
			}
			line, ctx := c.parser.KeyLine("resources", i, "metrics", j, "labels"), metricContext(c.Config.Prefix, r.Config.Metrics[j].Name, "", j)
			if infos[i].Resource.Namespaced {
				p.Errorf(line, ctx, "%s", duplicateMessage(r, f, true))
				continue
			}
			if !readsAny(c.labelPaths(i, j), nameOrUID...) {
				warnings = append(warnings, (&LineError{Path: c.Path, Line: line, Context: ctx, Err: errors.New(duplicateMessage(r, f, false))}).Error())
			}
		}
	}
	return warnings, p.Err()
}

// DuplicateSeries returns, without a cluster, a warning for each metric
// without aggregate whose labels read neither the name nor the UID of the
// object (nor fix it with the entry's fieldSelector): every object with the
// same label values serves the same series, unless the resource has a
// single object. [Compiled.CheckResources], which knows which resources
// are namespaced, refuses those of namespaced resources.
func (c *Compiled) DuplicateSeries() []string {
	var out []string
	if len(c.parts) > 0 {
		for _, p := range c.parts {
			out = append(out, p.DuplicateSeries()...)
		}
		return out
	}
	for i, r := range c.Resources {
		for j, f := range r.Families {
			if f.Aggregate != AggregateNone || readsAny(c.labelPaths(i, j), nameOrUID...) || pinned(r.Config, "metadata.name") {
				continue
			}
			line, ctx := c.parser.KeyLine("resources", i, "metrics", j, "labels"), metricContext(c.Config.Prefix, r.Config.Metrics[j].Name, "", j)
			out = append(out, (&LineError{Path: c.Path, Line: line, Context: ctx, Err: errors.New(duplicateMessage(r, f, false))}).Error())
		}
	}
	return out
}

var (
	nameOrUID = [][]string{{"metadata", "name"}, {"metadata", "uid"}}
	namespace = []string{"metadata", "namespace"}
)

// identifies reports whether the labels of the j-th family of the i-th
// resource give every object a series of its own: the family aggregates;
// or a label reads the object's UID; or one reads its name (or the entry's
// fieldSelector fixes it) and the resource is cluster-scoped, a label reads
// the namespace, or the entry watches a single namespace. A label that may
// read anything of the object (object passed whole to a function) is taken
// to identify it.
func (c *Compiled) identifies(i, j int, namespaced bool) bool {
	r := c.Resources[i]
	if r.Families[j].Aggregate != AggregateNone {
		return true
	}
	paths := c.labelPaths(i, j)
	if readsAny(paths, []string{"metadata", "uid"}) {
		return true
	}
	if !readsAny(paths, []string{"metadata", "name"}) && !pinned(r.Config, "metadata.name") {
		return false
	}
	return !namespaced || readsAny(paths, namespace) || len(r.Config.Namespaces) == 1 || pinned(r.Config, "metadata.namespace")
}

// labelPaths returns the paths of the object that the labels of the j-th
// family of the i-th resource read, its labelsFrom map's included, and its
// each's when a label reads each; nil when they may read anything.
func (c *Compiled) labelPaths(i, j int) *jsonval.Paths {
	f := c.Resources[i].Families[j]
	progs := slices.Clone(f.Labels)
	if f.LabelsFrom != nil {
		progs = append(progs, f.LabelsFrom)
	}
	if f.Each != nil && slices.ContainsFunc(progs, func(p *indexers.Program) bool { return p != nil && p.UsesEach() }) {
		progs = append(progs, f.Each)
	}
	out := &jsonval.Paths{}
	for _, l := range progs {
		if l == nil {
			continue
		}
		if !out.Union(l.ObjectPaths()) {
			return nil
		}
	}
	return out
}

// readsAny reports whether paths (nil: anything) read one of the wanted
// paths, or a part of the object that holds it.
func readsAny(paths *jsonval.Paths, wanted ...[]string) bool {
	if paths == nil {
		return true
	}
	for _, p := range paths.List() {
		for _, w := range wanted {
			if len(p) <= len(w) && slices.Equal(p, w[:len(p)]) {
				return true
			}
		}
	}
	return false
}

// pinned reports whether the entry's fieldSelector fixes the value of field.
func pinned(r ResourceConfig, field string) bool {
	if r.FieldSelector == "" {
		return false
	}
	sel, err := fields.ParseSelector(r.FieldSelector)
	if err != nil {
		return false
	}
	_, ok := sel.RequiresExactMatch(field)
	return ok
}

// duplicateMessage says why the labels of f may not tell the objects of r
// apart, and what to do; namespaced says the resource is namespaced.
func duplicateMessage(r *CompiledResource, f *Family, namespaced bool) string {
	var b strings.Builder
	what := "the labels"
	if len(f.LabelNames) > 0 {
		what = "the labels (" + strings.Join(f.LabelNames, ", ") + ")"
	}
	if namespaced {
		fmt.Fprintf(&b, "%s do not tell the objects of %s apart: objects with the same label values would serve the same series", what, r.Config.Resource)
		b.WriteString("; set aggregate: count to count them, or add labels that identify each object, such as namespace: object.metadata.namespace and name: object.metadata.name")
		return b.String()
	}
	fmt.Fprintf(&b, "%s read neither object.metadata.name nor object.metadata.uid: unless %s has a single object, objects with the same label values serve the same series", what, r.Config.Resource)
	b.WriteString("; set aggregate: count to count them, or add a label such as name: object.metadata.name")
	return b.String()
}

// checkResources checks c against the schemas of its resolved resources
// (see Compiled.CheckResources): the errors are a *LoadError, the warnings
// are logged.
func (x *Exporter) checkResources(c *Compiled, resolved []factory.Resource) error {
	// The schemas are read again at each load: their environments are
	// not needed after it.
	defer x.env.ForgetSchemas()
	infos, schemaErrs := withSchemas(x.resolver, resolved, c.schemaWanted())
	for _, err := range schemaErrs {
		x.log.Warn("expressions not checked against a resource's schema; they are checked on each object", "err", err)
	}
	warnings, err := c.CheckResources(x.env, infos)
	for _, w := range warnings {
		x.log.Warn("possible duplicate series", "problem", w)
	}
	if err != nil {
		return &LoadError{Err: err}
	}
	return nil
}

package queryserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Served is the set of caches of a query server: the informers of the
// resources it serves, filled once and following the cluster, from which
// [Served.Answer] answers any number of requests, concurrently.
type Served struct {
	// env compiles the requests' expressions: it tracks the cost of every
	// evaluation so that a Budget bounds a request.
	env    *indexers.Env
	caches *plan.Caches
	conn   plan.Conn
	// infs are the served informers, in the order of the resources served.
	infs  []*factory.Informer
	byGVR map[schema.GroupVersionResource]*factory.Informer
	// exprs are the expressions of each served informer's indexes.
	exprs map[schema.GroupVersionResource]map[string]string
	// schemas are the OpenAPI schemas of the served kinds; nil when the
	// server publishes none.
	schemas map[schema.GroupVersionKind]*spec.Schema

	// encoded keeps the -o json text of answered objects; nil: none kept.
	encoded *encodedItems

	// names caches the resolution of the resource names requests use,
	// bounded.
	names *nameCache
}

// Serve resolves the resources of req, fills their caches with the indexes
// of req.Indexes, req.ResourceIndexes and req.ResourceFlagIndexes, and
// returns once every cache has synced. The informers run until ctx ends.
// Only Resources, Namespace, LabelSelector, FieldSelector, Indexes,
// ResourceIndexes, ConfigPath, ConfigLine, ResourceFlagIndexes,
// SyncTimeout and Progress of req are used; progress and warnings go to
// errOut. Request expressions are compiled with env, which should track
// cost ([indexers.WithCostTracking]); req's own with an Env of their own,
// with env's cost limit.
func Serve(ctx context.Context, env *indexers.Env, conn plan.Conn, req plan.Request, errOut io.Writer) (*Served, error) {
	indexEnv, err := indexers.NewEnv(indexers.WithCostLimit(env.CostLimit()), indexers.WithClusterVariable())
	if err != nil {
		return nil, err
	}
	base := plan.Request{
		Resources: req.Resources, Namespace: req.Namespace,
		LabelSelector: req.LabelSelector, FieldSelector: req.FieldSelector,
		Indexes: req.Indexes, ResourceIndexes: req.ResourceIndexes, ConfigPath: req.ConfigPath,
		ConfigLine: req.ConfigLine, ResourceFlagIndexes: req.ResourceFlagIndexes,
		SyncTimeout: req.SyncTimeout, Progress: req.Progress, WholeObjects: true,
	}
	p, err := plan.Compile(indexEnv, base)
	if err != nil {
		return nil, err
	}
	if plan.NamesObjects(req.Resources) {
		return nil, &query.UsageError{Err: errors.New("a query server serves whole resource types: give types, not TYPE NAME or TYPE/NAME")}
	}
	c, err := p.Fill(ctx, conn, errOut, plan.FillOptions{Relations: true})
	if err != nil {
		return nil, err
	}
	queried := c.Queried()
	s := &Served{
		env: env, caches: c, conn: conn, infs: queried,
		byGVR:   map[schema.GroupVersionResource]*factory.Informer{},
		exprs:   map[schema.GroupVersionResource]map[string]string{},
		schemas: map[schema.GroupVersionKind]*spec.Schema{},
		names:   newNameCache(conn.Resolver),
	}
	schemas := indexers.NewSchemas(conn.Resolver.Discovery())
	for _, inf := range queried {
		s.byGVR[inf.Resource.GVR] = inf
		s.exprs[inf.Resource.GVR] = c.IndexExprs(inf.Resource)
		if _, done := s.schemas[inf.Resource.GVK]; !done {
			sch, err := schemas.Resolve(inf.Resource.GVK)
			if err != nil {
				sch = nil // checked dynamically, as a local query would
			}
			s.schemas[inf.Resource.GVK] = sch
		}
	}
	return s, nil
}

// KeepAnswers keeps, within the room of c, the -o json text of the
// objects its answers print, each while its informer holds it (see
// AnswerCache). Call it once, before the first answer.
func (s *Served) KeepAnswers(c *AnswerCache) error {
	e := &encodedItems{room: c, holders: map[schema.GroupVersionKind][]holder{},
		texts: map[runtime.Object]encodedText{}, keys: map[heldKey]runtime.Object{}}
	for n, inf := range s.infs {
		gvk, idx := inf.Resource.GVK, inf.Informer.GetIndexer()
		e.holders[gvk] = append(e.holders[gvk], holder{n: n, idx: idx})
		forget := cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) { e.forget(n, idx, obj) },
			DeleteFunc: func(obj any) { e.forget(n, idx, obj) },
		}
		if _, err := inf.Informer.AddEventHandler(forget); err != nil {
			return fmt.Errorf("keeping the answers of %s: %w", inf.Resource, err)
		}
	}
	s.encoded = e
	return nil
}

// Resources returns the served resources.
func (s *Served) Resources() []factory.Resource {
	out := make([]factory.Resource, len(s.infs))
	for i, inf := range s.infs {
		out[i] = inf.Resource
	}
	return out
}

// Synced reports whether every served cache has synced; false while one
// relists after a failure.
func (s *Served) Synced() bool {
	for _, inf := range s.infs {
		if !inf.Informer.HasSynced() {
			return false
		}
	}
	return true
}

// WatchDenied returns, for each served informer whose watch RBAC denies
// while allowing its list, a line naming it and the API server's message:
// its cache follows the cluster only by listing again.
func (s *Served) WatchDenied() []string {
	var out []string
	for _, inf := range s.infs {
		if err := inf.WatchDenied(); err != nil {
			name := inf.Resource.String()
			if inf.Scope.Namespace != "" && inf.Resource.Namespaced {
				name += " in " + inf.Scope.Namespace
			}
			out = append(out, name+": "+strings.ReplaceAll((&factory.RequestError{Err: err}).Reason(), "\n", " "))
		}
	}
	return out
}

// Access reports whether the caller of a request may list res in
// namespace, or at the cluster scope when namespace is "".
type Access func(ctx context.Context, res factory.Resource, namespace string) (bool, error)

// ForbiddenError is a request reading a resource its caller may not list:
// at all for a cluster-scoped resource, in Namespace, or in any namespace
// holding objects of it for a query across namespaces.
type ForbiddenError struct {
	Resource  factory.Resource
	Namespace string
	// Reason says which part of the request reads Resource, for get() and
	// byIndex(); "" for a queried resource.
	Reason string
	// User names the caller in the message; "" says "the caller".
	User string
}

func (e *ForbiddenError) Error() string {
	who := "the caller"
	if e.User != "" {
		who = fmt.Sprintf("User %q", e.User)
	}
	what := fmt.Sprintf("%s is forbidden: %s cannot list resource %q in API group %q", e.Resource, who, e.Resource.GVR.Resource, e.Resource.GVR.Group)
	switch {
	case e.Namespace != "":
		what += fmt.Sprintf(" in the namespace %q", e.Namespace)
	case e.Resource.Namespaced:
		what += " at the cluster scope, nor in any namespace that holds some"
	default:
		what += " at the cluster scope"
	}
	if e.Reason != "" {
		what += " (read by " + e.Reason + ")"
	}
	return what
}

// Answer answers req from the served caches as [plan.Plan.Execute] would answer
// it with its own caches, and prints the answer on out exactly as the
// command line prints it; warnings and notes ("No resources found") go to
// errOut.
//
// What the caller may read is decided with may before anything is
// evaluated: each queried resource, and each resource that get() and
// byIndex() read, in the request's namespace, or, for a request across
// namespaces by a caller who may not list the resource at the cluster
// scope, in the namespaces holding its objects that the caller may list;
// the objects of the others are not seen, by the query or by its lookups.
// A resource the caller may not list at all is a *ForbiddenError.
//
// Label and field selectors are applied from the cache: a field selector
// compares the field at its path, as a string ("" when missing), so any
// field may be used. --by on an index the server does not have, but that
// the request defines (Request.Indexes, ResourceIndexes), evaluates the
// definition on each candidate instead.
//
// Every evaluation is charged to budget (which may be nil); once it is
// spent, or its context ends, Answer returns an error for which
// indexers.IsBudgetStop is true, before printing anything. Mistakes in the
// request are *query.UsageError.
func (s *Served) Answer(req plan.Request, may Access, budget *indexers.Budget, out, errOut io.Writer) error {
	if s.encoded != nil {
		req.Print.Encoded = s.encoded
	}
	r, err := s.answer(req, may, budget)
	if err != nil {
		return err
	}
	for _, w := range r.warnings {
		_, _ = fmt.Fprintln(errOut, w)
	}
	return r.plan.Print(out, errOut, s.caches, r.queried, r.results)
}

// reply is the answer of Served.answer, to be printed: the plan compiled
// for the request, the informers queried and their results, and the
// warnings of evaluations that failed on some objects.
type reply struct {
	plan     *plan.Plan
	queried  []*factory.Informer
	results  []*query.Result
	warnings []string
}

// answerWithout answers req as answer does, without the resource types
// that the cluster does not have, which it returns: a nil reply when it
// has none of them.
func (s *Served) answerWithout(req plan.Request, may Access, budget *indexers.Budget) (*reply, []string, error) {
	var lacks []string
	for _, t := range plan.ArgTypes(req.Resources) {
		if s.lacking(t) {
			lacks = append(lacks, t)
		}
	}
	if len(lacks) > 0 {
		if req.Resources = plan.WithoutTypes(req.Resources, lacks); len(req.Resources) == 0 {
			return nil, lacks, nil
		}
	}
	r, err := s.answer(req, may, budget)
	return r, lacks, err
}

// lacking reports whether the cluster does not have the resource type t.
// Only the names that resolve are cached (see nameCache).
func (s *Served) lacking(t string) bool {
	_, err := s.names.resolve(t)
	return factory.IsUnknownResource(err)
}

// answer answers req from the caches, as Answer does, without printing.
func (s *Served) answer(req plan.Request, may Access, budget *indexers.Budget) (*reply, error) {
	ctx := context.Background()
	if budget != nil {
		ctx = budget.Context()
	}
	req = printedForOthers(req, budget)
	if plan.NamesObjects(req.Resources) {
		return nil, &query.UsageError{Err: fmt.Errorf(`a query server answers for resource types, not named objects: query the cluster itself, or select them with %s 'object.metadata.name in ["NAME", ...]'`, req.Names.Of(query.PartWhere))}
	}
	queried, err := s.resolve(req.Resources, "")
	if err != nil {
		return nil, err
	}
	// Whether the caller may read what it queries is decided before any
	// of its expressions is compiled.
	scopes := make([]*nsScope, len(queried))
	for i, inf := range queried {
		ns := ""
		if inf.Resource.Namespaced {
			ns = req.Namespace
		}
		if scopes[i], err = s.scope(ctx, may, inf, ns, ""); err != nil {
			return nil, err
		}
	}
	// --by on indexes the server lacks become predicates; the plan itself
	// sees only the server's indexes.
	served := req
	served.By = nil
	fallback := map[string]*indexers.Program{}
	defined := map[string]string{}
	for _, ix := range req.Indexes {
		defined[ix.Name] = ix.Expr
	}
	var errs []error
	// index finds the index name of the request (--by, --index-columns)
	// on the server, or compiles the request's own into fallback.
	index := func(name string) {
		for _, inf := range queried {
			have, expr := s.exprs[inf.Resource.GVR][name], defined[name]
			if expr == "" {
				expr = s.configIndex(req, inf.Resource, name)
			}
			_, builtIn := inf.Informer.GetIndexer().GetIndexers()[name]
			switch {
			case builtIn && (expr == "" || expr == have):
			case builtIn:
				errs = append(errs, fmt.Errorf("index %q of %s on this server is %q, not %q: use another name for yours", name, inf.Resource, have, expr))
			case expr != "":
				if _, done := fallback[name]; !done {
					prog, err := s.env.Compile(expr, indexers.KindIndex, fmt.Sprintf("index %q", name))
					if err != nil {
						errs = append(errs, err)
						continue
					}
					fallback[name] = prog
				}
			default:
				err := query.UnknownIndex(name, slices.Sorted(maps.Keys(inf.Informer.GetIndexer().GetIndexers())), query.FlagNames)
				if len(queried) > 1 {
					err = fmt.Errorf("for %s: %w", inf.Resource, err)
				}
				errs = append(errs, err)
			}
		}
	}
	for _, sel := range req.By {
		index(sel.Index)
		if fallback[sel.Index] == nil {
			served.By = append(served.By, sel)
		}
	}
	for _, name := range req.Print.IndexNames {
		index(name)
	}
	if len(errs) > 0 {
		return nil, &query.UsageError{Err: errors.Join(errs...)}
	}
	// The checks of --by and --index-columns above replace Compile's.
	selectors := served.By
	served.By, served.Indexes, served.ResourceIndexes, served.ResourceFlagIndexes = nil, nil, nil, nil
	served.Print.IndexNames = nil
	np, err := plan.Compile(s.env, served)
	if err != nil {
		return nil, err
	}
	np.ShowIndexes(req.Print.IndexNames)
	np.BindCluster(s.conn.Cluster)
	// What the request reads, and where the caller may read it.
	lookup := &scopedLookup{inner: factory.NewLookup(), scopes: map[string]*nsScope{}, budget: budget}
	scopeOf := map[schema.GroupVersionResource]*nsScope{} // one decision per resource
	namespaced := req.Namespace != "" && slices.ContainsFunc(queried, func(inf *factory.Informer) bool { return inf.Resource.Namespaced })
	owners := sets.New(indexers.OwnerResources()...)
	for _, prog := range np.QueryPrograms() {
		for _, ref := range prog.References() {
			// The owner kinds of owner() and owners() are optional: one the
			// server does not serve, or the caller may not list, is left
			// out of the lookup, and such an owner reads as null.
			optional := owners.Has(ref.Resource) && len(ref.Indexes) == 0
			res, err := s.resolve([]string{ref.Resource}, fmt.Sprintf("%s: %s", prog.Context(), ref.ReadBy()))
			if err != nil {
				if optional {
					continue
				}
				return nil, err
			}
			if len(res) != 1 {
				return nil, &query.UsageError{Err: fmt.Errorf("%s: %s: %q names %d resource types; name one", prog.Context(), ref.ReadBy(), ref.Resource, len(res))}
			}
			inf := res[0]
			if !inf.Resource.Namespaced {
				if err := prog.CheckClusterScoped(ref.Resource); err != nil {
					return nil, &query.UsageError{Err: err}
				}
			}
			idx := inf.Informer.GetIndexer().GetIndexers()
			for _, ix := range ref.Indexes {
				if _, ok := idx[ix]; ok || ix == cache.NamespaceIndex {
					continue
				}
				if indexers.IsBuiltinIndex(ix) {
					// An index the user never wrote: name the calls that read it.
					calls := strings.Join(ref.CallsOf(ix), " and ")
					return nil, &query.UsageError{Err: fmt.Errorf("%s: %s reads %s through an index this server's cache of it does not have (a server of an older version does not make it): query without %s, or ask a server that does",
						prog.Context(), calls, inf.Resource, calls)}
				}
				return nil, &query.UsageError{Err: fmt.Errorf("%s: byIndex(%q, %q, …): for %s: %w", prog.Context(), ref.Resource, ix, inf.Resource, query.UnknownIndex(ix, slices.Sorted(maps.Keys(idx)), req.Names))}
			}
			scope, done := scopeOf[inf.Resource.GVR]
			if !done {
				ns := ""
				if namespaced && inf.Resource.Namespaced {
					ns = req.Namespace
				}
				if scope, err = s.scope(ctx, may, inf, ns, ref.ReadBy()+" in "+prog.Context()); err != nil {
					if _, forbidden := errors.AsType[*ForbiddenError](err); forbidden && optional {
						continue
					}
					return nil, err
				}
				scopeOf[inf.Resource.GVR] = scope
			}
			lookup.inner.Add(ref.Resource, inf)
			lookup.scopes[ref.Resource] = scope
		}
	}
	for _, inf := range queried {
		if err := s.checkSchema(np, inf.Resource, queried); err != nil {
			return nil, err
		}
	}
	if np.ReadsOtherResources() {
		np.Bind(lookup)
	}
	if budget != nil {
		np.ChargeTo(budget)
		for n, prog := range fallback {
			fallback[n] = prog.WithBudget(budget)
		}
	}
	for n, prog := range fallback {
		fallback[n] = prog.WithLookup(lookup)
	}
	stats := &indexers.Stats{}
	filter, err := s.filter(req, req.By, fallback, stats)
	if err != nil {
		return nil, err
	}
	spec := np.Spec()
	spec.Selectors = selectors
	spec.Filter = filter
	spec.Stop = indexers.IsBudgetStop
	if budget != nil {
		spec.Check = budget.Err
	}
	idxs := make([]cache.Indexer, len(queried))
	specs := make([]query.Spec, len(queried))
	for i, inf := range queried {
		sp := spec
		sp.Namespace = ""
		if inf.Resource.Namespaced {
			sp.Namespace = req.Namespace
		}
		if !scopes[i].all {
			sp.Namespaces = scopes[i].namespaces
		}
		idxs[i], specs[i] = inf.Informer.GetIndexer(), sp
	}
	results, err := query.RunAll(idxs, specs)
	if err != nil {
		return nil, err
	}
	// The index columns the server lacks are computed by the request's
	// programs, on the answer's objects only, here: charged to the
	// budget and counted in the warnings, before either is read.
	for _, name := range slices.Compact(slices.Sorted(slices.Values(req.Print.IndexNames))) {
		prog := fallback[name]
		if prog == nil {
			continue
		}
		f := indexers.IndexFunc(name, prog, stats)
		for _, r := range results {
			values := make(map[any][]string, len(r.Items))
			for _, item := range r.Items {
				values[item.Object], _ = f(item.Object) // never an error: failures go to stats
			}
			r.Indexers = maps.Clone(r.Indexers)
			if r.Indexers == nil {
				r.Indexers = cache.Indexers{}
			}
			r.Indexers[name] = func(obj any) ([]string, error) { return values[obj], nil }
		}
	}
	// As a local query, which summarises its index failures once its
	// caches have synced, before the answer's own warnings.
	var warnings []string
	for _, line := range stats.Summary() {
		warnings = append(warnings, "warning: "+line)
	}
	warnings = append(warnings, plan.WarningLines(queried, results)...)
	if budget != nil {
		if err := budget.Err(); err != nil {
			return nil, err
		}
	}
	return &reply{plan: np, queried: queried, results: results, warnings: warnings}, nil
}

// printedForOthers returns req printed as a query server prints: reading
// no template file, and, with a budget, stopping once its context ends
// (see query.PrintOptions.ServerSide and Context).
func printedForOthers(req plan.Request, budget *indexers.Budget) plan.Request {
	req.Print.ServerSide = true
	if budget != nil {
		req.Print.Context = budget.Context()
	}
	return req
}

// resolve maps resource names to the served informers. A name the server
// does not serve is a *query.UsageError naming those it does; context prefixes
// it for names read by expressions.
func (s *Served) resolve(args []string, context string) ([]*factory.Informer, error) {
	var out []*factory.Informer
	for _, arg := range args {
		res, err := s.names.resolve(arg)
		if err != nil {
			if context != "" {
				err = fmt.Errorf("%s: %w", context, err)
			}
			return nil, &query.UsageError{Err: err}
		}
		for _, r := range res {
			inf, ok := s.byGVR[r.GVR]
			if !ok {
				served := make([]string, len(s.infs))
				for i, inf := range s.infs {
					served[i] = inf.Resource.String()
				}
				msg := fmt.Sprintf("this server does not serve %s; it serves %s", r, strings.Join(served, ", "))
				if context != "" {
					// Read by an expression: the server's operator can serve it.
					msg += fmt.Sprintf(" (a server started with kubectl informer serve %s would serve it too)", strings.Join(append(served, r.String()), ","))
				}
				if context != "" {
					msg = context + ": " + msg
				}
				return nil, &query.UsageError{Err: errors.New(msg)}
			}
			out = append(out, inf)
		}
	}
	return out, nil
}

// configIndex returns the expression of index name for res in the
// request's indexes of one resource, those of --index RESOURCE:NAME=CEL
// first, then the config's; or "".
func (s *Served) configIndex(req plan.Request, res factory.Resource, name string) string {
	for _, byResource := range []map[string][]plan.NamedExpr{req.ResourceFlagIndexes, req.ResourceIndexes} {
		for arg, ixs := range byResource {
			rs, err := s.resolve([]string{arg}, "")
			if err != nil || !slices.ContainsFunc(rs, func(inf *factory.Informer) bool { return inf.Resource.GVR == res.GVR }) {
				continue
			}
			for _, ix := range ixs {
				if ix.Name == name {
					return ix.Expr
				}
			}
		}
	}
	return ""
}

// nsScope is where a caller may read a resource: everywhere, or in
// namespaces (sorted).
type nsScope struct {
	all        bool
	namespaces []string
	allowed    sets.Set[string]
}

func (sc *nsScope) admits(namespace string) bool { return sc.all || sc.allowed.Has(namespace) }

// scope decides where the caller may read inf's resource: in namespace
// when it is not "", else everywhere or in the namespaces holding objects
// it may list there. reason names the expression reading it, for errors.
func (s *Served) scope(ctx context.Context, may Access, inf *factory.Informer, namespace, reason string) (*nsScope, error) {
	res := inf.Resource
	if namespace != "" {
		ok, err := may(ctx, res, namespace)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &ForbiddenError{Resource: res, Namespace: namespace, Reason: reason}
		}
		return &nsScope{namespaces: []string{namespace}, allowed: sets.New(namespace)}, nil
	}
	ok, err := may(ctx, res, "")
	if err != nil {
		return nil, err
	}
	if ok {
		return &nsScope{all: true}, nil
	}
	if !res.Namespaced {
		return nil, &ForbiddenError{Resource: res, Reason: reason}
	}
	held := inf.Informer.GetIndexer().ListIndexFuncValues(cache.NamespaceIndex)
	held = slices.DeleteFunc(held, func(ns string) bool { return ns == "" })
	slices.Sort(held)
	allowed, err := mayEach(ctx, may, res, held)
	if err != nil {
		return nil, err
	}
	sc := &nsScope{allowed: sets.New[string]()}
	for i, ns := range held {
		if allowed[i] {
			sc.namespaces = append(sc.namespaces, ns)
			sc.allowed.Insert(ns)
		}
	}
	if len(sc.namespaces) == 0 {
		return nil, &ForbiddenError{Resource: res, Reason: reason}
	}
	return sc, nil
}

// checkSchema checks the request's expressions against the schema of res,
// one of the queried resources, as a local query does, with the schemas
// resolved when the server started.
func (s *Served) checkSchema(np *plan.Plan, res factory.Resource, queried []*factory.Informer) error {
	sch := s.schemas[res.GVK]
	if sch == nil {
		return nil
	}
	var others []*spec.Schema
	for _, inf := range queried {
		if o := s.schemas[inf.Resource.GVK]; o != nil && inf.Resource.GVK != res.GVK {
			others = append(others, o)
		}
	}
	return plan.CheckSchema(s.env, sch, res, len(queried) > 1, np.QueryPrograms(), others)
}

// filter returns the predicate that applies from the cache what a local
// query asks the API server for (label and field selectors) and the --by
// selectors on indexes the server lacks (fallback), whose failures it
// counts in stats; nil when there is none.
func (s *Served) filter(req plan.Request, by []query.Selector, fallback map[string]*indexers.Program, stats *indexers.Stats) (func(any) bool, error) {
	var checks []func(obj any) bool
	if req.LabelSelector != "" {
		sel, err := labels.Parse(req.LabelSelector)
		if err != nil {
			return nil, &query.UsageError{Err: fmt.Errorf("label selector %q: %w", req.LabelSelector, err)}
		}
		checks = append(checks, func(obj any) bool {
			m, err := meta.Accessor(obj)
			return err == nil && sel.Matches(labels.Set(m.GetLabels()))
		})
	}
	if req.FieldSelector != "" {
		sel, err := fields.ParseSelector(req.FieldSelector)
		if err != nil {
			return nil, &query.UsageError{Err: fmt.Errorf("field selector %q: %w", req.FieldSelector, err)}
		}
		var conds []string
		for _, r := range sel.Requirements() {
			path := "object"
			for _, part := range strings.Split(r.Field, ".") {
				path += ".?" + part
			}
			op := "=="
			if r.Operator == "!=" {
				op = "!="
			}
			conds = append(conds, fmt.Sprintf("string(%s.orValue(\"\")) %s %q", path, op, r.Value))
		}
		if len(conds) > 0 {
			prog, err := s.env.Compile(strings.Join(conds, " && "), indexers.KindPredicate, "field selector "+req.FieldSelector)
			if err != nil {
				return nil, &query.UsageError{Err: fmt.Errorf("field selector %q: %w", req.FieldSelector, err)}
			}
			checks = append(checks, func(obj any) bool {
				ok, err := prog.Match(obj)
				return err == nil && ok
			})
		}
	}
	// The indexes the request defines are evaluated on every object that
	// passed the checks above, all of them, as a local query indexes
	// every object of its cache: their failures are counted in stats.
	wanted := map[string][]string{}
	for _, sel := range by {
		if fallback[sel.Index] != nil {
			wanted[sel.Index] = append(wanted[sel.Index], sel.Value)
		}
	}
	if len(wanted) > 0 {
		names := slices.Sorted(maps.Keys(wanted))
		fns := make([]cache.IndexFunc, len(names))
		for i, name := range names {
			fns[i] = indexers.IndexFunc(name, fallback[name], stats)
		}
		checks = append(checks, func(obj any) bool {
			ok := true
			for i, fn := range fns {
				values, _ := fn(obj) // a failure indexes nothing, and is counted
				for _, want := range wanted[names[i]] {
					ok = ok && slices.Contains(values, want)
				}
			}
			return ok
		})
	}
	if len(checks) == 0 {
		return nil, nil
	}
	return func(obj any) bool {
		for _, c := range checks {
			if !c(obj) {
				return false
			}
		}
		return true
	}, nil
}

// scopedLookup is the Lookup of one request: the served informers, by the
// names the request's expressions use, restricted to where the caller may
// read them. Both maps are filled before any evaluation.
type scopedLookup struct {
	inner *factory.Lookup
	// scopes are where the caller may read each resource, by name.
	scopes map[string]*nsScope
	// budget, when not nil, is the request's: the objects ByIndex reads
	// and leaves out are charged to it, as those it keeps are by the
	// expression that reads them.
	budget *indexers.Budget
}

// Get returns nothing for an object of a namespace the caller may not
// read; the rest is inner's.
func (l *scopedLookup) Get(resource, namespace, name string) (any, bool, error) {
	if sc := l.scopes[resource]; sc != nil && namespace != "" && !sc.admits(namespace) {
		return nil, false, nil
	}
	return l.inner.Get(resource, namespace, name)
}

// ByIndex leaves out the objects of namespaces the caller may not read.
// An index whose values are of one namespace (namespace, and @label's
// NAMESPACE/KEY=VALUE) is not read at all for a namespace the caller may
// not read; of the others, the objects read and left out are charged to
// the request's budget, so that an expression cannot make the server read
// for free what the caller may not see.
func (l *scopedLookup) ByIndex(resource, index, value string) ([]any, error) {
	sc := l.scopes[resource]
	if sc != nil && !sc.all {
		if ns, ok := indexNamespace(index, value); ok && !sc.admits(ns) {
			return nil, nil
		}
	}
	objs, err := l.inner.ByIndex(resource, index, value)
	if err != nil || sc == nil || sc.all {
		return objs, err
	}
	kept := objs[:0:0]
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil && sc.admits(m.GetNamespace()) {
			kept = append(kept, obj)
		}
	}
	if dropped := len(objs) - len(kept); dropped > 0 && l.budget != nil {
		if err := l.budget.Charge(uint64(dropped)); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// indexNamespace returns the namespace of the objects of value in the
// index, when the index is one whose every value is of one namespace.
func indexNamespace(index, value string) (string, bool) {
	switch index {
	case indexers.NamespaceIndex:
		return value, true
	case indexers.LabelIndex:
		ns, _, ok := strings.Cut(value, "/")
		return ns, ok
	}
	return "", false
}

// ReadsNamespace implements indexers.NamespaceReader: a namespace the
// caller may not read holds nothing for it (ByIndex reads nothing there).
func (l *scopedLookup) ReadsNamespace(resource, namespace string) error {
	if sc := l.scopes[resource]; sc != nil && !sc.admits(namespace) {
		return nil
	}
	return l.inner.ReadsNamespace(resource, namespace)
}

// Scope implements indexers.ResourceScopes: owner() reads the owner kinds
// the request's lookup reads.
func (l *scopedLookup) Scope(resource string) (namespaced, ok bool) { return l.inner.Scope(resource) }

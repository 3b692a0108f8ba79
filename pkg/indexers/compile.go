package indexers

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/util/sets"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Kind says what an expression is used for, and so what it must produce.
type Kind int

const (
	// KindPredicate expressions select objects (--where): they must
	// evaluate to a bool.
	KindPredicate Kind = iota + 1
	// KindIndex expressions compute the values under which an object is
	// indexed: a string, a list of strings, or null (or an empty optional)
	// for "not indexed".
	KindIndex
	// KindValue expressions compute columns, sort keys and group-by keys:
	// any value.
	KindValue
	// KindNumber expressions compute a sample value, such as that of a
	// Prometheus metric: an int, a uint, a double, or a bool (1 or 0).
	KindNumber
)

// String returns the name of the kind.
func (k Kind) String() string {
	switch k {
	case KindPredicate:
		return "predicate"
	case KindIndex:
		return "index"
	case KindValue:
		return "value"
	case KindNumber:
		return "number"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// must returns what an expression of kind k must evaluate to, for messages.
func (k Kind) must() string {
	switch k {
	case KindPredicate:
		return "bool"
	case KindIndex:
		return "string, list(string) or null"
	case KindNumber:
		return "a number or bool (or null, or an optional of one)"
	}
	return "a value"
}

// Reference names a resource that an expression reads with get() or
// byIndex().
type Reference struct {
	// Resource is the first argument of get() or byIndex(), as written
	// (for example "nodes" or "configmaps").
	Resource string
	// Indexes are the index names passed to byIndex() for Resource, sorted
	// and without duplicates; empty when Resource is only read with get().
	// The relationship functions read built-in indexes (see
	// IsBuiltinIndex).
	Indexes []string
	// Calls are the calls that read Resource, as the expression writes
	// them, sorted: `get("nodes", …)`, `byIndex("pods", "byNode", …)`,
	// `children(…, "replicasets")`, `owner()`. Messages about Resource
	// name them: the built-in indexes and the owner kinds that owner()
	// reads are nothing the user wrote.
	Calls []string
}

// ReadBy says how the expression reads the resource, for messages: its
// calls joined by "and".
func (r Reference) ReadBy() string {
	if len(r.Calls) == 0 {
		return fmt.Sprintf("get()/byIndex() resource %q", r.Resource)
	}
	return strings.Join(r.Calls, " and ")
}

// CallsOf returns the calls of Calls that read the index index of the
// resource: children() the controller index, events() the involved
// object's, selected() the label and the namespace indexes, byIndex() the
// index it names.
func (r Reference) CallsOf(index string) []string {
	var out []string
	for _, c := range r.Calls {
		fn, _, _ := strings.Cut(c, "(")
		switch {
		case fn == childrenFunction && index == ControllerIndex,
			fn == eventsFunction && index == InvolvedObjectIndex,
			fn == selectedFunction && (index == LabelIndex || index == NamespaceIndex),
			fn == byIndexFunction && strings.HasPrefix(c, fmt.Sprintf("%s(%q, %q,", fn, r.Resource, index)):
			out = append(out, c)
		}
	}
	return out
}

// ReadBy says how progs read resource (as written), for messages: the
// calls of their references to it joined by "and"; see Reference.ReadBy.
func ReadBy(progs []*Program, resource string) string {
	calls := sets.New[string]()
	for _, p := range progs {
		for _, ref := range p.refs {
			if ref.Resource == resource {
				calls.Insert(ref.Calls...)
			}
		}
	}
	return Reference{Resource: resource, Calls: sets.List(calls)}.ReadBy()
}

// ByRelations reports whether only relationship functions read the
// resource, through its built-in indexes or as an owner kind.
func (r Reference) ByRelations() bool {
	if len(r.Calls) == 0 {
		return false
	}
	for _, c := range r.Calls {
		if strings.HasPrefix(c, getFunction+"(") || strings.HasPrefix(c, byIndexFunction+"(") {
			return false
		}
	}
	return true
}

// Program is a compiled expression. Programs are immutable and safe for
// concurrent use.
type Program struct {
	expr string
	// values, when not nil, computes the index values of an object as the
	// expression does, in Go; ok false: evaluate the expression (see
	// builtinValues).
	values  func(obj any) (values []string, ok bool)
	context string
	kind    Kind
	// plans are the interpreter's programs of the expression, shared by
	// the copies of the Program (WithContext, WithBudget...): planned when
	// it is compiled, or on their first use when its planning is deferred
	// (see Env.CompileDeferred).
	plans *plans
	refs  []Reference
	// nsArgs are the locations of the namespace arguments of the
	// three-argument get() calls, by resource as written.
	nsArgs map[string][]common.Location
	// object turns the object handed to an evaluation into the value of
	// the object variable.
	object func(obj any) any
	lookup Lookup
	// cluster is the value of the variable cluster; nil: not bound.
	cluster   ref.Val
	costLimit uint64
	costHint  string
	// metadataOnly: the expression reads only object.apiVersion,
	// object.kind and object.metadata (see ReadsOnlyMetadata).
	metadataOnly bool
	// paths are the JSON paths of object it reads; nil: any (see
	// ObjectPaths).
	paths *jsonval.Paths
	// reads are what it reads of object and each, into the elements of
	// lists (see Reads); listPath is the path of the list it is, if it
	// is one (see ListPath).
	reads    *Reads
	listPath []string
	// usesEach: the expression reads the variable each.
	usesEach bool
	// usesObject: the expression names the variable object.
	usesObject bool
	// tracked: evaluations track their cost and stop at costLimit; the
	// others cannot reach it (see Env.programOptions).
	tracked bool
	// hasUntracked: a tracked program also has a program without cost
	// tracking (plans.untracked), for evaluations of objects whose sizes
	// are within one of bounds (see Prepare): the cost estimate under each
	// is within the limit. Bounds nil with deferred planning: those of
	// plans, computed on their first use.
	hasUntracked bool
	bounds       []jsonval.Sizes
	// measurable: Prepare measures objects (the Env presents them with
	// the default converter).
	measurable bool
	// fast evaluates the expression without the interpreter when it can;
	// nil for expressions it does not handle. A tracked program evaluates
	// with it only what it would evaluate untracked (see fastFor).
	// fastSlots is the number of comprehension variables it binds.
	fast      fastExpr
	fastSlots int
	// budget, when not nil, is charged the cost of every evaluation; see
	// WithBudget.
	budget *Budget
}

// Expr returns the expression as written.
func (p *Program) Expr() string { return p.expr }

// Context returns the name of the place the expression came from, as given
// to Compile.
func (p *Program) Context() string { return p.context }

// Kind returns the kind the expression was compiled for.
func (p *Program) Kind() Kind { return p.kind }

// ReadsOthers reports whether the expression reads other objects, with
// get() or byIndex().
func (p *Program) ReadsOthers() bool { return len(p.refs) > 0 }

// ReadIndexes returns what progs read with get() and byIndex(): each
// resource as the expressions name it, with the indexes byIndex() reads of
// it (none for a resource read with get() alone).
func ReadIndexes(progs []*Program) map[string]sets.Set[string] {
	out := map[string]sets.Set[string]{}
	for _, p := range progs {
		for _, ref := range p.refs {
			if out[ref.Resource] == nil {
				out[ref.Resource] = sets.New[string]()
			}
			out[ref.Resource].Insert(ref.Indexes...)
		}
	}
	return out
}

// References returns the resources the expression reads with get() and
// byIndex(), sorted by resource, or nil. The caller owns the returned
// slice.
func (p *Program) References() []Reference {
	if len(p.refs) == 0 {
		return nil
	}
	refs := make([]Reference, len(p.refs))
	for i, r := range p.refs {
		refs[i] = Reference{Resource: r.Resource, Indexes: slices.Clone(r.Indexes), Calls: slices.Clone(r.Calls)}
	}
	return refs
}

// CheckClusterScoped returns an error, which shows the call with a caret,
// when the expression passes a namespace to get(resource, NAMESPACE, NAME)
// for resource (as written), which is cluster-scoped; nil when it does
// not. Only a namespaced resource has objects in a namespace: such a call
// would find nothing.
func (p *Program) CheckClusterScoped(resource string) error {
	locs := p.nsArgs[resource]
	if len(locs) == 0 {
		return nil
	}
	return newExprError(p.context, p.expr, locs[0].Line(), locs[0].Column(),
		"%q is cluster-scoped: its objects have no namespace; call get(%q, NAME) without one", resource, resource)
}

// WithContext returns a copy of p whose errors name context instead of
// the context it was compiled with: the same expression written in
// another place. The copy shares p's compiled program.
func (p *Program) WithContext(context string) *Program {
	c := *p
	c.context = context
	return &c
}

// WithLookup returns a copy of p whose get() and byIndex() calls read from l.
// Evaluating a program that calls them without a Lookup fails with an
// error. p itself is not changed.
func (p *Program) WithLookup(l Lookup) *Program {
	c := *p
	c.lookup = l
	return &c
}

// WithCluster returns a copy of p in which the variable cluster, declared
// by an Env made WithClusterVariable, is name: the context a query reads
// the object's cluster through. Evaluating a program that reads cluster
// without it fails with an error. p itself is not changed.
func (p *Program) WithCluster(name string) *Program {
	c := *p
	c.cluster = types.String(name)
	return &c
}

// WithBudget returns a copy of p whose evaluations are charged to b: each
// fails at once, with an error wrapping [ErrBudgetExceeded] or the cause of
// b's context, once b is spent or its context has ended, and otherwise
// adds what it cost. Only a program whose Env tracks the cost of every
// evaluation ([WithCostTracking]) is charged what it actually costs; the
// others are charged nothing but still stop with b. p itself is not
// changed.
func (p *Program) WithBudget(b *Budget) *Program {
	c := *p
	c.budget = b
	return &c
}

// EachVar is the variable that CompileEach declares besides object: the
// element of a list an exporter metric iterates over.
const EachVar = "each"

// CompileEach compiles expr like Compile, with the variable each (dyn)
// declared too; evaluate it with EvalEach.
func (e *Env) CompileEach(expr string, kind Kind, context string) (*Program, error) {
	return e.compileShared(sharedKey{expr, kind, true}, context, false)
}

// CompileDeferred compiles expr as Compile does (as CompileEach when
// withEach), but plans its programs for the interpreter only when an
// evaluation first needs them, which the fast path spares most of the
// exporter's expressions: compiling costs a third less, and the programs
// never needed take no memory. Planning evaluates what is constant, so an
// error found there (int("x"), a regular expression literal that does
// not compile) is not returned here but by the first evaluation that
// needs the interpreter: use it only for expressions known to plan, such
// as those of a built-in profile, which its tests plan.
func (e *Env) CompileDeferred(expr string, kind Kind, context string, withEach bool) (*Program, error) {
	return e.compileShared(sharedKey{expr, kind, withEach}, context, true)
}

// compileShared compiles key's expression with the dyn environment (with
// each when key.each), reusing the program of an earlier call when
// programs are shared (see WithSharedPrograms); deferred defers its
// planning (see CompileDeferred).
func (e *Env) compileShared(key sharedKey, context string, deferred bool) (*Program, error) {
	env := e.dyn
	if key.each {
		env = e.dynEach
	}
	if e.shared == nil {
		return e.compile(env, nil, nil, key.expr, key.kind, context, false, deferred)
	}
	e.mu.Lock()
	p := e.shared[key]
	e.mu.Unlock()
	if p != nil {
		if !deferred {
			// Planned by an earlier CompileDeferred, maybe not yet: the
			// caller expects planning's errors now.
			if err := p.plans.get(); err != nil {
				return nil, &ExprError{Context: context, Expr: key.expr, Message: err.Error()}
			}
		}
		return p.WithContext(context), nil
	}
	p, err := e.compile(env, nil, nil, key.expr, key.kind, context, false, deferred)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.shared[key] = p
	e.mu.Unlock()
	// A copy: callers may change theirs (AdoptSizeBounds), never the
	// shared one.
	return p.WithContext(context), nil
}

// plans are the interpreter's programs of an expression: prog, and
// untracked, the same without cost tracking, when withUntracked. With
// deferred planning, they are planned by the first get, and the size bounds
// of untracked computed by the first dynBounds.
type plans struct {
	e       *Env
	env     *cel.Env
	checked *cel.Ast
	tracked bool
	// withUntracked: untracked is planned too.
	withUntracked bool
	deferred      bool

	once      sync.Once
	prog      cel.Program
	untracked cel.Program
	err       error

	boundsOnce sync.Once
	dynBounds  atomic.Pointer[[]jsonval.Sizes]
}

// plan plans the programs.
func (pl *plans) plan() error {
	prog, err := pl.env.Program(pl.checked, pl.e.programOptions(pl.tracked)...)
	if err != nil {
		return err
	}
	var untracked cel.Program
	if pl.withUntracked {
		if untracked, err = pl.env.Program(pl.checked, pl.e.programOptions(false)...); err != nil {
			return err
		}
	}
	pl.prog, pl.untracked = prog, untracked
	return nil
}

// get plans the programs if planning was deferred and they are not yet;
// it returns planning's error.
func (pl *plans) get() error {
	if !pl.deferred {
		return nil
	}
	pl.once.Do(func() { pl.err = pl.plan() })
	return pl.err
}

// bounds returns the size bounds of the expression checked with a dyn
// object (see sizeBoundsWithin), computing them on the first call when
// planning was deferred.
func (pl *plans) bounds() []jsonval.Sizes {
	if b := pl.dynBounds.Load(); b != nil {
		return *b
	}
	pl.boundsOnce.Do(func() {
		var b []jsonval.Sizes
		if pl.withUntracked {
			b = sizeBoundsWithin(pl.env, pl.checked, pl.e.costLimit)
		}
		pl.dynBounds.Store(&b)
	})
	return *pl.dynBounds.Load()
}

// Compile compiles expr for the given kind, declaring object as dyn: field
// names are checked when the expression is evaluated. context names the
// place the expression came from (such as "--where", `index "byNode"` or
// `column "node"`) and is used in messages. A compile error is an
// [*ExprError].
func (e *Env) Compile(expr string, kind Kind, context string) (*Program, error) {
	return e.compileShared(sharedKey{expr, kind, false}, context, false)
}

// CompileWithSchema is [Env.Compile] with object declared with the type
// described by schema, the OpenAPI v3 schema of the resource (see
// [ResolveSchema]): misspelled fields and values of the wrong type are
// refused at compile time, as Kubernetes does for ValidatingAdmissionPolicy
// and CRD validation rules, with a suggestion for a misspelled field. A nil
// schema means there is none: the expression is checked dynamically, as
// with Compile.
//
// The schema serves checking only: the compiled program evaluates JSON
// objects (and converted values) exactly as one from Compile does. So that
// this holds, parts of the schema whose data has no fixed shape
// (x-kubernetes-preserve-unknown-fields, objects without properties,
// properties whose names are not CEL identifiers) are declared dyn, and
// strings are strings whatever their format (timestamps included: use
// timestamp() to compare them as such).
//
// An expression evaluated on several resources reads some fields only on
// some of them; others are the schemas of the other resources. What a
// condition on object.kind rules out for this resource is not checked
// (object.kind == "Pod" ? object.status.phase == "Running" : true), and a
// field this resource lacks but another has is accepted in the optional
// forms (object.status.?phase, has(object.status.phase)), which evaluate
// to an empty optional and false here. A field that no resource has is
// still refused. The program of such an expression is compiled as by
// Compile.
func (e *Env) CompileWithSchema(expr string, kind Kind, context string, schema *spec.Schema, others ...*spec.Schema) (*Program, error) {
	if schema == nil {
		return e.Compile(expr, kind, context)
	}
	return e.compileAgainst(schema, others, false, expr, kind, context, false)
}

// compileAgainst compiles expr against schema (not nil), the other
// resources' schemas being others, with each declared when withEach; see
// compile for checkOnly.
func (e *Env) compileAgainst(schema *spec.Schema, others []*spec.Schema, withEach bool, expr string, kind Kind, context string, checkOnly bool) (*Program, error) {
	se, g, err := e.guarded(schema, others)
	if err != nil {
		return nil, err
	}
	env := se.env
	g.dyn = e.dyn
	if withEach {
		env, g.dyn = se.eachEnv, e.dynEach
	}
	return e.compile(env, se.object, g, expr, kind, context, checkOnly, false)
}

// guarded returns the environment of schema and the guards of a check
// against it, the other resources' schemas being others.
func (e *Env) guarded(schema *spec.Schema, others []*spec.Schema) (*schemaEnv, *guards, error) {
	se, err := e.schemaEnv(schema)
	if err != nil {
		return nil, nil, err
	}
	g := &guards{kind: schemaKind(schema)}
	for _, o := range others {
		if o == nil || o == schema {
			continue
		}
		ose, err := e.schemaEnv(o)
		if err != nil {
			return nil, nil, err
		}
		if ose.object != nil {
			g.others = append(g.others, ose.object)
		}
	}
	return se, g, nil
}

// CompileEachWithSchema is [Env.CompileWithSchema] with the variable each
// (dyn) declared too, as [Env.CompileEach] does: object is checked against
// schema, each dynamically. A nil schema means there is none, as for
// CompileEach.
func (e *Env) CompileEachWithSchema(expr string, kind Kind, context string, schema *spec.Schema, others ...*spec.Schema) (*Program, error) {
	if schema == nil {
		return e.CompileEach(expr, kind, context)
	}
	return e.compileAgainst(schema, others, true, expr, kind, context, false)
}

// Checked is what checking an expression against a schema learns for the
// program of the same expression compiled without one; see
// [Env.CheckWithSchema] and [Program.AdoptSizeBounds].
type Checked struct {
	expr     string
	usesEach bool
	bounds   []jsonval.Sizes
}

// CheckWithSchema checks expr against schema as [Env.CompileWithSchema]
// does (with each declared, as [Env.CompileEachWithSchema], when
// withEach), with the same errors, without making a program of it: for
// programs compiled without a schema, checked once the schemas are known.
// It does not plan a program, so it does not report what only planning
// finds (a constant that fails to evaluate, int("x")): compiling without a
// schema does.
// A nil schema checks expr dynamically, as [Env.Compile].
func (e *Env) CheckWithSchema(expr string, kind Kind, context string, withEach bool, schema *spec.Schema, others ...*spec.Schema) (*Checked, error) {
	var p *Program
	var err error
	switch {
	case schema != nil:
		p, err = e.compileAgainst(schema, others, withEach, expr, kind, context, true)
	case withEach:
		p, err = e.compile(e.dynEach, nil, nil, expr, kind, context, true, false)
	default:
		p, err = e.compile(e.dyn, nil, nil, expr, kind, context, true, false)
	}
	if err != nil {
		return nil, err
	}
	return &Checked{expr: p.expr, usesEach: p.usesEach, bounds: p.bounds}, nil
}

// compile compiles expr in env; object is the declared type of the object
// variable, or nil when it is dyn. g, when not nil, are the guards of a
// check against a schema (see CompileWithSchema). When checkOnly, the
// Program holds only what a check learns (see CheckWithSchema): it has no
// cel.Program and must not be evaluated.
func (e *Env) compile(env *cel.Env, object *apiservercel.DeclType, g *guards, expr string, kind Kind, context string, checkOnly, deferred bool) (*Program, error) {
	switch kind {
	case KindPredicate, KindIndex, KindValue, KindNumber:
	default:
		return nil, fmt.Errorf("compiling %s: unknown expression kind %d", context, int(kind))
	}
	if strings.TrimSpace(expr) == "" {
		return nil, &ExprError{Context: context, Expr: expr, Message: "the expression is empty"}
	}
	var checked *cel.Ast
	var issues *cel.Issues
	narrowed := false
	if g == nil {
		checked, issues = env.Compile(expr)
	} else {
		checked, issues, narrowed = g.check(env, object, expr)
	}
	if issues.Err() != nil {
		return nil, issueError(env, object, expr, context, issues.Errors()[0])
	}
	if !outputAllowed(kind, checked.OutputType()) {
		return nil, &ExprError{Context: context, Expr: expr,
			Message: fmt.Sprintf("must evaluate to %s but got %s", kind.must(), cel.FormatCELType(checked.OutputType()))}
	}
	if narrowed {
		// What was checked is the expression as it reads for this
		// resource; the program evaluates the whole of it.
		return e.compile(g.dyn, nil, nil, expr, kind, context, checkOnly, false)
	}
	refs, nsArgs, refErr := references(checked, expr, context)
	if refErr != nil {
		return nil, refErr
	}
	est, err := env.EstimateCost(checked, costEstimator{})
	if err != nil {
		return nil, fmt.Errorf("compiling %s expression %q: estimating its cost: %w", context, expr, err)
	}
	if est.Min > e.costLimit {
		// Refused before any object is read: every evaluation would be
		// stopped, each after that much work.
		return nil, &ExprError{Context: context, Expr: expr, Message: fmt.Sprintf(
			"its cost on any object is at least %d units, above the cost limit of %d: every evaluation would be stopped; simplify the expression or %s",
			est.Min, e.costLimit, e.costHint)}
	}
	tracked := est.Max > e.costLimit || e.trackAllCost
	if checkOnly {
		p := &Program{expr: expr, context: context, kind: kind, refs: refs, tracked: tracked, usesEach: usesIdent(checked.NativeRep().Expr(), EachVar)}
		if tracked && !e.trackAllCost && len(refs) == 0 && e.converter == nil {
			p.bounds = sizeBoundsWithin(env, checked, e.costLimit)
		}
		return p, nil
	}
	// A program that must track its cost because objects may be as large
	// as a request also gets one that does not, for the objects small
	// enough that the estimate proves the limit out of reach. Lookups
	// read other objects, whose sizes are not measured.
	withUntracked := tracked && !e.trackAllCost && len(refs) == 0 && e.converter == nil
	pl := &plans{e: e, env: env, checked: checked, tracked: tracked, withUntracked: withUntracked}
	var bounds []jsonval.Sizes
	if deferred && object == nil {
		// Planned, and the bounds computed, when first needed: a dyn
		// object always gets a program without cost tracking.
		pl.deferred = true
	} else {
		if withUntracked {
			bounds = sizeBoundsWithin(env, checked, e.costLimit)
			// Without bounds of its own (a dyn object, whose values may be
			// lists or strings), it may get those of the expression
			// checked against the objects' schema (see AdoptSizeBounds).
			pl.withUntracked = object == nil || len(bounds) > 0
		}
		if err := pl.plan(); err != nil {
			// Planning evaluates what is constant: int("x") fails here.
			return nil, &ExprError{Context: context, Expr: expr, Message: err.Error()}
		}
		pl.dynBounds.Store(&bounds)
	}
	// The fast path evaluates what the interpreter would evaluate without
	// tracking the cost: everything of a program that does not track it,
	// the objects within its bounds of one that does.
	var fast fastExpr
	var fastSlots int
	if len(refs) == 0 && (!tracked || pl.withUntracked) {
		fast, fastSlots = compileFast(env, checked.NativeRep())
	}
	return &Program{
		fast:         fast,
		fastSlots:    fastSlots,
		expr:         expr,
		context:      context,
		kind:         kind,
		plans:        pl,
		refs:         refs,
		nsArgs:       nsArgs,
		object:       e.objectFunc(),
		costLimit:    e.costLimit,
		costHint:     e.costHint,
		tracked:      tracked,
		hasUntracked: pl.withUntracked,
		bounds:       bounds,
		measurable:   e.converter == nil,

		metadataOnly: onlyMetadata(checked.NativeRep().Expr()),
		paths:        objectPaths(checked.NativeRep().Expr()),
		reads:        analyseReads(checked.NativeRep().Expr()),
		listPath:     listPathOf(checked.NativeRep().Expr()),
		usesEach:     usesIdent(checked.NativeRep().Expr(), EachVar),
		usesObject:   usesIdent(checked.NativeRep().Expr(), ObjectVar),
	}, nil
}

// AdoptSizeBounds makes p evaluate without tracking its cost the objects
// within the size bounds of typed, the same expression checked against the
// schema of those objects (see CheckWithSchema): the check knows which
// values are lists and which are strings, and so estimates their cost more
// closely than p, which checks object as dyn. The objects p evaluates must
// be valid for that schema, as the API server's are. It changes p, and must
// be called before p is evaluated; it does nothing when typed is another
// expression or p has no program without cost tracking.
func (p *Program) AdoptSizeBounds(typed *Checked) {
	if typed == nil || typed.expr != p.expr || !p.hasUntracked || p.usesEach != typed.usesEach {
		return
	}
	if len(typed.bounds) > 0 {
		p.bounds = typed.bounds
	}
}

// AdoptsSizeBounds reports whether AdoptSizeBounds may change p: it tracks
// its cost and has a program that does not. Checking any other program
// against a schema finds only errors.
func (p *Program) AdoptsSizeBounds() bool { return p.hasUntracked }

// SizeBounds returns the size bounds within which p evaluates an object
// without tracking its cost (see AdoptSizeBounds): none for a program
// that does not track it.
func (p *Program) SizeBounds() []jsonval.Sizes {
	if !p.hasUntracked {
		return nil
	}
	if p.bounds != nil {
		return p.bounds
	}
	return p.plans.bounds()
}

// SetSizeBounds makes p evaluate without tracking its cost the objects
// within bounds, as AdoptSizeBounds does with those of the same expression
// checked against the objects' schema, here known beforehand (those of a
// built-in profile, which its tests compute). The same conditions hold:
// the objects p evaluates must be valid for that schema, it changes p and
// must be called before p is evaluated, and no bounds leaves p as it is.
func (p *Program) SetSizeBounds(bounds []jsonval.Sizes) {
	if p.hasUntracked && len(bounds) > 0 {
		p.bounds = bounds
	}
}

// sizeBoundsWithin returns the size bounds under which the estimated cost
// of checked is within limit: for each bound of lists, the largest bound of
// strings that keeps it there, if any, when it allows longer strings than
// the bound of more elements before it. An estimate grows with both sizes,
// so the largest string bound for a list bound is searched by halves, and
// among those at least as large as the previous list bound's.
func sizeBoundsWithin(env *cel.Env, checked *cel.Ast, limit uint64) []jsonval.Sizes {
	fits := func(b jsonval.Sizes) bool {
		est, err := env.EstimateCost(checked, costEstimator{bound: b, provider: env.CELTypeProvider(), checked: checked.NativeRep()})
		return err == nil && est.Max <= limit
	}
	var out []jsonval.Sizes
	// prev is the index in stringBounds (largest first) of the previous
	// list bound's string bound: one that fits for fewer elements too.
	prev := len(stringBounds)
	for _, elems := range listBounds {
		lo, hi := 0, prev
		for lo < hi {
			mid := (lo + hi) / 2
			if fits(jsonval.Sizes{Elems: elems, Bytes: stringBounds[mid]}) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if lo == len(stringBounds) {
			continue // no string bound fits
		}
		if lo < prev {
			out = append(out, jsonval.Sizes{Elems: elems, Bytes: stringBounds[lo]})
			prev = lo
		}
		if prev == 0 {
			break // fewer elements allow no longer strings
		}
	}
	return out
}

// outputAllowed reports whether an expression of kind may have static type
// t. dyn is always allowed; it is checked when the expression is evaluated.
func outputAllowed(kind Kind, t *cel.Type) bool {
	switch kind {
	case KindPredicate:
		return isKind(t, types.BoolKind, types.DynKind)
	case KindNumber:
		if t.Kind() == types.OpaqueKind {
			// optional(number): an empty optional means "no sample".
			return t.TypeName() == "optional_type" && len(t.Parameters()) == 1 &&
				isKind(t.Parameters()[0], types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.DynKind)
		}
		return isKind(t, types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.DynKind, types.NullTypeKind)
	case KindIndex:
		switch t.Kind() {
		case types.StringKind, types.NullTypeKind, types.DynKind:
			return true
		case types.ListKind:
			return isKind(t.Parameters()[0], types.StringKind, types.DynKind)
		case types.OpaqueKind:
			// optional(string): an empty optional means "not indexed".
			return t.TypeName() == "optional_type" && len(t.Parameters()) == 1 &&
				isKind(t.Parameters()[0], types.StringKind, types.DynKind)
		}
		return false
	}
	return true
}

func isKind(t *cel.Type, kinds ...types.Kind) bool {
	return slices.Contains(kinds, t.Kind())
}

// references collects the resources and indexes read by get() and
// byIndex(), and refuses calls whose resource or index is not a string
// literal: the informers they read must be known before evaluation.
func references(checked *cel.Ast, expr, context string) ([]Reference, map[string][]common.Location, *ExprError) {
	native := checked.NativeRep()
	info := native.SourceInfo()
	indexes := map[string]sets.Set[string]{}
	calls := map[string]sets.Set[string]{}
	called := func(resource, call string) {
		if calls[resource] == nil {
			calls[resource] = sets.New[string]()
		}
		calls[resource].Insert(call)
	}
	var nsArgs map[string][]common.Location
	var refErr *ExprError
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		if refErr != nil || x.Kind() != ast.CallKind {
			return
		}
		call := x.AsCall()
		fn := call.FunctionName()
		args := call.Args()
		if !call.IsMemberFunction() && isRelationFunction(fn, len(args)) {
			resource := ""
			if len(args) == 2 {
				var ok bool
				if resource, ok = stringLiteral(args[1]); !ok || resource == "" {
					loc := startLocation(info, args[1])
					refErr = newExprError(context, expr, loc.Line(), loc.Column(),
						"the second argument of %s() must be a string literal naming a resource, such as \"pods\"", fn)
					return
				}
			}
			for r, ixs := range relationReferences(fn, resource) {
				if indexes[r] == nil {
					indexes[r] = sets.New[string]()
				}
				indexes[r].Insert(ixs...)
				called(r, relationCallText(fn, resource))
			}
			return
		}
		if call.IsMemberFunction() || (fn != getFunction && fn != byIndexFunction) {
			return
		}
		resource, ok := stringLiteral(args[0])
		if !ok || resource == "" {
			loc := startLocation(info, args[0])
			refErr = newExprError(context, expr, loc.Line(), loc.Column(),
				"the first argument of %s() must be a string literal naming a resource, such as \"nodes\"", fn)
			return
		}
		if indexes[resource] == nil {
			indexes[resource] = sets.New[string]()
		}
		if fn != byIndexFunction {
			called(resource, fmt.Sprintf("%s(%q, …)", fn, resource))
			if len(args) == 3 {
				if nsArgs == nil {
					nsArgs = map[string][]common.Location{}
				}
				nsArgs[resource] = append(nsArgs[resource], startLocation(info, args[1]))
			}
			return
		}
		index, ok := stringLiteral(args[1])
		if !ok || index == "" {
			loc := startLocation(info, args[1])
			refErr = newExprError(context, expr, loc.Line(), loc.Column(),
				"the second argument of byIndex() must be a string literal naming an index, such as \"byNode\"")
			return
		}
		indexes[resource].Insert(index)
		called(resource, fmt.Sprintf("%s(%q, %q, …)", fn, resource, index))
	}))
	if refErr != nil {
		return nil, nil, refErr
	}
	var refs []Reference
	for resource, names := range indexes {
		r := Reference{Resource: resource, Calls: sets.List(calls[resource])}
		for name := range names {
			r.Indexes = append(r.Indexes, name)
		}
		sort.Strings(r.Indexes)
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Resource < refs[j].Resource })
	return refs, nsArgs, nil
}

// startLocation returns the location of the first character of x: that of
// x itself is the position of its operator (the dot of a selection, for
// example).
func startLocation(info *ast.SourceInfo, x ast.Expr) common.Location {
	start := int32(-1)
	ast.PreOrderVisit(x, ast.NewExprVisitor(func(e ast.Expr) {
		if r, ok := info.GetOffsetRange(e.ID()); ok && (start < 0 || r.Start < start) {
			start = r.Start
		}
	}))
	if start < 0 {
		return common.NoLocation
	}
	return info.GetLocationByOffset(start)
}

func stringLiteral(x ast.Expr) (string, bool) {
	if x.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := x.AsLiteral().(types.String)
	return string(s), ok
}

// issueError turns the first issue cel-go reports into an ExprError, with a
// suggestion for misspelled names.
func issueError(env *cel.Env, object *apiservercel.DeclType, expr, context string, issue *cel.Error) *ExprError {
	msg := cleanMessage(issue.Message)
	line, column := issue.Location.Line(), issue.Location.Column()
	var word, function string
	var candidates []string
	switch {
	case scanQuoted(msg, "undeclared reference to '", &word):
		candidates = identifierCandidates(env, expr)
		function = word
	case scanQuoted(msg, "found no matching overload for '", &function):
	case scanQuoted(msg, "undefined field '", &word):
		candidates = fieldCandidates(env, object, expr, issue.ExprID)
		column = fieldColumn(lineRunes(expr, line), column, word)
	}
	if function != "" {
		// For a call, cel-go reports the position of the parenthesis; point
		// at the name of the function.
		runes, n := lineRunes(expr, line), len([]rune(function))
		if column >= n && column <= len(runes) && string(runes[column-n:column]) == function {
			column -= n
		}
	}
	if msg == "invalid matches argument" {
		// Say what is wrong with the regular expression.
		if lit, ok := literalAt(env, expr, issue.ExprID); ok {
			if _, err := regexp.Compile(lit); err != nil {
				msg += ": " + err.Error()
			}
		}
	}
	if hint := habitHint(expr, msg, word, line, column); hint != "" {
		msg += " (" + hint + ")"
	} else if s, ok := suggest(word, candidates); ok && word != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return newExprError(context, expr, line, column, "%s", msg)
}

// fieldColumn returns the column of the undefined field word on a line
// whose runes are runes: cel-go reports the position of the dot before it
// (of ".?" in an optional select), or of the parenthesis of the has()
// that tests it.
func fieldColumn(runes []rune, column int, word string) int {
	if column < 0 || column >= len(runes) {
		return column
	}
	if runes[column] == '(' {
		if i := strings.Index(string(runes[column:]), "."+word); i >= 0 {
			column += len([]rune(string(runes[column:])[:i]))
		}
	}
	if column < len(runes) && runes[column] == '.' {
		column++
	}
	if column < len(runes) && runes[column] == '?' {
		column++
	}
	return column
}

// literalAt returns the string literal with the given id in expr.
func literalAt(env *cel.Env, expr string, id int64) (string, bool) {
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return "", false
	}
	for _, m := range ast.MatchDescendants(ast.NavigateAST(parsed.NativeRep()), func(e ast.NavigableExpr) bool {
		return e.ID() == id
	}) {
		return stringLiteral(m)
	}
	return "", false
}

// scanQuoted reports whether msg starts with prefix followed by a quoted
// word, which it stores in word.
func scanQuoted(msg, prefix string, word *string) bool {
	rest, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return false
	}
	w, _, ok := strings.Cut(rest, "'")
	*word = w
	return ok
}

func lineRunes(expr string, line int) []rune {
	lines := strings.Split(expr, "\n")
	if line < 1 || line > len(lines) {
		return nil
	}
	return []rune(lines[line-1])
}

// identifierCandidates lists the names an undeclared identifier may have
// been meant as: the variables, the global functions and macros, and the
// iteration variables of the expression.
func identifierCandidates(env *cel.Env, expr string) []string {
	var names []string
	for _, v := range env.Variables() {
		names = append(names, v.Name())
	}
	for name := range env.Functions() {
		names = append(names, name)
	}
	for _, m := range env.Macros() {
		names = append(names, m.Function())
	}
	if parsed, iss := env.Parse(expr); iss.Err() == nil {
		ast.PreOrderVisit(parsed.NativeRep().Expr(), ast.NewExprVisitor(func(x ast.Expr) {
			if x.Kind() == ast.ComprehensionKind {
				c := x.AsComprehension()
				names = append(names, c.IterVar(), c.IterVar2())
			}
		}))
	}
	return slices.DeleteFunc(names, func(n string) bool { return !isIdentifier(n) })
}

// isIdentifier reports whether s is a plain CEL identifier (not an operator
// or a hidden name such as "@result").
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

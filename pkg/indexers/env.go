package indexers

import (
	"fmt"
	"math"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ObjectVar is the name of the variable that holds the object an expression
// is evaluated against.
const ObjectVar = "object"

// DefaultCostLimit is the cost limit of one evaluation unless [WithCostLimit]
// says otherwise. It is the limit Kubernetes applies to one evaluation of an
// admission policy or CRD validation rule, so that an expression accepted
// there also runs here. Expressions over one object cost from a few units
// (a field compared with a string) to a few hundred (comprehensions over the
// containers of a pod); a runaway expression, such as a nested comprehension
// over a list of 500 elements, is stopped within about half a second.
//
// Only programs whose static cost estimate exceeds the limit track their
// cost while evaluating; the others cannot reach it. Such a program still
// evaluates without tracking an object prepared with [Program.Prepare]
// whose lists, maps and strings are small enough for the estimate under
// their sizes to be within the limit, as a pod's are for the expressions
// over its containers.
const DefaultCostLimit uint64 = celconfig.PerCallLimit

// interruptCheckFrequency is the number of comprehension iterations between
// two checks of a context passed to [Program.Eval]; the value Kubernetes uses.
const interruptCheckFrequency = celconfig.CheckFrequency

// Converter turns an object handed to a [Program] (or returned by a [Lookup])
// into the CEL value of the object variable. It must not modify obj and must
// report failures as a CEL error value (types.NewErr), not by panicking. The
// value must present the object under its JSON field names with JSON-like
// values: strings (also for timestamps and quantities), int64 for integers,
// float64, bool, null, lists and maps.
type Converter func(obj any) ref.Val

// DefaultConverter is the converter used unless [WithConverter] says
// otherwise. It accepts *unstructured.Unstructured, any other
// runtime.Unstructured and map[string]any (as their maps), values that
// already implement ref.Val (unchanged), and typed Go API objects such as
// *corev1.Pod or *metav1.PartialObjectMetadata, which it presents under
// their JSON field names through a lazy view that reads a field only when an
// expression asks for it (package jsonval).
func DefaultConverter(obj any) ref.Val {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if o == nil {
			return types.NewErr("cannot evaluate a nil object")
		}
		return types.DefaultTypeAdapter.NativeToValue(o.Object)
	case map[string]any:
		return types.DefaultTypeAdapter.NativeToValue(o)
	case ref.Val:
		return o
	case runtime.Unstructured:
		return types.DefaultTypeAdapter.NativeToValue(o.UnstructuredContent())
	case nil:
		return types.NewErr("cannot evaluate a nil object")
	}
	return jsonval.New(obj)
}

// Option configures [NewEnv].
type Option func(*options)

type options struct {
	costLimit    uint64
	costHint     string
	converter    Converter
	version      *version.Version
	trackAllCost bool
	share        bool
	cluster      bool
}

// ClusterVar is the variable of an Env made WithClusterVariable.
const ClusterVar = "cluster"

// WithClusterVariable declares the string variable cluster in every
// expression: the name of the context (the cluster) an object comes from,
// bound per program with Program.WithCluster.
func WithClusterVariable() Option {
	return func(o *options) { o.cluster = true }
}

// WithSharedPrograms makes Compile and CompileEach return the program
// compiled before for the same expression and kind (with the caller's
// context), until ForgetSchemas: a program holds its own copy of every
// function's overloads, and configs compiled in one batch (the files of a
// profile) repeat many expressions. Use it where each batch of
// compilations ends with ForgetSchemas.
func WithSharedPrograms() Option {
	return func(o *options) { o.share = true }
}

// WithCostTracking makes every program track the cost of its evaluations,
// whatever its static estimate, so that a [Budget] can charge them what
// they actually cost (see [Program.WithBudget]). Tracking makes a simple
// expression several times slower: use it for expressions that strangers
// send (a query server), not for index functions.
func WithCostTracking() Option {
	return func(o *options) { o.trackAllCost = true }
}

// WithCostLimit sets the cost limit of one evaluation; see [DefaultCostLimit].
// A limit of 0 keeps the default; [NoCostLimit] sets none.
func WithCostLimit(limit uint64) Option {
	return func(o *options) {
		if limit > 0 {
			o.costLimit = limit
		}
	}
}

// NoCostLimit is the limit that, given to [WithCostLimit], lets every
// evaluation run until it is done or its context ends (see [Program.Eval]
// and [Budget]).
const NoCostLimit uint64 = math.MaxUint64

// WithCostLimitHint sets what the error of an evaluation stopped by the
// cost limit tells the user to do besides simplifying the expression, such
// as the flag that raises the limit. The default is "raise the limit".
func WithCostLimitHint(hint string) Option {
	return func(o *options) {
		if hint != "" {
			o.costHint = hint
		}
	}
}

// WithConverter sets how objects become the object variable and how objects
// returned by a [Lookup] become CEL values. The default is
// [DefaultConverter], with a faster path for unstructured objects.
func WithConverter(c Converter) Option {
	return func(o *options) { o.converter = c }
}

// WithCompatibilityVersion selects the Kubernetes version whose CEL libraries
// and language settings the environment offers. The default is the version
// Kubernetes itself compiles new expressions for
// (environment.DefaultCompatibilityVersion).
func WithCompatibilityVersion(v *version.Version) Option {
	return func(o *options) { o.version = v }
}

// Env is a CEL environment for kubectl-informer expressions. Build it once
// with [NewEnv] and compile every expression with it. An Env is safe for
// concurrent use.
type Env struct {
	version   *version.Version
	base      *cel.Env // the Kubernetes libraries, without variables
	dyn       *cel.Env // base with object declared as dyn
	dynEach   *cel.Env // dyn with each declared as dyn too
	costLimit uint64
	// costHint ends the message of ErrCostLimitExceeded; see
	// WithCostLimitHint.
	costHint string
	// trackAllCost: see WithCostTracking.
	trackAllCost bool
	// cluster: see WithClusterVariable.
	cluster bool
	// converter is the user-supplied converter, or nil for the default one
	// (which has a faster path for unstructured objects).
	converter Converter
	// lookupDecorator binds get() and byIndex() calls to the Lookup of the
	// evaluation; see lookup.go.
	lookupDecorator cel.ProgramOption

	mu sync.Mutex
	// schemaEnvs caches the environment built for each schema passed to
	// CompileWithSchema. Guarded by mu.
	schemaEnvs map[*spec.Schema]*schemaEnv
	// shared caches the programs of Compile and CompileEach when
	// WithSharedPrograms is set (nil otherwise). Guarded by mu.
	shared map[sharedKey]*Program
}

// sharedKey names a program of Env.shared.
type sharedKey struct {
	expr string
	kind Kind
	each bool
}

// ForgetSchemas drops the environments built for schemas so far, and the
// schemas with them. The cache is keyed by the schema's address: a caller
// that resolves schemas afresh for each batch of compilations (a config
// load) calls it after each batch, so that the environments of old
// schemas do not pile up.
func (e *Env) ForgetSchemas() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.schemaEnvs)
	clear(e.shared)
}

// NewEnv builds the CEL environment. Build one per process and compile
// every expression with it; the environment of each schema is built once
// and kept.
func NewEnv(opts ...Option) (*Env, error) {
	o := options{costLimit: DefaultCostLimit, costHint: "raise the limit"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.version == nil {
		o.version = environment.DefaultCompatibilityVersion()
	}
	if len(o.version.Components()) < 2 {
		return nil, fmt.Errorf("compatibility version %q must have a major and a minor component", o.version)
	}
	base, err := cel.NewEnv(kubernetesEnvOptions(o.version)...)
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	e := &Env{
		version:      o.version,
		base:         base,
		costLimit:    o.costLimit,
		costHint:     o.costHint,
		trackAllCost: o.trackAllCost,
		cluster:      o.cluster,
		converter:    o.converter,
		schemaEnvs:   make(map[*spec.Schema]*schemaEnv),
	}
	if o.share {
		e.shared = map[sharedKey]*Program{}
	}
	e.lookupDecorator = cel.CustomDecoratorV2(lookupDecorator(e.lookupConverter()))
	if e.dyn, err = e.extend(cel.DynType, nil); err != nil {
		return nil, err
	}
	if e.dynEach, err = e.dyn.Extend(cel.Variable(EachVar, cel.DynType)); err != nil {
		return nil, err
	}
	return e, nil
}

// CostLimit returns the cost limit of one evaluation; [NoCostLimit] when
// there is none.
func (e *Env) CostLimit() uint64 { return e.costLimit }

// kubernetesEnvOptions returns the options of Kubernetes' base CEL
// environment (k8s.io/apiserver/pkg/cel/environment, base.go) enabled at
// compatibility version v: the same libraries at the same versions, the same
// language settings.
//
// The base environment itself is not reused because its program options
// track the cost of every evaluation, which makes a simple predicate about
// ten times slower. Programs built here track cost only when the static
// cost estimate cannot prove the limit is never reached; see
// programOptions. A test checks that this list and the base environment
// declare the same libraries and functions.
func kubernetesEnvOptions(v *version.Version) []cel.EnvOption {
	since := func(major, minor uint) bool { return v.AtLeast(version.MajorMinor(major, minor)) }
	opts := []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		library.URLs(),
		library.Regex(),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
	}
	if !since(1, 37) {
		opts = append(opts, library.Lists(library.ListsVersion(0)))
	}
	if since(1, 27) {
		opts = append(opts, library.Authz())
	}
	if since(1, 28) {
		opts = append(opts, cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(), library.Quantity())
	}
	if since(1, 29) {
		opts = append(opts,
			cel.ASTValidators(
				cel.ValidateDurationLiterals(),
				cel.ValidateTimestampLiterals(),
				cel.ValidateRegexLiterals(),
				cel.ValidateHomogeneousAggregateLiterals(),
			),
			ext.Strings(ext.StringsVersion(2)),
			ext.Sets(),
		)
	} else {
		opts = append(opts, ext.Strings(ext.StringsVersion(0)))
	}
	if since(1, 30) {
		opts = append(opts, library.IP(), library.CIDR())
	}
	if since(1, 31) {
		opts = append(opts, library.Format(), library.AuthzSelectors())
	}
	if since(1, 32) {
		opts = append(opts, ext.TwoVarComprehensions())
	}
	if since(1, 33) {
		opts = append(opts, library.SemverLib(library.SemverVersion(1)))
	}
	if since(1, 34) {
		opts = append(opts, ext.Lists(ext.ListsVersion(3)))
	}
	if since(1, 37) {
		opts = append(opts, library.Lists(library.ListsVersion(1)))
	}
	return opts
}

// programOptions returns the options of a program that tracks its cost or
// not. When the static cost estimate proves that no evaluation can exceed
// the cost limit, the program does not track cost: tracking is what an
// evaluation of a simple expression spends most of its time on. The
// estimate bounds every object by the API server's request size (see
// costEstimator), so in practice only expressions with comprehensions are
// tracked: each of their evaluations is stopped at the limit, with the cost
// model of Kubernetes, unless the object's sizes prove it cannot reach it
// (see Program.Prepare).
func (e *Env) programOptions(track bool) []cel.ProgramOption {
	opts := []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize),
		cel.InterruptCheckFrequency(interruptCheckFrequency),
		e.lookupDecorator,
		cel.CustomDecoratorV2(crsDecorator),
	}
	if track {
		opts = append(opts,
			cel.CostLimit(e.costLimit),
			cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
			cel.CostTracking(&library.CostEstimator{}),
		)
	}
	return opts
}

// costEstimator is the estimator of Kubernetes' CEL libraries told that
// every value read from an object (or a part of one, or an element of one
// of its lists) is never larger than the largest request the API server
// accepts, the bound Kubernetes itself applies to lists and strings of
// unbounded length when it estimates the cost of CRD validation rules. With
// it, a comparison or a conversion of a field has a finite estimate, and
// only expressions that iterate (comprehensions) or call functions that are
// costly whatever the data pay for tracking their cost while evaluating.
//
// With size bounds (bound), it estimates the cost of evaluations of
// values none of whose lists and maps has more elements than bound.Elems
// and none of whose strings has more bytes than bound.Bytes (see
// jsonval.Sizes). A value of static type dyn may be either: its bound is
// the larger of the two.
type costEstimator struct {
	library.CostEstimator
	// bound bounds the sizes of every value read; zero: maxObjectSize.
	bound jsonval.Sizes
	// provider declares the types of the fields of objects, and checked
	// is the expression being estimated, when known.
	provider types.Provider
	checked  *ast.AST
}

// maxObjectSize is the size bound of costEstimator, in bytes (or list
// elements).
const maxObjectSize = uint64(celconfig.MaxRequestSizeBytes)

// listBounds and stringBounds are the size bounds, largest first, under
// which the cost of a program that must track it is estimated again (see
// Env.compile).
var (
	listBounds   = []int{4096, 1024, 256, 64, 16}
	stringBounds = []int{65536, 16384, 4096, 1024, 256, 64}
)

// sizeOf returns the bound of a value of type t.
func (e costEstimator) sizeOf(t *types.Type) uint64 {
	if e.bound == (jsonval.Sizes{}) {
		return maxObjectSize
	}
	elems, bytes := uint64(e.bound.Elems), uint64(e.bound.Bytes) //nolint:gosec // G115: small positive bounds
	if t != nil {
		switch t.Kind() {
		case types.ListKind, types.MapKind, types.StructKind:
			return elems
		case types.StringKind, types.BytesKind:
			return bytes
		}
	}
	return max(elems, bytes)
}

// EstimateSize bounds the values of variables and of the fields selected
// from them.
func (e costEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if len(n.Path()) == 0 {
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: e.sizeOf(n.Type())}
}

// EstimateCallCost bounds the results of the optional functions, and leaves
// every other function to Kubernetes' estimator: x.?f is as large as the
// field f of x (by its declared type, when x is a part of a variable), and
// orValue, value and optional.of are as large as what they are given.
func (e costEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	var size uint64
	switch overloadID {
	case "select_optional_field":
		size = e.fieldSize(args)
	case "optional_orValue_value":
		size = max(e.computedSize(target), e.argSize(args, 0))
	case "optional_value":
		size = e.computedSize(target)
	case "optional_of", "optional_ofNonZeroValue":
		size = e.argSize(args, 0)
	default:
		return e.CostEstimator.EstimateCallCost(function, overloadID, target, args)
	}
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}, ResultSize: &checker.SizeEstimate{Min: 0, Max: size}}
}

// computedSize is the size the checker computed for n, or the bound of a
// part of a variable of its type, or else maxObjectSize.
func (e costEstimator) computedSize(n *checker.AstNode) uint64 {
	if n == nil {
		return maxObjectSize
	}
	if s := (*n).ComputedSize(); s != nil {
		return s.Max
	}
	if len((*n).Path()) > 0 {
		return e.sizeOf((*n).Type())
	}
	return maxObjectSize
}

func (e costEstimator) argSize(args []checker.AstNode, i int) uint64 {
	if i >= len(args) {
		return maxObjectSize
	}
	return e.computedSize(&args[i])
}

// fieldSize bounds x.?f, args being x and "f", when x is a part of an
// object: then so is its field, bounded by the declared type of the field.
// A field of another value is bounded by maxObjectSize.
func (e costEstimator) fieldSize(args []checker.AstNode) uint64 {
	if len(args) != 2 {
		return maxObjectSize
	}
	name, isString := args[1].Expr().AsLiteral().(types.String)
	if !isString {
		return maxObjectSize
	}
	if t, ok := e.fieldType(args[0].Type(), string(name)); ok && (len(args[0].Path()) > 0 || e.partOfObject(args[0].Expr())) {
		return e.sizeOf(t)
	}
	if len(args[0].Path()) > 0 {
		return e.sizeOf(nil)
	}
	return maxObjectSize
}

// fieldType returns the declared type of field name of a value of type t
// (or of the value of an optional of type t): a field of an object type or
// the values of a map.
func (e costEstimator) fieldType(t *types.Type, name string) (*types.Type, bool) {
	t = optionalValueType(t)
	if t == nil {
		return nil, false
	}
	switch {
	case t.Kind() == types.MapKind && len(t.Parameters()) == 2:
		return t.Parameters()[1], true
	case t.Kind() == types.StructKind && e.provider != nil:
		if ft, found := e.provider.FindStructFieldType(t.TypeName(), name); found {
			return ft.Type, true
		}
	}
	return nil, false
}

// optionalValueType returns the type of the value of an optional of type
// t, or t itself when it is no optional type.
func optionalValueType(t *types.Type) *types.Type {
	if t != nil && t.Kind() == types.OpaqueKind && t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
		return t.Parameters()[0]
	}
	return t
}

// partOfObject reports whether x is certainly a part of an object, and so
// within the sizes it was measured with: a field of a value of an object
// type (which no expression constructs), or a field or map value of a part
// of an object, selected or optionally selected, or the value of an
// optional one.
func (e costEstimator) partOfObject(x ast.Expr) bool {
	if e.checked == nil {
		return false
	}
	typeOf := func(x ast.Expr) *types.Type { return e.checked.GetType(x.ID()) }
	for {
		var operand ast.Expr
		var field string
		switch x.Kind() {
		case ast.SelectKind:
			operand, field = x.AsSelect().Operand(), x.AsSelect().FieldName()
		case ast.CallKind:
			call := x.AsCall()
			switch {
			case call.FunctionName() == operators.OptSelect && len(call.Args()) == 2:
				name, ok := call.Args()[1].AsLiteral().(types.String)
				if !ok {
					return false
				}
				operand, field = call.Args()[0], string(name)
			case call.FunctionName() == "value" && call.IsMemberFunction() && len(call.Args()) == 0:
				x = call.Target() // the value of an optional part
				continue
			default:
				return false
			}
		default:
			return false
		}
		t := optionalValueType(typeOf(operand))
		if t != nil && t.Kind() == types.StructKind {
			_, declared := e.fieldType(t, field)
			return declared
		}
		if t == nil || t.Kind() != types.MapKind {
			return false
		}
		x = operand
	}
}

// extend returns the environment in which object has the given type; decl
// describes that type when it comes from a schema.
func (e *Env) extend(objectType *cel.Type, decl *apiservercel.DeclType) (*cel.Env, error) {
	opts := append([]cel.EnvOption{cel.Variable(ObjectVar, objectType)}, lookupFunctions()...)
	if e.cluster {
		opts = append(opts, cel.Variable(ClusterVar, cel.StringType))
	}
	opts = append(opts, quantityFunctions()...)
	opts = append(opts, cronFunctions()...)
	opts = append(opts, ipFamilyFunctions()...)
	opts = append(opts, crsFunctions()...)
	if decl != nil {
		// As environment.EnvSet.Extend declares the types of a schema.
		provider := apiservercel.NewDeclTypeProvider(decl)
		if e.version.AtLeast(version.MajorMinor(1, 31)) {
			provider.SetRecognizeKeywordAsFieldName(true)
		}
		providerOpts, err := provider.EnvOptions(e.base.CELTypeProvider())
		if err != nil {
			return nil, fmt.Errorf("declaring the schema types: %w", err)
		}
		opts = append(opts, providerOpts...)
	}
	env, err := e.base.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return env, nil
}

// lookupConverter returns the converter applied to objects returned by a
// Lookup.
func (e *Env) lookupConverter() Converter {
	if e.converter != nil {
		return e.converter
	}
	return DefaultConverter
}

// objectFunc returns how an object handed to a program becomes the value of
// the object variable. With the default converter, JSON maps are passed to
// the interpreter as they are: it reads map[string]any natively, without
// wrapping every nested map it walks through.
func (e *Env) objectFunc() func(obj any) any {
	if c := e.converter; c != nil {
		return func(obj any) any { return c(obj) }
	}
	return func(obj any) any {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			if o != nil {
				return o.Object
			}
		case map[string]any:
			return o
		}
		return DefaultConverter(obj)
	}
}

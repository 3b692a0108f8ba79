package indexers

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// Lookup reads objects of other resources from the informer cache for the
// functions get() and byIndex(). Resources are named as the expression
// wrote them (the first argument of get and byIndex, always a string
// literal); [Program.References] lists them before evaluation so that the
// caller can start informers and add indexes for them.
//
// Implementations must be safe for concurrent use. The objects they return
// are read, never modified, and are turned into CEL values with the
// environment's [Converter].
type Lookup interface {
	// Get returns the object of resource with the given namespace and name;
	// namespace is "" for get(resource, name), which is meant for
	// cluster-scoped resources. found is false when there is no such
	// object. err reports a failure of the lookup itself (for example, no
	// informer for resource); the expression then fails with it.
	Get(resource, namespace, name string) (obj any, found bool, err error)

	// ByIndex returns the objects of resource whose index holds value, in
	// any order, or none. err reports a failure of the lookup itself (for
	// example, no such index).
	ByIndex(resource, index, value string) ([]any, error)
}

// Names of the lookup functions and of their overloads.
const (
	getFunction     = "get"
	byIndexFunction = "byIndex"

	getClusterOverload    = "get_resource_name"
	getNamespacedOverload = "get_resource_namespace_name"
	byIndexOverload       = "byIndex_resource_index_value"
)

// lookupVar is the name under which an evaluation's activation holds its
// Lookup. It is not a valid CEL identifier, so no expression can refer to
// it.
const lookupVar = "@lookup"

// lookupFunctions declares get() and byIndex(). Their implementations are
// not known when the environment is built (the Lookup is bound to a program
// later), so they are declared with late binding and bound at planning time
// by lookupDecorator.
func lookupFunctions() []cel.EnvOption {
	str := cel.StringType
	return append([]cel.EnvOption{
		cel.Function(getFunction,
			cel.Overload(getClusterOverload, []*cel.Type{str, str}, cel.DynType, cel.LateFunctionBinding()),
			cel.Overload(getNamespacedOverload, []*cel.Type{str, str, str}, cel.DynType, cel.LateFunctionBinding()),
		),
		cel.Function(byIndexFunction,
			cel.Overload(byIndexOverload, []*cel.Type{str, str, str}, cel.ListType(cel.DynType), cel.LateFunctionBinding()),
		),
	}, relationFunctions()...)
}

// lookupDecorator replaces the planned calls of get() and byIndex() with
// lookupCall steps, which read the Lookup from the activation of the
// evaluation. That is what lets one compiled program be evaluated against a
// Lookup supplied after compilation.
func lookupDecorator(convert Converter) interpreter.InterpretableDecoratorV2 {
	return func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		call, ok := i.(interpreter.InterpretableCall)
		if !ok {
			return i, nil
		}
		if isRelationOverload(call.OverloadID()) {
			return &relationCall{
				id:       call.ID(),
				function: call.Function(),
				overload: call.OverloadID(),
				args:     call.Args(),
				convert:  convert,
			}, nil
		}
		switch call.OverloadID() {
		case getClusterOverload, getNamespacedOverload, byIndexOverload:
		default:
			return i, nil
		}
		return &lookupCall{
			id:       call.ID(),
			function: call.Function(),
			overload: call.OverloadID(),
			args:     call.Args(),
			convert:  convert,
		}, nil
	}
}

// lookupCall is the evaluation step of a get() or byIndex() call. It
// implements interpreter.InterpretableCall so that cost tracking treats it
// like any other function call.
type lookupCall struct {
	id       int64
	function string
	overload string
	args     []interpreter.InterpretableV2
	convert  Converter
}

var _ interpreter.InterpretableCall = (*lookupCall)(nil)

// ID implements interpreter.Interpretable.
func (c *lookupCall) ID() int64 { return c.id }

// Function implements interpreter.InterpretableCall.
func (c *lookupCall) Function() string { return c.function }

// OverloadID implements interpreter.InterpretableCall.
func (c *lookupCall) OverloadID() string { return c.overload }

// Args implements interpreter.InterpretableCall.
func (c *lookupCall) Args() []interpreter.InterpretableV2 { return c.args }

// Eval implements interpreter.Interpretable.
func (c *lookupCall) Eval(vars interpreter.Activation) ref.Val {
	return c.Exec(interpreter.AsFrame(vars))
}

// Exec implements interpreter.InterpretableV2.
func (c *lookupCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	var args [3]string
	for i, arg := range c.args {
		v := arg.Exec(frame)
		if types.IsUnknownOrError(v) {
			return v
		}
		s, ok := v.(types.String)
		if !ok {
			return types.NewErrWithNodeID(c.id, "%s(): argument %d must be a string but got %s", c.function, i+1, v.Type().TypeName())
		}
		args[i] = string(s)
	}
	l, _ := frame.ResolveName(lookupVar)
	lookup, _ := l.(Lookup)
	if lookup == nil {
		return types.NewErrWithNodeID(c.id, "%s() is not available: no lookup is bound to the program", c.function)
	}
	switch c.overload {
	case getClusterOverload:
		return c.get(lookup, args[0], "", args[1])
	case getNamespacedOverload:
		return c.get(lookup, args[0], args[1], args[2])
	default:
		return c.byIndex(lookup, args[0], args[1], args[2])
	}
}

func (c *lookupCall) get(l Lookup, resource, namespace, name string) ref.Val {
	obj, found, err := l.Get(resource, namespace, name)
	if err != nil {
		return types.NewErrWithNodeID(c.id, "get(%q): %w", resource, err)
	}
	if !found {
		return types.NullValue
	}
	return c.convert(obj)
}

func (c *lookupCall) byIndex(l Lookup, resource, index, value string) ref.Val {
	objs, err := l.ByIndex(resource, index, value)
	if err != nil {
		return types.NewErrWithNodeID(c.id, "byIndex(%q, %q): %w", resource, index, err)
	}
	vals := make([]ref.Val, len(objs))
	for i, obj := range objs {
		v := c.convert(obj)
		if types.IsError(v) {
			return v
		}
		vals[i] = v
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

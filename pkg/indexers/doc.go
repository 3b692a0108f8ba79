// Package indexers compiles the CEL expressions of kubectl-informer and turns
// them into predicates, values and client-go index functions.
//
// One [Env] is built per process. It declares the variable object (the
// object being evaluated, seen under its JSON field names as in a
// ValidatingAdmissionPolicy), the Kubernetes CEL libraries at the
// compatibility version of Kubernetes' own base environment (lists, regex,
// quantity, ip, cidr, urls, format, semver, strings, sets, ...) and three
// functions that read other cached objects:
//
//	get(resource, name)            the cluster-scoped object, or null
//	get(resource, namespace, name) the namespaced object, or null
//	byIndex(resource, index, value) the objects whose index holds value
//
// Every expression is compiled once, before the cluster is contacted, with
// [Env.Compile] or [Env.CompileWithSchema]. The [Kind] given at compile time
// fixes what the expression must produce: a bool ([KindPredicate]), the
// values of an index ([KindIndex]) or any value ([KindValue]). Compile errors
// are [*ExprError] values that point at the offending place. A compiled
// [Program] names the resources and indexes its lookups read
// ([Program.References]), so informers can be created for them, and is
// bound to a [Lookup] afterwards with [Program.WithLookup].
//
// The package promises:
//
//   - Programs are immutable and safe for concurrent use.
//   - An evaluation never runs forever: its cost is limited per call
//     ([DefaultCostLimit]) and it stops with an error wrapping
//     [ErrCostLimitExceeded].
//   - Objects are read, never modified, whether they come from the caller
//     or from a Lookup.
//   - The function returned by [IndexFunc] never returns an error (a client-go
//     store panics on one) and never panics: an object that cannot be
//     evaluated gets no index value and the failure is counted in [Stats].
//   - A schema only makes checking stricter; an expression that compiles
//     with a schema evaluates exactly as it does without one.
//
// Like package factory, it is below every consumer of the caches and
// imports none of them, nor package factory: lookups reach the caches
// through the [Lookup] interface. It is one package of about 3,800 lines
// because a [Program] is one thing seen from several sides that share its
// unexported state: compiling and the references it reads (compile.go),
// evaluation and its budget (eval.go, budget.go), the fast path that
// evaluates without CEL's interpreter, with its results, what it is given
// to evaluate without tracking cost (fast.go), the schema checks (schema.go)
// and the index functions (index.go).
package indexers

// Package query answers ad-hoc queries from one resource's informer cache and
// prints the answers the way kubectl get does.
//
// A query is a [Spec]: optional index selectors (--by NAME=VALUE), a
// predicate (--where), a sort key (--sort-by), a limit, extra columns, or a
// count with an optional grouping key. Expressions arrive as plain Go function
// values ([ValueFunc], [PredicateFunc]); this package knows nothing about the
// language they were written in. [Run] evaluates a Spec against a
// cache.Indexer and returns a [Result]; a [Printer] made by [NewPrinter]
// writes that Result in any of kubectl get's output formats, using the
// printers of k8s.io/cli-runtime and k8s.io/kubectl.
//
// Above the engine, [Compile] turns a whole command-line [Request] into a
// [Plan]: every CEL expression compiled (with package indexers) and every
// flag checked before any contact with the cluster. [Plan.Execute] then
// resolves the resources, checks the expressions against their OpenAPI
// schemas, creates the informers (package factory) with their indexes —
// metadata-only ones when nothing reads more than metadata — adds informers
// for the resources get() and byIndex() read, waits for the caches and
// prints the answer. A [Config] file names indexes per resource. A
// [Session] answers queries typed one line at a time from caches filled
// once ([Plan.With] and [Plan.Answer] reuse a plan's synced caches).
//
// What the package promises:
//
//   - Objects handed out by the cache are never mutated. Printing works on
//     shallow copies or converted maps.
//   - Order is deterministic: the default order is namespace, then name;
//     --sort-by ties are broken the same way; groups are ordered by count,
//     largest first, then by value.
//   - A failure to evaluate an expression on one object neither aborts the
//     query nor panics. Each such failure is handled per object as documented
//     on [Spec] and summarised, per expression, in [Result.Warnings], which
//     the caller prints on stderr.
//   - Output matches kubectl get: the same table layout and alignment, the
//     same "No resources found" message on the error stream, the same v1 List
//     for -o json and -o yaml, the same resource/name form for -o name, and
//     the same error text for an unknown -o value.
package query

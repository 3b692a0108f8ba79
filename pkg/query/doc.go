// Package query is the query engine: it answers one query from one
// resource's cache and prints answers the way kubectl get does.
//
// A query is a [Spec]: optional index selectors (--by NAME=VALUE), a
// predicate (--where), a sort key (--sort-by), a limit, extra columns, or a
// count with an optional grouping key. Expressions arrive as plain Go function
// values ([ValueFunc], [PredicateFunc]); this package knows nothing about the
// language they were written in. [Run] evaluates a Spec against a
// cache.Indexer and returns a [Result]; [RunAll] answers one query over
// several resources, the limit applying to the answer they make together. A
// [Printer] made by [NewPrinter] writes a Result in any of kubectl get's
// output formats, using the printers of k8s.io/cli-runtime and
// k8s.io/kubectl (and the copies in internal/getprint of those that are not
// importable).
//
// The packages above it:
//
//	query/plan         Request → Plan: flags checked, CEL compiled, caches
//	                   filled (Plan.Fill), answers printed
//	query/watch        watch: one line or JSON object per event
//	query/interactive  the interactive session on warm caches
//	queryserver        answers over HTTPS from a server's caches
//
// This package imports no other query package, no package factory and no
// CEL: it is the bottom of the query side. [UsageError] is the one type of
// the user's mistakes for all of them, and [Names] the words their messages
// use for the parts of a query. Of its 3,300 lines, 1,300 are the table
// columns of kubectl's built-in kinds (columns.go, columns_kinds.go,
// printercolumns.go), kept beside the printer that uses them.
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

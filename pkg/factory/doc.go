// Package factory builds the informers that every consumer in the process
// shares: it resolves the resource names a user gives (plural, singular, short
// names, resource.group, categories, CRDs) with the cluster's RESTMapper,
// starts one SharedIndexInformer per resource scoped by namespace, label and
// field selectors, registers index functions before the informers start,
// trims cached objects with a transform, and waits for the caches to sync
// with a timeout and optional progress reporting. [Factory.Shutdown] stops
// them all and waits for their goroutines.
//
// It is below every consumer of the caches (the query side, the exporter):
// it imports none of them, nor package indexers, whose index functions it
// receives as plain cache.Indexers.
package factory

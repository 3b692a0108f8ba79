// Package exporter serves Prometheus metrics computed by CEL expressions from
// the shared informer caches of package factory, in the spirit of
// kube-state-metrics: metric families are declared as data, their series are
// rendered when objects change (not when Prometheus scrapes), and a scrape
// only writes out what is already rendered.
//
// A config file (docs/exporter-config.md) is read by [Load], which checks it
// and compiles every CEL expression once into a [Compiled]: per resource,
// its index programs and its [Family] list. An [Engine] renders each
// family's series when an object is added, updated or deleted (aggregates
// by delta; series that read other objects through get() and byIndex() are
// recomputed when those change), and an [Exporter] keeps the informers
// running, swaps configs on reload without dropping caches it still needs,
// and serves /metrics, /healthz and /readyz.
package exporter

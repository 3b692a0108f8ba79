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
//
// The files, by concern:
//
//	types.go config.go validate.go  the config as written, read strictly and checked
//	compile.go labelsfrom.go        the config compiled: Compiled, Family
//	resources.go                    the config checked against the API server's resources
//	sources.go merge.go check.go    profiles, several configs served together, --check
//	engine.go evaluate.go           event queues; a family's series from an object
//	dependencies.go                 what get() and byIndex() read, to recompute on change
//	family.go aggregate.go          the rendered rows of a family, and aggregates
//	exporter.go informers.go        lifecycle and reloads; the informers and lookups a config needs
//	health.go telemetry.go          readiness, logs and the exporter's own metrics
//	cachecount.go                   objects and index values counted from events
//	server.go reload.go rbac.go     HTTP, reload triggers, --print-rbac
//
// It shares with the query side only packages factory and indexers, and
// imports neither pkg/query nor pkg/queryserver. It is one package of about
// 5,600 lines because its parts meet in a few types with unexported state
// that only they should touch: the compiled families that the engine
// evaluates and the rows it renders, and the active config that reloads
// swap under one lock. The config side (about 1,700 lines: types, parsing,
// validation, compiling) is the part that could stand alone; it is kept
// here because Family carries compiled programs and rendering state that
// the engine alone may change.
package exporter

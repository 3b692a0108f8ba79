// Package exporter serves Prometheus metrics computed by CEL expressions from
// the shared informer caches of package factory, in the spirit of
// kube-state-metrics: metric families are declared as data, their series are
// rendered when objects change (not when Prometheus scrapes), and a scrape
// only writes out what is already rendered.
package exporter

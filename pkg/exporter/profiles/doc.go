// Package profiles holds the exporter configs shipped inside the binary:
// named sets of metric families that `kubectl informer export --profile
// NAME` serves without a config file of the user's.
//
// A profile is a directory of ordinary exporter config files
// (docs/exporter-config.md), one per resource, named after the resource
// (pods.yaml, deployments.yaml, …). Each file is a complete config on its
// own, so a user can write one out (`export --profile NAME --print-config`),
// copy a family and change it. Nothing in a profile is special to the
// exporter: its families use only features every config can use.
//
// The profile "kube-state-metrics" reproduces kube-state-metrics' default
// metric families: same names, types, HELP texts, labels and values.
//
// It holds files only, and imports no package of the project.
package profiles

// Package crs translates kube-state-metrics' custom resource state metrics
// config (a CustomResourceStateMetrics file, as its
// --custom-resource-state-config-file reads it) into an exporter config
// with kube-state-metrics' semantics and metric names: each metric becomes
// a family whose expressions call the crs.* CEL functions of package
// indexers (crs.path, crs.gauge, crs.info, crs.stateSet, crs.labels,
// crs.merge, crs.value), which resolve paths and values as kube-state-metrics
// does.
//
// The translation is text: Convert returns a config file, which the
// exporter compiles as any other, and which `kubectl informer export
// --convert-crs` prints so that users can move on to expressions of their
// own.
//
// It imports no package of the project.
package crs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Metrics is kube-state-metrics' CustomResourceStateMetrics config.
type Metrics struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Resources []Resource `yaml:"resources"`
	} `yaml:"spec"`
}

// Labels are labels common to a resource's or a metric's series.
type Labels struct {
	CommonLabels   map[string]string   `yaml:"commonLabels"`
	LabelsFromPath map[string][]string `yaml:"labelsFromPath"`
}

// merge returns l with other's entries added, other's winning.
func (l Labels) merge(other Labels) Labels {
	out := Labels{CommonLabels: map[string]string{}, LabelsFromPath: map[string][]string{}}
	for _, from := range []Labels{l, other} {
		for k, v := range from.CommonLabels {
			out.CommonLabels[k] = v
		}
		for k, v := range from.LabelsFromPath {
			out.LabelsFromPath[k] = v
		}
	}
	return out
}

// Resource is one custom resource and its metrics.
type Resource struct {
	Labels           `yaml:",inline"`
	MetricNamePrefix *string          `yaml:"metricNamePrefix"`
	GroupVersionKind GroupVersionKind `yaml:"groupVersionKind"`
	ResourcePlural   string           `yaml:"resourcePlural"`
	Metrics          []Generator      `yaml:"metrics"`
	ErrorLogV        int              `yaml:"errorLogV"`
}

// GroupVersionKind names the custom resource.
type GroupVersionKind struct {
	Group   string `yaml:"group"`
	Version string `yaml:"version"`
	Kind    string `yaml:"kind"`
}

// Generator is one metric.
type Generator struct {
	Labels    `yaml:",inline"`
	Name      string `yaml:"name"`
	Help      string `yaml:"help"`
	Each      Metric `yaml:"each"`
	ErrorLogV int    `yaml:"errorLogV"`
}

// Metric is a metric's type and its settings.
type Metric struct {
	Type     string    `yaml:"type"`
	Gauge    *Gauge    `yaml:"gauge"`
	StateSet *StateSet `yaml:"stateSet"`
	Info     *Info     `yaml:"info"`
}

// Meta are the settings of every type.
type Meta struct {
	Path           []string            `yaml:"path"`
	LabelsFromPath map[string][]string `yaml:"labelsFromPath"`
}

// Gauge is a gauge's settings.
type Gauge struct {
	Meta         `yaml:",inline"`
	ValueFrom    []string `yaml:"valueFrom"`
	LabelFromKey string   `yaml:"labelFromKey"`
	NilIsZero    bool     `yaml:"nilIsZero"`
}

// StateSet is a state set's settings.
type StateSet struct {
	Meta      `yaml:",inline"`
	List      []string `yaml:"list"`
	LabelName string   `yaml:"labelName"`
	ValueFrom []string `yaml:"valueFrom"`
}

// Info is an info metric's settings.
type Info struct {
	Meta         `yaml:",inline"`
	LabelFromKey string `yaml:"labelFromKey"`
}

// Parse reads a CustomResourceStateMetrics config; name names it in
// errors.
func Parse(name string, data []byte) (*Metrics, error) {
	var m Metrics
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m.Kind != "" && m.Kind != "CustomResourceStateMetrics" {
		return nil, fmt.Errorf("%s: kind %q: want CustomResourceStateMetrics", name, m.Kind)
	}
	if len(m.Spec.Resources) == 0 {
		return nil, fmt.Errorf("%s: spec.resources is empty: name at least one custom resource", name)
	}
	return &m, nil
}

// Convert translates the CustomResourceStateMetrics config data (name
// names it in errors and in the output's header) into an exporter config.
func Convert(name string, data []byte) ([]byte, error) {
	m, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Translated from the kube-state-metrics custom resource state config %s.\n", name)
	b.WriteString("# Each metric keeps kube-state-metrics' name, labels and values: the crs.*\n")
	b.WriteString("# functions resolve paths and values as kube-state-metrics does.\n")
	b.WriteString("apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n")
	var errs []error
	names := map[string]string{} // metric name → resource
	for i, r := range m.Spec.Resources {
		if err := writeResource(&b, r, names); err != nil {
			errs = append(errs, fmt.Errorf("%s: spec.resources[%d] (%s): %w", name, i, r.GroupVersionKind, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func (g GroupVersionKind) String() string {
	return fmt.Sprintf("%s/%s %s", g.Group, g.Version, g.Kind)
}

// resourceName is how the exporter's config names the resource: its
// plural (or its kind, which the API server's discovery resolves alike),
// version and group, as kubectl takes them.
func resourceName(r Resource) (string, error) {
	gvk := r.GroupVersionKind
	if gvk.Version == "" || gvk.Kind == "" {
		return "", errors.New("groupVersionKind needs a version and a kind")
	}
	if strings.Contains(gvk.Group+gvk.Version+gvk.Kind, "*") {
		return "", errors.New("groupVersionKind with a wildcard is not supported: name the group, version and kind")
	}
	name := strings.ToLower(gvk.Kind)
	if r.ResourcePlural != "" {
		name = r.ResourcePlural
	}
	if gvk.Group == "" {
		return name, nil
	}
	return name + "." + gvk.Version + "." + gvk.Group, nil
}

func writeResource(b *strings.Builder, r Resource, names map[string]string) error {
	res, err := resourceName(r)
	if err != nil {
		return err
	}
	if len(r.Metrics) == 0 {
		return errors.New("metrics is empty")
	}
	prefix := "kube_customresource"
	if r.MetricNamePrefix != nil {
		prefix = *r.MetricNamePrefix
	}
	fmt.Fprintf(b, "- resource: %s\n  metrics:\n", strconv.Quote(res))
	// Metrics of the same name are one family, as a Prometheus exposition
	// must have them; kube-state-metrics writes each apart.
	type family struct {
		name, help string
		parts      []string
	}
	var families []*family
	byName := map[string]*family{}
	var errs []error
	for _, g := range r.Metrics {
		name, part, err := metricSeries(r, prefix, g)
		if err != nil {
			errs = append(errs, fmt.Errorf("metric %q: %w", g.Name, err))
			continue
		}
		if other, ok := names[name]; ok && other != res {
			errs = append(errs, fmt.Errorf("metric %q: %s is also a metric of %s; a family belongs to one resource: rename one (metricNamePrefix, name)", g.Name, name, other))
			continue
		}
		names[name] = res
		f, ok := byName[name]
		if !ok {
			help := g.Help
			if help == "" {
				help = "Custom resource state metric " + name + "."
			}
			f = &family{name: name, help: help}
			byName[name] = f
			families = append(families, f)
		}
		f.parts = append(f.parts, part)
	}
	for _, f := range families {
		fmt.Fprintf(b, "  - name: %s\n", strconv.Quote(f.name))
		fmt.Fprintf(b, "    help: %s\n", strconv.Quote(f.help))
		// kube-state-metrics writes info and state set metrics as gauges
		// in the text format.
		b.WriteString("    type: gauge\n")
		fmt.Fprintf(b, "    each: %s\n", yamlString(strings.Join(f.parts, " + ")))
		b.WriteString("    labelsFrom:\n      map: each.labels\n      verbatim: true\n")
		b.WriteString("    value: crs.value(each)\n")
	}
	return errors.Join(errs...)
}

// metricSeries returns the full name of g and the CEL expression of its
// series, each with its labels (the metric's own and then the base labels:
// the resource's and the metric's commonLabels and labelsFromPath, and the
// custom resource's group, version and kind) and its value.
func metricSeries(r Resource, prefix string, g Generator) (name, series string, err error) {
	if g.Name == "" {
		return "", "", errors.New("name is missing")
	}
	name = g.Name
	if prefix != "" {
		name = prefix + "_" + g.Name
	}
	labels := r.merge(g.Labels)
	common := map[string]string{}
	for k, v := range labels.CommonLabels {
		common[k] = v
	}
	gvk := r.GroupVersionKind
	common["customresource_group"] = gvk.Group
	common["customresource_version"] = gvk.Version
	common["customresource_kind"] = gvk.Kind

	var each string
	switch t := strings.ToLower(g.Each.Type); t {
	case "gauge":
		m := g.Each.Gauge
		if m == nil {
			return "", "", errors.New("each.type gauge needs each.gauge")
		}
		each = fmt.Sprintf("crs.gauge(%s, %s)", pathExpr(m.Path), settings(
			"valueFrom", stringList(m.ValueFrom), "nilIsZero", strconv.FormatBool(m.NilIsZero),
			"labelFromKey", strconv.Quote(m.LabelFromKey), "labelsFromPath", pathMap(m.LabelsFromPath)))
	case "info":
		m := g.Each.Info
		if m == nil {
			return "", "", errors.New("each.type info needs each.info")
		}
		each = fmt.Sprintf("crs.info(%s, %s)", pathExpr(m.Path), settings(
			"labelFromKey", strconv.Quote(m.LabelFromKey), "labelsFromPath", pathMap(m.LabelsFromPath)))
	case "stateset":
		m := g.Each.StateSet
		if m == nil {
			return "", "", errors.New("each.type stateSet needs each.stateSet")
		}
		each = fmt.Sprintf("crs.stateSet(%s, %s)", pathExpr(m.Path), settings(
			"list", stringList(m.List), "labelName", strconv.Quote(m.LabelName),
			"valueFrom", stringList(m.ValueFrom), "labelsFromPath", pathMap(m.LabelsFromPath)))
	case "":
		return "", "", errors.New("each.type is missing: gauge, stateSet or info")
	default:
		return "", "", fmt.Errorf("each.type %q is not known: gauge, stateSet or info", g.Each.Type)
	}
	base := labelMap(common)
	if len(labels.LabelsFromPath) > 0 {
		base = fmt.Sprintf("crs.merge(%s, crs.labels(object, %s))", base, pathMap(labels.LabelsFromPath))
	}
	return name, fmt.Sprintf("crs.withBase(%s, %s)", each, base), nil
}

// settings is the CEL map literal of a metric type's settings, given as
// name, CEL literal pairs; the values are of several types, so each is dyn.
func settings(kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, strconv.Quote(kv[i])+": dyn("+kv[i+1]+")")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// pathExpr is the CEL expression of path resolved from the object.
func pathExpr(path []string) string {
	if len(path) == 0 {
		return "object"
	}
	return fmt.Sprintf("crs.path(object, %s)", stringList(path))
}

// stringList is a CEL list literal of strings.
func stringList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// pathMap is a CEL map literal of label names to paths.
func pathMap(m map[string][]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Quote(k) + ": " + stringList(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// labelMap is a CEL map literal of label names to values.
func labelMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Quote(k) + ": " + strconv.Quote(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// yamlString is s as a YAML scalar.
func yamlString(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

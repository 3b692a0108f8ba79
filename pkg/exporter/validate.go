package exporter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// validate checks what decoding cannot: required fields, names and values.
func (p *configParser) validate(c *Config) {
	if c.APIVersion != ConfigAPIVersion {
		p.Errorf(p.Line("apiVersion"), "", "%s; set apiVersion: %s", isOrMissing("apiVersion", c.APIVersion), ConfigAPIVersion)
	}
	if c.Kind != ConfigKind {
		p.Errorf(p.Line("kind"), "", "%s; set kind: %s", isOrMissing("kind", c.Kind), ConfigKind)
	}
	prefixOK := true
	if c.Prefix != "" {
		if msg := metricNameProblem(fmt.Sprintf("prefix %q", c.Prefix), c.Prefix); msg != "" {
			prefixOK = false
			p.Errorf(p.Line("prefix"), "", "%s", msg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.CommonLabels)) {
		if msg := labelNameProblem(name); msg != "" {
			p.Errorf(p.KeyLine("commonLabels", name), "", "commonLabels: %s", msg)
		}
	}
	if len(c.Resources) == 0 {
		p.Errorf(p.Line("resources"), "", "resources is empty; list at least one resource with the metrics to compute from it")
	}
	resourceLines := map[string]int{}
	metricLines := map[string]int{}
	for i, r := range c.Resources {
		ctx := resourceContext(r.Resource, i)
		at := func(parts ...any) []any { return append([]any{"resources", i}, parts...) }
		if strings.TrimSpace(r.Resource) == "" {
			p.Errorf(p.Line(at("resource")...), ctx, "resource is missing; name the resource to watch as kubectl does, such as resource: pods")
		} else if first, dup := resourceLines[r.Resource]; dup {
			p.Errorf(p.Line(at("resource")...), ctx, "listed twice (first at line %d); put its indexes and metrics in one entry", first)
		} else {
			resourceLines[r.Resource] = p.Line(at("resource")...)
		}
		p.validateResource(r, ctx, at)
		for j, m := range r.Metrics {
			mat := func(parts ...any) []any { return at(append([]any{"metrics", j}, parts...)...) }
			p.validateMetric(c, m, metricContext(c.Prefix, m.Name, ctx, j), prefixOK, metricLines, mat)
		}
	}
}

func isOrMissing(field, value string) string {
	if value == "" {
		return field + " is missing"
	}
	return fmt.Sprintf("%s is %q", field, value)
}

// validateResource checks the fields of a resource entry other than its
// metrics.
func (p *configParser) validateResource(r ResourceConfig, ctx string, at func(...any) []any) {
	seen := sets.New[string]()
	for k, ns := range r.Namespaces {
		switch {
		case seen.Has(ns):
			p.Errorf(p.Line(at("namespaces", k)...), ctx, "namespace %q is listed twice; keep one", ns)
		case ns == "":
			p.Errorf(p.Line(at("namespaces", k)...), ctx, "namespaces[%d] is empty; name a namespace, or leave namespaces out for all of them", k)
		default:
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				p.Errorf(p.Line(at("namespaces", k)...), ctx, "namespace %q is not a valid namespace name: %s", ns, strings.Join(msgs, "; "))
			}
		}
		seen.Insert(ns)
	}
	if r.LabelSelector != "" {
		if _, err := labels.Parse(r.LabelSelector); err != nil {
			p.Errorf(p.Line(at("labelSelector")...), ctx, "labelSelector %q: %v; write it as for kubectl get -l, such as app=web,tier!=cache", r.LabelSelector, err)
		}
	}
	if r.FieldSelector != "" {
		if _, err := fields.ParseSelector(r.FieldSelector); err != nil {
			p.Errorf(p.Line(at("fieldSelector")...), ctx, "fieldSelector %q: %v; write it as a field selector of kubectl get, such as status.phase=Running", r.FieldSelector, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Indexes)) {
		line := p.KeyLine(at("indexes", name)...)
		switch {
		case name == "" || strings.ContainsAny(name, " =,"):
			p.Errorf(line, ctx, "invalid index name %q; use a name of letters, digits, '-' or '_', such as byNode", name)
		case name == indexers.NamespaceIndex:
			p.Errorf(line, ctx, "index %q is built in and cannot be redefined; choose another name", name)
		}
		if strings.TrimSpace(r.Indexes[name]) == "" {
			p.Errorf(p.Line(at("indexes", name)...), ctx, "index %q has no expression; give the CEL expression of its values, such as object.spec.nodeName", name)
		}
	}
}

// validateMetric checks a metric. metricLines holds the line of every full
// name seen so far.
func (p *configParser) validateMetric(c *Config, m MetricConfig, ctx string, prefixOK bool, metricLines map[string]int, at func(...any) []any) {
	full := c.Prefix + m.Name
	nameLine := p.Line(at("name")...)
	switch {
	case m.Name == "":
		p.Errorf(nameLine, ctx, "name is missing; name the metric, such as name: pod_info")
	case !prefixOK:
		// The prefix is reported once; the name alone is checked below.
	default:
		if msg := metricNameProblem(fmt.Sprintf("name %q", full), full); msg != "" {
			p.Errorf(nameLine, ctx, "%s", msg)
		}
	}
	if m.Name != "" {
		if first, dup := metricLines[full]; dup {
			p.Errorf(nameLine, ctx, "the name is already used at line %d; metric names must be unique in the config, prefix included", first)
		} else {
			metricLines[full] = nameLine
		}
	}
	if strings.TrimSpace(m.Help) == "" {
		p.Errorf(p.Line(at("help")...), ctx, "help is missing; say in a sentence what the metric measures")
	}
	typeLine := p.Line(at("type")...)
	switch m.Type {
	case "":
		p.Errorf(typeLine, ctx, "type is missing; use gauge, counter or info")
	case TypeGauge, TypeCounter, TypeInfo:
		if m.Name == "" {
			break
		}
		switch {
		case m.Type == TypeCounter && !strings.HasSuffix(full, "_total"):
			p.Errorf(nameLine, ctx, "the name of a counter must end in _total; rename it %q", full+"_total")
		case m.Type != TypeCounter && strings.HasSuffix(full, "_total"):
			p.Errorf(nameLine, ctx, "only the name of a counter may end in _total; rename it or use type counter")
		case m.Type == TypeInfo && !strings.HasSuffix(full, "_info"):
			p.Errorf(nameLine, ctx, "the name of an info metric must end in _info; rename it %q", full+"_info")
		}
	default:
		p.Errorf(typeLine, ctx, "type %q is not supported; use gauge, counter or info", m.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Labels)) {
		line := p.KeyLine(at("labels", name)...)
		if msg := labelNameProblem(name); msg != "" {
			p.Errorf(line, ctx, "%s", msg)
		} else if _, common := c.CommonLabels[name]; common {
			p.Errorf(line, ctx, "label %q is also in commonLabels; rename one of them", name)
		}
		if strings.TrimSpace(m.Labels[name]) == "" {
			p.Errorf(p.Line(at("labels", name)...), ctx, "label %q has no expression; give the CEL expression of its value, such as object.metadata.name", name)
		}
	}
	aggLine := p.Line(at("aggregate")...)
	switch m.Aggregate {
	case AggregateNone, AggregateSum, AggregateMin, AggregateMax:
	case AggregateCount:
		if m.Value != "" {
			p.Errorf(p.Line(at("value")...), ctx, "aggregate count counts series and ignores value; remove value, or use aggregate sum to add values up")
		}
	default:
		p.Errorf(aggLine, ctx, "aggregate %q is not supported; use count, sum, min or max, or leave it out for one series per object", m.Aggregate)
	}
	if m.Type == TypeInfo {
		if m.Aggregate != AggregateNone {
			p.Errorf(aggLine, ctx, "an info metric cannot be aggregated; remove aggregate, or use type gauge")
		}
		if m.Value != "" {
			p.Errorf(p.Line(at("value")...), ctx, "the value of an info metric is always 1; remove value, or use type gauge")
		}
	}
	if m.Value != "" && strings.TrimSpace(m.Value) == "" {
		p.Errorf(p.Line(at("value")...), ctx, "value is blank; give a CEL expression, or leave value out for 1")
	}
	if m.Each != "" && strings.TrimSpace(m.Each) == "" {
		p.Errorf(p.Line(at("each")...), ctx, "each is blank; give a CEL expression yielding a list, or leave each out")
	}
	if lf := m.LabelsFrom; lf != nil {
		p.validateLabelsFrom(c, m, lf, ctx, at)
	}
}

// validateLabelsFrom checks a metric's labelsFrom: a map expression, a
// prefix that makes valid label names no other label of the metric has,
// and a known allowlist.
func (p *configParser) validateLabelsFrom(c *Config, m MetricConfig, lf *LabelsFromConfig, ctx string, at func(...any) []any) {
	if strings.TrimSpace(lf.Map) == "" {
		p.Errorf(p.Line(at("labelsFrom", "map")...), ctx, "labelsFrom.map is missing; give a CEL expression yielding a map, such as object.metadata.?labels.orValue({})")
	}
	prefixLine := p.Line(at("labelsFrom", "prefix")...)
	switch {
	case lf.Verbatim:
		verbatimLine := p.Line(at("labelsFrom", "verbatim")...)
		if lf.Prefix != "" {
			p.Errorf(prefixLine, ctx, "labelsFrom.verbatim takes no prefix: the keys are the label names")
		}
		if len(m.Labels) > 0 || len(c.CommonLabels) > 0 {
			p.Errorf(verbatimLine, ctx, "a metric with labelsFrom.verbatim has no labels or commonLabels of its own: its map holds them all")
		}
	case lf.Prefix == "":
		p.Errorf(prefixLine, ctx, "labelsFrom.prefix is missing; name the labels' prefix, such as label (for label_KEY)")
	case labelNameProblem(lf.Prefix+"_") != "":
		p.Errorf(prefixLine, ctx, "labelsFrom.prefix %q does not start valid label names: %s", lf.Prefix, nameChars)
	default:
		for _, name := range slices.Sorted(maps.Keys(m.Labels)) {
			if strings.HasPrefix(name, lf.Prefix+"_") {
				p.Errorf(p.KeyLine(at("labels", name)...), ctx, "label %q starts with labelsFrom's prefix %q; rename it or change the prefix", name, lf.Prefix+"_")
			}
		}
		for name := range c.CommonLabels {
			if strings.HasPrefix(name, lf.Prefix+"_") {
				p.Errorf(prefixLine, ctx, "commonLabels' %q starts with labelsFrom's prefix %q; change one of them", name, lf.Prefix+"_")
			}
		}
	}
	switch lf.Allowlist {
	case "", AllowlistLabels, AllowlistAnnotations:
	default:
		p.Errorf(p.Line(at("labelsFrom", "allowlist")...), ctx, "labelsFrom.allowlist %q is not known; use labels, annotations, or leave it out for every key", lf.Allowlist)
	}
}

// nameChars says what names are made of.
const nameChars = "use letters, digits and '_', not starting with a digit"

// metricNameProblem says what is wrong with a metric name, or returns "".
// what names the name in the message, such as `name "x"`.
func metricNameProblem(what, name string) string {
	if !model.LegacyValidation.IsValidMetricName(name) {
		return fmt.Sprintf("%s is not a valid metric name: %s", what, nameChars)
	}
	if strings.Contains(name, ":") {
		return fmt.Sprintf("%s contains ':', which is reserved for recording rules; use '_'", what)
	}
	return ""
}

// labelNameProblem says what is wrong with a label name, or returns "".
func labelNameProblem(name string) string {
	if !model.LegacyValidation.IsValidLabelName(name) {
		return fmt.Sprintf("label name %q is not valid: %s", name, nameChars)
	}
	if strings.HasPrefix(name, model.ReservedLabelPrefix) {
		return fmt.Sprintf("label name %q starts with %q, which is reserved for Prometheus' own labels; rename it", name, model.ReservedLabelPrefix)
	}
	return ""
}

package exporter

import (
	"errors"
	"fmt"
	"os"
	"reflect"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-informer/kubectl-informer/internal/yamlcheck"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// LineError is one error in a config file. Error() returns
// "FILE:LINE: CONTEXT: message", for example:
//
//	exporter.yaml:14: metric "kube_pod_info": type "histogram" is not supported; use gauge, counter or info
//
// The errors of [Parse], [Compile] and [Load] join every LineError found
// in the file (errors.Join), sorted by line: their Unwrap() []error lists
// them, and errors.As finds the first. For an expression that does not
// compile its Err is an [*indexers.ExprError] (whose own context is left
// empty, as Context says it), which shows the expression with a caret.
type LineError = yamlcheck.Error

// Load reads the config file at path, checks it and compiles its
// expressions with env; see [Compile].
func Load(path string, env *indexers.Env) (*Compiled, error) {
	data, err := os.ReadFile(path) //nolint:gosec // G304: the config file the user names
	if err != nil {
		return nil, fmt.Errorf("reading the exporter config: %w", err)
	}
	return Compile(path, data, env)
}

// Parse decodes and checks the YAML of a config file without compiling its
// expressions; path is used in messages. Unknown fields are errors, as is
// anything docs/exporter-config.md says is invalid. Every error found is
// returned, joined and sorted by line, each a [*LineError] naming the
// line of the YAML node at fault.
func Parse(path string, data []byte) (*Config, error) {
	p, cfg := parseConfig(path, data)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// configParser decodes a config file and collects its errors, with the
// YAML nodes of every field so that errors and expressions can name their
// line.
type configParser struct {
	*yamlcheck.Parser
	// prefix is the config's prefix as written, for the names of metrics
	// in messages before the config is decoded.
	prefix string
}

// parseConfig decodes and checks a config. The parser holds the errors; the
// config is nil when the file could not be decoded.
func parseConfig(path string, data []byte) (*configParser, *Config) {
	p := &configParser{Parser: yamlcheck.New(path, data)}
	p.Nouns = structNouns
	p.IsExpr = isExprPath
	p.ElemContext = p.elemContext
	root := p.Root(
		fmt.Sprintf("the config is empty; it needs apiVersion: %s, kind: %s and resources", ConfigAPIVersion, ConfigKind),
		"the config must be a mapping with apiVersion, kind and resources, not %s")
	if root == nil {
		return p, nil
	}
	// Decoding first stops at what no walk should go through, such as
	// aliases that expand into a huge document; type errors are reported
	// by walk, with more to say.
	cfg := &Config{}
	decodeErr := root.Decode(cfg)
	var typeErr *yaml.TypeError
	if decodeErr != nil && !errors.As(decodeErr, &typeErr) {
		p.Fatal = true
		p.YAMLError(decodeErr)
		return p, nil
	}
	p.prefix = yamlcheck.ScalarField(root, "prefix")
	p.Walk(root, reflect.TypeFor[Config](), nil, "", "")
	if p.Malformed || typeErr != nil {
		// What the config holds would be misread: report only this.
		p.Fatal = true
		if !p.Malformed {
			p.YAMLError(typeErr)
		}
		return p, nil
	}
	// Unknown fields, if any, are reported; decoding left them out and the
	// rest is checked as well, so that one run shows every error.
	p.validate(cfg)
	return p, cfg
}

// elemContext names the resources and metrics of the config in messages.
func (p *configParser) elemContext(elem reflect.Type, e *yaml.Node, context string, i int) (string, bool) {
	switch elem {
	case reflect.TypeFor[ResourceConfig]():
		return resourceContext(yamlcheck.ScalarField(e, "resource"), i), true
	case reflect.TypeFor[MetricConfig]():
		return metricContext(p.prefix, yamlcheck.ScalarField(e, "name"), context, i), true
	}
	return "", false
}

// structNouns name the config's structs in messages about their fields.
var structNouns = map[reflect.Type]string{
	reflect.TypeFor[Config]():           "the config",
	reflect.TypeFor[ResourceConfig]():   "a resource",
	reflect.TypeFor[MetricConfig]():     "a metric",
	reflect.TypeFor[LabelsFromConfig](): "labelsFrom",
}

// isExprPath reports whether the field at path holds a CEL expression.
func isExprPath(path []any) bool {
	n := len(path)
	if n >= 1 && (path[n-1] == "value" || path[n-1] == "each") {
		return true
	}
	if n >= 2 && path[n-2] == "labelsFrom" && path[n-1] == "map" {
		return true
	}
	return n >= 2 && (path[n-2] == "labels" || path[n-2] == "indexes")
}

// resourceContext names the i-th resource entry in messages.
func resourceContext(resource string, i int) string {
	if resource == "" {
		return fmt.Sprintf("resources[%d]", i)
	}
	return fmt.Sprintf("resource %q", resource)
}

// metricContext names the j-th metric of a resource in messages, by its
// full name.
func metricContext(prefix, name, resourceContext string, j int) string {
	if name == "" {
		return fmt.Sprintf("%s metrics[%d]", resourceContext, j)
	}
	return fmt.Sprintf("metric %q", prefix+name)
}

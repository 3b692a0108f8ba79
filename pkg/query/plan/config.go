package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	goyaml "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/internal/yamlcheck"
)

// Config file identification.
const (
	ConfigAPIVersion = "kubectl-informer.io/v1alpha1"
	ConfigKind       = "QueryConfig"
)

// Config is the query configuration file: named CEL indexes per resource
// and defaults for flags. Example:
//
//	apiVersion: kubectl-informer.io/v1alpha1
//	kind: QueryConfig
//	indexes:
//	  pods:
//	    byNode: object.spec.?nodeName.orValue("")
//	    byImage: object.spec.containers.map(c, c.image)
//	  nodes:
//	    byZone: object.metadata.labels["topology.kubernetes.io/zone"]
//	defaults:
//	  syncTimeout: 5m
//	  output: wide
type Config struct {
	// APIVersion must be kubectl-informer.io/v1alpha1.
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	// Kind must be QueryConfig.
	Kind string `json:"kind" yaml:"kind"`
	// Indexes maps a resource, named as kubectl names it ("pods", "deploy",
	// "databases.demo.kubectl-informer.io"), to its indexes by name. They
	// are registered whenever that resource is queried or read by
	// byIndex(), and --by can use them.
	Indexes map[string]map[string]string `json:"indexes,omitempty" yaml:"indexes,omitempty"`
	// Defaults replace the built-in defaults of flags not given.
	Defaults ConfigDefaults `json:"defaults,omitempty" yaml:"defaults,omitempty"`

	// path is the file the config was read from, for messages.
	path string
	// lines are the lines of the index expressions, by resource and name
	// (see IndexLine).
	lines map[string]int
}

// ConfigDefaults are flag defaults; a flag given on the command line wins.
type ConfigDefaults struct {
	// SyncTimeout is the default of --sync-timeout (built-in: 2m).
	SyncTimeout *metav1.Duration `json:"syncTimeout,omitempty" yaml:"syncTimeout,omitempty"`
	// Output is the default of -o (built-in: a table).
	Output string `json:"output,omitempty" yaml:"output,omitempty"`
}

// Path returns the file the config was read from; "" for a nil Config.
func (c *Config) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

// DefaultConfigPath returns $XDG_CONFIG_HOME/kubectl-informer/config.yaml,
// or ~/.config/kubectl-informer/config.yaml when XDG_CONFIG_HOME is unset.
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "kubectl-informer", "config.yaml")
}

// LoadConfig reads and checks a config file. Unknown fields are errors.
// With optional set, a missing file yields (nil, nil).
func LoadConfig(path string, optional bool) (*Config, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the config file the user names
	if err != nil {
		if optional && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig parses the YAML of a config file; path is used in messages.
// Every error found is returned, joined and sorted by line, each a
// *yamlcheck.Error that reads "FILE:LINE: message": unknown fields (with
// the field meant when one is close), values of the wrong shape, and a
// file of another kind of this tool (an ExporterConfig) is said to be one.
func ParseConfig(path string, data []byte) (*Config, error) {
	p := yamlcheck.New(path, data)
	p.Nouns = map[reflect.Type]string{reflect.TypeFor[Config](): "the config", reflect.TypeFor[ConfigDefaults](): "defaults"}
	p.IsExpr = func(path []any) bool { return len(path) == 3 && path[0] == "indexes" }
	root := p.Root(
		fmt.Sprintf("the config is empty; it needs apiVersion: %s and kind: %s", ConfigAPIVersion, ConfigKind),
		"the config must be a mapping with apiVersion, kind and indexes, not %s")
	if root == nil {
		return nil, p.Err()
	}
	p.Nodes[yamlcheck.NodeKey("kind")] = yamlcheck.FieldNodes{Value: kindNode(root)}
	switch kind := yamlcheck.ScalarField(root, "kind"); kind {
	case ConfigKind:
	case exporterConfigKind:
		// Its fields would all be unknown here: say what the file is.
		p.Errorf(p.Line("kind"), "", "this is an %s, the config of the exporter; a query config has kind: %s", kind, ConfigKind)
		return nil, p.Err()
	case "":
		p.Errorf(p.Line("kind"), "", "kind is missing; set kind: %s", ConfigKind)
	default:
		p.Errorf(p.Line("kind"), "", "kind %q is not a query config; set kind: %s", kind, ConfigKind)
	}
	p.Walk(root, reflect.TypeFor[Config](), nil, "", "")
	if p.Malformed {
		return nil, p.Err()
	}
	c := &Config{path: path, lines: map[string]int{}}
	if v := yamlcheck.ScalarField(root, "apiVersion"); v != ConfigAPIVersion {
		if v == "" {
			p.Errorf(p.Line("apiVersion"), "", "apiVersion is missing; set apiVersion: %s", ConfigAPIVersion)
		} else {
			p.Errorf(p.Line("apiVersion"), "", "apiVersion %q: set apiVersion: %s", v, ConfigAPIVersion)
		}
	}
	if f, ok := p.Nodes[yamlcheck.NodeKey("defaults", "syncTimeout")]; ok && !yamlcheck.IsNull(f.Value) {
		n := f.Value
		switch d, err := time.ParseDuration(n.Value); {
		case err != nil:
			p.Errorf(n.Line, "", "defaults.syncTimeout %q is not a duration, such as 5m or 90s", n.Value)
		case d <= 0:
			p.Errorf(n.Line, "", "defaults.syncTimeout must be positive, got %s", d)
		}
	}
	if len(p.Errs) > 0 {
		return nil, p.Err()
	}
	// The shape of every field has been checked: decoding fills them.
	if err := yaml.Unmarshal(data, c); err != nil {
		p.Errorf(1, "", "%v", err)
		return nil, p.Err()
	}
	for res, ixs := range c.Indexes {
		if strings.TrimSpace(res) == "" {
			p.Errorf(p.KeyLine("indexes", res), "", "indexes: a resource name is empty; name the resource as kubectl does, such as pods")
		}
		for name, expr := range ixs {
			at := []any{"indexes", res, name}
			if strings.TrimSpace(name) == "" || strings.TrimSpace(expr) == "" {
				p.Errorf(p.Line(at...), "", "indexes.%s: index %q needs a name and an expression", res, name)
				continue
			}
			c.lines[res+"\x00"+name] = p.ExprLine(p.ValueNode(at...), expr, 1, 1)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// exporterConfigKind is the kind of the exporter's config file, which a
// query config is easily confused with.
const exporterConfigKind = "ExporterConfig"

// kindNode returns the value node of the root's kind, or the root.
func kindNode(root *goyaml.Node) *goyaml.Node {
	for _, kv := range yamlcheck.MappingPairs(root) {
		if kv[0].Value == "kind" {
			return yamlcheck.ResolveAlias(kv[1])
		}
	}
	return root
}

// IndexLine returns the line of the config file where the index name of
// resource (as the config names it) is defined; 0 when it is not, or for
// a nil Config.
func (c *Config) IndexLine(resource, name string) int {
	if c == nil {
		return 0
	}
	return c.lines[resource+"\x00"+name]
}

// SyncTimeout returns the configured default, or d.
func (c *Config) SyncTimeout(d time.Duration) time.Duration {
	if c != nil && c.Defaults.SyncTimeout != nil {
		return c.Defaults.SyncTimeout.Duration
	}
	return d
}

// ResourceIndexes returns the config's indexes as NamedExprs per resource,
// sorted by name.
func (c *Config) ResourceIndexes() map[string][]NamedExpr {
	if c == nil {
		return nil
	}
	out := map[string][]NamedExpr{}
	for res, ixs := range c.Indexes {
		for name, expr := range ixs {
			out[res] = append(out[res], NamedExpr{Name: name, Expr: expr})
		}
		sort.Slice(out[res], func(i, j int) bool { return out[res][i].Name < out[res][j].Name })
	}
	return out
}

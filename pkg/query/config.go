package query

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
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
func ParseConfig(path string, data []byte) (*Config, error) {
	c := &Config{path: path}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: the config is empty; it needs apiVersion: %s and kind: %s", path, ConfigAPIVersion, ConfigKind)
	}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.APIVersion != ConfigAPIVersion || c.Kind != ConfigKind {
		return nil, fmt.Errorf("%s: apiVersion %q and kind %q: want apiVersion: %s and kind: %s", path, c.APIVersion, c.Kind, ConfigAPIVersion, ConfigKind)
	}
	if d := c.Defaults.SyncTimeout; d != nil && d.Duration <= 0 {
		return nil, fmt.Errorf("%s: defaults.syncTimeout must be positive, got %s", path, d.Duration)
	}
	for res, ixs := range c.Indexes {
		if res == "" {
			return nil, fmt.Errorf("%s: indexes: a resource name is empty", path)
		}
		for name, expr := range ixs {
			if name == "" || expr == "" {
				return nil, fmt.Errorf("%s: indexes.%s: index %q needs a name and an expression", path, res, name)
			}
		}
	}
	return c, nil
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

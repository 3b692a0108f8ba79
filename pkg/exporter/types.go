package exporter

import (
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Config file identification.
const (
	ConfigAPIVersion = "kubectl-informer.io/v1alpha1"
	ConfigKind       = "ExporterConfig"
)

// Config is the exporter's configuration file (docs/exporter-config.md).
type Config struct {
	// APIVersion must be kubectl-informer.io/v1alpha1.
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	// Kind must be ExporterConfig.
	Kind string `json:"kind" yaml:"kind"`
	// Prefix is prepended to every metric name; default none.
	Prefix string `json:"prefix,omitempty" yaml:"prefix,omitempty"`
	// CommonLabels are constant labels added to every series.
	CommonLabels map[string]string `json:"commonLabels,omitempty" yaml:"commonLabels,omitempty"`
	// Resources are the resources to watch and the metrics computed from them.
	Resources []ResourceConfig `json:"resources" yaml:"resources"`
	// AllowSecretData allows expressions to read the data of Secrets
	// (data, stringData, or the whole object), and to read Secrets with
	// get() and byIndex(). Without it such a config is refused: the values
	// would end up in label values, for anyone who can scrape /metrics.
	AllowSecretData bool `json:"allowSecretData,omitempty" yaml:"allowSecretData,omitempty"`
}

// ResourceConfig is one watched resource.
type ResourceConfig struct {
	// Resource is any name kubectl accepts: "pods", "deploy", a CRD.
	Resource string `json:"resource" yaml:"resource"`
	// Namespaces limits namespaced resources to these namespaces; default all.
	Namespaces []string `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`
	// LabelSelector and FieldSelector are sent to the server.
	LabelSelector string `json:"labelSelector,omitempty" yaml:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty" yaml:"fieldSelector,omitempty"`
	// Indexes are CEL index functions by name, for byIndex() lookups.
	Indexes map[string]string `json:"indexes,omitempty" yaml:"indexes,omitempty"`
	// Metrics are the metric families computed from this resource's objects.
	Metrics []MetricConfig `json:"metrics,omitempty" yaml:"metrics,omitempty"`
}

// MetricConfig is one metric family.
type MetricConfig struct {
	// Name is the metric name, without the config's prefix.
	Name string `json:"name" yaml:"name"`
	// Help is the HELP text.
	Help string `json:"help" yaml:"help"`
	// Type is gauge, counter or info.
	Type string `json:"type" yaml:"type"`
	// Labels are label names with the CEL expression of each value. A
	// value that is an empty optional leaves the label out of that series.
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	// Value is a CEL expression yielding a number or a bool; default 1.
	Value string `json:"value,omitempty" yaml:"value,omitempty"`
	// Each, when set, yields a list: one series per element, bound as each.
	Each string `json:"each,omitempty" yaml:"each,omitempty"`
	// Aggregate is count, sum, min or max: one series per distinct label set
	// over all objects. Empty: one series per object (and element).
	Aggregate string `json:"aggregate,omitempty" yaml:"aggregate,omitempty"`
	// LabelsFrom adds a label per entry of a map, such as the object's own
	// labels; see LabelsFromConfig.
	LabelsFrom *LabelsFromConfig `json:"labelsFrom,omitempty" yaml:"labelsFrom,omitempty"`
}

// LabelsFromConfig turns the entries of a map into labels, named as
// kube-state-metrics names them: the entry "app.kubernetes.io/name" with
// the prefix "label" becomes label_app_kubernetes_io_name. A key's
// characters other than letters, digits and '_' become '_', a lower-case
// letter or digit followed by an upper-case one gets a '_' between them,
// and the name is lower-cased; when keys give the same name, each of them
// (in key order) is named NAME_conflict1, NAME_conflict2, and so on.
type LabelsFromConfig struct {
	// Map is a CEL expression yielding a map; each entry whose value is
	// not null becomes a label, its value formatted as labels' values are.
	Map string `json:"map" yaml:"map"`
	// Prefix starts every label name, followed by '_'.
	Prefix string `json:"prefix" yaml:"prefix"`
	// Allowlist names the exporter option that selects the keys: "labels"
	// (--metric-labels-allowlist) or "annotations"
	// (--metric-annotations-allowlist), each keyed by the resource's name
	// as the config writes it. Then a resource the option does not name
	// has no series in the family, as in kube-state-metrics. Empty: every
	// key, whatever the options.
	Allowlist string `json:"allowlist,omitempty" yaml:"allowlist,omitempty"`
	// Verbatim makes the keys themselves the label names, each character
	// not allowed in a label name replaced by '_' (as kube-state-metrics
	// names the labels of its custom resource state metrics), instead of
	// Prefix_KEY in snake_case. It takes no Prefix, and the metric then has
	// no other labels: the map holds them all.
	Verbatim bool `json:"verbatim,omitempty" yaml:"verbatim,omitempty"`
}

// Allowlists for LabelsFromConfig.Allowlist.
const (
	AllowlistLabels      = "labels"
	AllowlistAnnotations = "annotations"
)

// Metric types.
const (
	TypeGauge   = "gauge"
	TypeCounter = "counter"
	TypeInfo    = "info"
)

// Aggregations.
const (
	AggregateNone  = ""
	AggregateCount = "count"
	AggregateSum   = "sum"
	AggregateMin   = "min"
	AggregateMax   = "max"
)

// Compiled is a loaded, validated config with every expression compiled.
type Compiled struct {
	Config *Config
	// Path is the file the config was read from.
	Path string
	// Hash identifies the config's content (hex SHA-256 of the file).
	Hash string
	// Resources are in the config's order.
	Resources []*CompiledResource
	// Unavailable are the profile's resources the API server does not
	// have, whose families are left out (see Sources.Available).
	Unavailable []string

	// parts are the configs this one was merged from (see Merge); nil for
	// a config compiled from one file.
	parts []*Compiled

	// parser holds the YAML nodes of the file, for the lines of the errors
	// found by CheckResources; read-only once Compile has returned.
	parser *configParser
	// exprs are the compiled expressions with the paths of their fields.
	exprs []compiledExpr
	// builtin: a file of a built-in profile, whose expressions its tests
	// check against the API server's schemas (TestProfileChecks in
	// test/e2e/profile): CheckResources checks only those that learn size
	// bounds from the schema (see indexers.Program.AdoptsSizeBounds).
	builtin bool
	// knownBounds are the size bounds of a built-in profile's expressions
	// (see profiles.SizeBounds): CheckResources sets those it finds there
	// instead of checking their expressions against the schemas.
	knownBounds map[boundKey][]jsonval.Sizes
}

// CompiledResource is a resource with its compiled indexes and families.
type CompiledResource struct {
	// Config is the resource's entry in the config.
	Config ResourceConfig
	// Indexes are the compiled index programs by name.
	Indexes map[string]*indexers.Program
	// Families are the resource's metric families, in the config's order.
	Families []*Family
	// ExcludeNamespaces are namespaces whose objects are not watched (see
	// ExcludeNamespaces).
	ExcludeNamespaces []string
	// LabelSlots is the number of distinct label expressions of the
	// families that do not read each: those are evaluated once per object
	// and shared (see Family.LabelSlots).
	LabelSlots int
	// EachSlots is the number of distinct each expressions of the
	// families: each is evaluated once per object and its list shared by
	// the families that have the same expression (see Family.EachSlot).
	EachSlots int
}

// Family is a compiled metric family.
type Family struct {
	// Name is the full name, prefix included.
	Name string
	Help string
	// Type is TypeGauge, TypeCounter or TypeInfo.
	Type string
	// LabelNames are the names of the computed labels, sorted; Labels holds
	// their programs in the same order. Compiled with CompileEach when Each
	// is set.
	LabelNames []string
	Labels     []*indexers.Program
	// LabelSlots holds, for each label that does not read each, the index
	// of its value among the resource's shared label values (equal
	// expressions share one), and -1 for labels that read each.
	LabelSlots []int
	// ConstLabels are the config's commonLabels as sorted name/value pairs.
	ConstLabels [][2]string
	// Value yields a number or a bool; nil means 1.
	Value *indexers.Program
	// Each yields a list; nil means one series per object.
	Each *indexers.Program
	// EachSlot is the index of Each's list among the resource's shared
	// each lists (equal expressions share one), -1 without Each.
	EachSlot int
	// Aggregate is one of the Aggregate constants.
	Aggregate string
	// LabelsFrom yields the map whose entries are labels named
	// LabelsPrefix_KEY (see LabelsFromConfig); nil: none. Compiled with
	// CompileEach when Each is set.
	LabelsFrom   *indexers.Program
	LabelsPrefix string
	// LabelsVerbatim is LabelsFromConfig.Verbatim.
	LabelsVerbatim bool
	// LabelsAllowlist is LabelsFromConfig.Allowlist; LabelKeys selects
	// the keys (nil: every key), and NoLabelsSeries, set when the
	// allowlist option does not name the resource, leaves the family
	// without series. See Compiled.SetAllowlists.
	LabelsAllowlist string
	LabelKeys       *KeyFilter
	NoLabelsSeries  bool
	// Line is the line of the metric in the config file, for messages.
	Line int
}

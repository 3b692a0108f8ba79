package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// KubeStateMetricsName is the name under which the binary speaks
// kube-state-metrics' command line (see NewKubeStateMetricsCommand): the
// image links /kube-state-metrics to it.
const KubeStateMetricsName = "kube-state-metrics"

// NewCommandFor returns the command the binary runs when called name:
// kube-state-metrics' command line when name is KubeStateMetricsName (or
// that with .exe), the plugin's otherwise.
func NewCommandFor(name string, streams genericiooptions.IOStreams) *cobra.Command {
	if strings.TrimSuffix(name, ".exe") == KubeStateMetricsName {
		return NewKubeStateMetricsCommand(streams)
	}
	return NewRootCommand(streams)
}

// ksmSettings are kube-state-metrics' options, with the keys of its
// options file (--config) as its pkg/options names them.
type ksmSettings struct {
	AnnotationsAllowList allowlistValue `yaml:"annotations_allow_list"`
	LabelsAllowList      allowlistValue `yaml:"labels_allow_list"`
	MetricAllowlist      listValue      `yaml:"metric_allowlist"`
	MetricDenylist       listValue      `yaml:"metric_denylist"`
	MetricOptInList      listValue      `yaml:"metric_opt_in_list"`
	Resources            listValue      `yaml:"resources"`
	Namespaces           listValue      `yaml:"namespaces"`
	NamespacesDenylist   listValue      `yaml:"namespaces_denylist"`

	Apiserver                  string        `yaml:"apiserver"`
	Kubeconfig                 string        `yaml:"kubeconfig"`
	CustomResourceConfig       string        `yaml:"custom_resource_config"`
	CustomResourceConfigFile   string        `yaml:"custom_resource_state_config_file"`
	CustomResourceConfigFileV1 string        `yaml:"custom_resource_config_file"`
	ContinueWithoutCRSFile     bool          `yaml:"continue_without_custom_resource_state_config_file"`
	CustomResourcesOnly        bool          `yaml:"custom_resources_only"`
	ContinueWithoutConfig      bool          `yaml:"continue_without_config"`
	Host                       string        `yaml:"host"`
	Port                       int           `yaml:"port"`
	TelemetryHost              string        `yaml:"telemetry_host"`
	TelemetryPort              int           `yaml:"telemetry_port"`
	TLSConfig                  string        `yaml:"tls_config"`
	Pod                        string        `yaml:"pod"`
	PodNamespace               string        `yaml:"namespace"`
	Node                       string        `yaml:"node"`
	TrackUnscheduledPods       bool          `yaml:"track_unscheduled_pods"`
	Shard                      int32         `yaml:"shard"`
	TotalShards                int           `yaml:"total_shards"`
	UseAPIServerCache          bool          `yaml:"use_api_server_cache"`
	ObjectLimit                int64         `yaml:"object_limit"`
	AuthFilter                 bool          `yaml:"auth_filter"`
	EnableGZIPEncoding         bool          `yaml:"enable_gzip_encoding"`
	AutoGoMemlimit             bool          `yaml:"auto-gomemlimit"`
	AutoGoMemlimitRatio        float64       `yaml:"auto-gomemlimit-ratio"`
	ServerReadTimeout          time.Duration `yaml:"server_read_timeout"`
	ServerWriteTimeout         time.Duration `yaml:"server_write_timeout"`
	ServerIdleTimeout          time.Duration `yaml:"server_idle_timeout"`
	ServerReadHeaderTimeout    time.Duration `yaml:"server_read_header_timeout"`
	Help                       bool          `yaml:"help"`
}

// ksmFileKeys are the keys of kube-state-metrics' options file; any other
// is logged and ignored, as kube-state-metrics ignores it.
var ksmFileKeys = func() []string {
	var keys []string
	t := reflect.TypeFor[ksmSettings]()
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("yaml"); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}()

// listValue is a comma-separated list flag of kube-state-metrics
// (--resources, --namespaces, the metric lists), split on commas as
// kube-state-metrics splits it, empty items dropped. In the options file
// it is a YAML list, a map whose keys are the items (kube-state-metrics'
// own form), or a comma-separated string.
type listValue []string

func (l *listValue) String() string { return strings.Join(*l, ",") }
func (l *listValue) Type() string   { return "string" }

func (l *listValue) Set(v string) error {
	*l = splitList(v)
	return nil
}

func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (l *listValue) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = splitList(n.Value)
	case yaml.SequenceNode:
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		*l = items
	case yaml.MappingNode:
		var items []string
		for i := 0; i < len(n.Content); i += 2 {
			items = append(items, n.Content[i].Value)
		}
		slices.Sort(items)
		*l = items
	default:
		return fmt.Errorf("line %d: want a list of names", n.Line)
	}
	return nil
}

// allowlistValue is --metric-labels-allowlist or
// --metric-annotations-allowlist as written on the command line
// (RESOURCE=[KEY,...],...); in the options file it is a map from resource
// to keys, as kube-state-metrics reads it.
type allowlistValue string

func (a *allowlistValue) String() string     { return string(*a) }
func (a *allowlistValue) Type() string       { return "string" }
func (a *allowlistValue) Set(v string) error { *a = allowlistValue(v); return nil }

func (a *allowlistValue) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*a = allowlistValue(n.Value)
		return nil
	}
	var m map[string][]string
	if err := n.Decode(&m); err != nil {
		return err
	}
	var parts []string
	for _, res := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, res+"=["+strings.Join(m[res], ",")+"]")
	}
	*a = allowlistValue(strings.Join(parts, ","))
	return nil
}

// KubeStateMetricsOptions runs the exporter as kube-state-metrics runs:
// export --profile kube-state-metrics with kube-state-metrics' command
// line.
type KubeStateMetricsOptions struct {
	genericiooptions.IOStreams
	// Config is --config, kube-state-metrics' options file.
	Config string
	// flags are the settings of the command line; settings are those in
	// force: the flags with the options file's keys over them.
	flags, settings ksmSettings
	// fileFound is set when the options file was read.
	fileFound bool
	// crsData is the custom resource state config in force.
	crsData []byte
	crsName string
	// notes are the things said once at start about flags that mean
	// something else or nothing here.
	notes []string
	// export is the export the settings in force run, as Validate built
	// and validated it: Run runs this one, so that what export derives
	// from its flags in Validate (the parsed label allowlists, say) is
	// what the drop-in serves with.
	export *ExportOptions
}

// NewKubeStateMetricsCommand returns the command the binary runs when
// called kube-state-metrics: the exporter with the kube-state-metrics
// profile, speaking kube-state-metrics' whole command line with its
// names, defaults and meanings, its version and completion subcommands
// and klog's flags.
func NewKubeStateMetricsCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newKubeStateMetricsCommand(streams)
	return cmd
}

func newKubeStateMetricsCommand(streams genericiooptions.IOStreams) (*cobra.Command, *KubeStateMetricsOptions) {
	o := &KubeStateMetricsOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   KubeStateMetricsName,
		Short: "kube-state-metrics' metrics, served by kubectl-informer",
		Long: `Run under the name kube-state-metrics, kubectl-informer serves kube-state-metrics'
default metric families from informer caches, as "kubectl informer export
--profile kube-state-metrics" does, and takes kube-state-metrics' own command line:
its flags, with their names, defaults and meanings, its options file (--config),
klog's logging flags, and its version and completion subcommands. See
docs/kube-state-metrics-cli.md for each flag.

` + exitCodesHelp,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	o.addFlags(cmd.Flags())
	cmd.AddCommand(newKSMVersionCommand(streams), newKSMCompletionCommand(streams))
	return cmd, o
}

// The defaults of kube-state-metrics' flags that are not zero.
const (
	ksmDefaultHost          = "::"
	ksmDefaultPort          = 8080
	ksmDefaultTelemetryPort = 8081
	ksmDefaultMemlimitRatio = 0.9
)

// Server timeouts, kube-state-metrics' defaults.
var ksmDefaultTimeouts = exporter.ServerTimeouts{ReadHeader: 5 * time.Second, Read: time.Minute, Write: time.Minute, Idle: 5 * time.Minute}

func (o *KubeStateMetricsOptions) addFlags(f *pflag.FlagSet) {
	s := &o.flags
	// klog's flags, as kube-state-metrics registers them: logs go to
	// stderr, and -stderrthreshold is honoured there.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlagSet(klogFlags)
	// klog takes a flag's default from its global state, which the lines
	// below change: the help shows klog's own defaults, as
	// kube-state-metrics' does, however many times this runs.
	f.Lookup("legacy_stderr_threshold_behavior").DefValue = "true"
	f.Lookup("stderrthreshold").DefValue = "2"
	_ = f.Set("logtostderr", "true")
	_ = klogFlags.Set("legacy_stderr_threshold_behavior", "false")
	_ = klogFlags.Set("stderrthreshold", "INFO")

	autoshard := " Give --pod and --pod-namespace together (the downward API's metadata.name and metadata.namespace): the shard is then the ordinal of the pod in its StatefulSet, of as many shards as it has replicas, and follows its replicas; this wins over --shard and --total-shards."
	f.BoolVarP(&s.Help, "help", "h", false, "print this help")
	f.StringVar(&o.Config, "config", "", "kube-state-metrics' options file (YAML, the keys of its options such as port, resources, metric_allowlist); its keys override the flags, and a change of it restarts the exporter with them")
	f.BoolVar(&s.ContinueWithoutConfig, "continue-without-config", false, "run on the flags when the --config file does not exist yet, and restart with it once it appears")
	f.StringVar(&s.Apiserver, "apiserver", "", "the URL of the API server (instead of the kubeconfig's); with neither it nor --kubeconfig, the in-cluster config of the pod's service account")
	f.StringVar(&s.Kubeconfig, "kubeconfig", "", "the kubeconfig file to reach the API server with")
	f.StringVar(&s.Host, "host", ksmDefaultHost, "the address /metrics, /healthz and /livez listen on")
	f.IntVar(&s.Port, "port", ksmDefaultPort, "the port /metrics, /healthz and /livez listen on")
	f.StringVar(&s.TelemetryHost, "telemetry-host", ksmDefaultHost, "the address of the listener of the exporter's own metrics and /readyz")
	f.IntVar(&s.TelemetryPort, "telemetry-port", ksmDefaultTelemetryPort, "the port of the listener of the exporter's own metrics and /readyz")
	f.StringVar(&s.TLSConfig, "tls-config", "", "an exporter-toolkit web config file (TLS, basic auth) for both listeners")
	f.BoolVar(&s.AuthFilter, "auth-filter", false, "require a bearer token that the API server authenticates and authorizes for the path (TokenReview, SubjectAccessReview) on the metrics endpoints")
	f.BoolVar(&s.EnableGZIPEncoding, "enable-gzip-encoding", false, "compress /metrics with gzip for clients that accept it (Accept-Encoding: gzip); without it, never")
	f.DurationVar(&s.ServerReadHeaderTimeout, "server-read-header-timeout", ksmDefaultTimeouts.ReadHeader, "the longest time to read a request's headers")
	f.DurationVar(&s.ServerReadTimeout, "server-read-timeout", ksmDefaultTimeouts.Read, "the longest time to read a whole request, body included; align it with the scrape interval")
	f.DurationVar(&s.ServerWriteTimeout, "server-write-timeout", ksmDefaultTimeouts.Write, "the longest time to write a response; align it with the scrape timeout")
	f.DurationVar(&s.ServerIdleTimeout, "server-idle-timeout", ksmDefaultTimeouts.Idle, "the longest time a kept-alive connection waits for its next request; align it with the scrapers' idle timeout")
	f.Var(&s.Resources, "resources", "the resources whose families are served, comma-separated (default: kube-state-metrics' default resources)")
	f.Var(&s.MetricAllowlist, "metric-allowlist", "serve only the families these comma-separated names or regular expressions match; not with --metric-denylist")
	f.Var(&s.MetricDenylist, "metric-denylist", "do not serve the families these comma-separated names or regular expressions match; not with --metric-allowlist")
	f.Var(&s.MetricOptInList, "metric-opt-in-list", "serve the opt-in families these comma-separated names or regular expressions match, beside the default ones")
	f.Var(&s.LabelsAllowList, "metric-labels-allowlist", "the object labels the kube_*_labels families carry, as RESOURCE=[KEY,...],... (a plural resource name or '*'; a key may be '*' or hold one '*'), such as 'pods=[app,team],namespaces=[*]'; none by default")
	f.Var(&s.AnnotationsAllowList, "metric-annotations-allowlist", "the annotations the kube_*_annotations families carry, written as --metric-labels-allowlist; none by default")
	f.Var(&s.Namespaces, "namespaces", "watch only these comma-separated namespaces (default: every namespace)")
	f.Var(&s.NamespacesDenylist, "namespaces-denylist", "leave out the objects of these comma-separated namespaces; with --namespaces, those of the denylist are left out of it")
	f.Int32Var(&s.Shard, "shard", 0, "this instance's shard, counted from 0, among --total-shards")
	f.IntVar(&s.TotalShards, "total-shards", 1, "the number of shards the objects are split among by their UID; 1: not sharded")
	f.StringVar(&s.Pod, "pod", "", "the name of this pod, for automatic sharding."+autoshard)
	f.StringVar(&s.PodNamespace, "pod-namespace", "", "the namespace of the pod of --pod, for automatic sharding."+autoshard)
	f.StringVar(&s.Node, "node", "", "watch only the pods of this node (spec.nodeName), for a DaemonSet, from the downward API's spec.nodeName; only pods can be selected so, so --resources may name pods only")
	f.BoolVar(&s.TrackUnscheduledPods, "track-unscheduled-pods", false, "watch only the pods of no node (spec.nodeName empty), beside the DaemonSet of --node; it wins over --node")
	f.BoolVar(&s.UseAPIServerCache, "use-apiserver-cache", false, "list with resourceVersion=0, which the API server answers from its watch cache instead of a quorum read of etcd")
	f.Int64Var(&s.ObjectLimit, "object-limit", 0, "list at most this many objects of each resource (0: all)")
	f.StringVar(&s.CustomResourceConfig, "custom-resource-state-config", "", "a custom resource state config (CustomResourceStateMetrics), inline YAML")
	f.StringVar(&s.CustomResourceConfigFile, "custom-resource-state-config-file", "", "a custom resource state config (CustomResourceStateMetrics) file; a change of it restarts the exporter with it")
	f.BoolVar(&s.ContinueWithoutCRSFile, "continue-without-custom-resource-state-config-file", false, "run without the --custom-resource-state-config-file file while it does not exist, and restart with it once it appears")
	f.BoolVar(&s.CustomResourcesOnly, "custom-resource-state-only", false, "serve only the custom resource state metrics, none of the default families")
	f.BoolVar(&s.AutoGoMemlimit, "auto-gomemlimit", false, "set the Go runtime's soft memory limit (GOMEMLIMIT) to --auto-gomemlimit-ratio of the container's memory limit (its cgroup's), or of the system's memory; an environment's GOMEMLIMIT wins")
	f.Float64Var(&s.AutoGoMemlimitRatio, "auto-gomemlimit-ratio", ksmDefaultMemlimitRatio, "the share of the memory limit --auto-gomemlimit sets, above 0 and at most 1")
}

// Complete reads the options file over the flags and the custom resource
// state config, and says once what the flags change here.
func (o *KubeStateMetricsOptions) Complete(cmd *cobra.Command) error {
	if o.flags.Help {
		return cmd.Help()
	}
	settings, found, err := o.load()
	if err != nil {
		return err
	}
	o.settings, o.fileFound = settings, found
	if o.Config != "" && !found {
		if !o.flags.ContinueWithoutConfig {
			return usageErrorf("--config %q: the file does not exist: create it, or give --continue-without-config to run on the flags until it appears", o.Config)
		}
		o.notes = append(o.notes, fmt.Sprintf("--config %q does not exist: running on the flags; the exporter restarts with it once it appears (--continue-without-config)", o.Config))
	}
	o.crsData, o.crsName, err = o.settings.customResourceState()
	if err != nil {
		return err
	}
	return nil
}

// load returns the settings of the flags with the options file's keys over
// them, and whether the file exists. An unreadable or invalid file is a
// *UsageError.
func (o *KubeStateMetricsOptions) load() (ksmSettings, bool, error) {
	s := o.flags
	if o.Config == "" {
		return s, false, nil
	}
	data, err := os.ReadFile(o.Config)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, usageErrorf("--config: %v", err)
	}
	var keys map[string]yaml.Node
	if err := yaml.Unmarshal(data, &keys); err != nil {
		return s, true, usageErrorf("--config %q: %v", o.Config, err)
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		return s, true, usageErrorf("--config %q: %v", o.Config, err)
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(ksmFileKeys, k) {
			o.notes = append(o.notes, fmt.Sprintf("--config %q: key %q is none of kube-state-metrics' options: it is ignored, as kube-state-metrics ignores it", o.Config, k))
		}
	}
	return s, true, nil
}

// crsFile is the custom resource state config file in force: the key of
// before v2.17 stands in for the current one when only it is given.
func (s *ksmSettings) crsFile() string {
	if s.CustomResourceConfigFile == "" {
		return s.CustomResourceConfigFileV1
	}
	return s.CustomResourceConfigFile
}

// customResourceState returns the custom resource state config and its
// name: the inline one wins over the file, as in kube-state-metrics. A file
// that does not exist is no config with
// --continue-without-custom-resource-state-config-file.
func (s *ksmSettings) customResourceState() ([]byte, string, error) {
	if s.CustomResourceConfig != "" {
		return []byte(s.CustomResourceConfig), "--custom-resource-state-config", nil
	}
	path := s.crsFile()
	if path == "" {
		return nil, "", nil
	}
	data, err := os.ReadFile(path) //nolint:gosec // G304: the file the user names
	switch {
	case errors.Is(err, os.ErrNotExist) && s.ContinueWithoutCRSFile:
		return nil, "", nil
	case errors.Is(err, os.ErrNotExist):
		return nil, "", usageErrorf("--custom-resource-state-config-file %q: the file does not exist: create it, or give --continue-without-custom-resource-state-config-file to run without it until it appears", path)
	case err != nil:
		return nil, "", usageErrorf("--custom-resource-state-config-file: %v", err)
	}
	return data, path, nil
}

// Validate checks the settings in force.
func (o *KubeStateMetricsOptions) Validate() error {
	if o.flags.Help {
		return nil
	}
	if errs := o.settings.validate(); len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	// The selection flags are checked as export checks them, by the
	// export that Run runs.
	e := o.exportOptions()
	if err := e.Validate(); err != nil {
		return err
	}
	o.export = e
	return nil
}

// validate checks what export's own checks do not.
func (s *ksmSettings) validate() []error {
	var errs []error
	for _, p := range []struct {
		name string
		port int
	}{{"port", s.Port}, {"telemetry-port", s.TelemetryPort}} {
		if p.port < 0 || p.port > 65535 {
			errs = append(errs, fmt.Errorf("--%s %d: want a port, 0 to 65535 (0: any free port)", p.name, p.port))
		}
	}
	if s.AutoGoMemlimitRatio <= 0 || s.AutoGoMemlimitRatio > 1 {
		errs = append(errs, fmt.Errorf("--auto-gomemlimit-ratio %v: want a share above 0 and at most 1, such as 0.9", s.AutoGoMemlimitRatio))
	}
	if s.ObjectLimit < 0 {
		errs = append(errs, fmt.Errorf("--object-limit %d: want 0 (no limit) or more", s.ObjectLimit))
	}
	if s.Node != "" {
		for _, r := range s.Resources {
			if r != "pods" {
				errs = append(errs, fmt.Errorf("--node %q selects pods by spec.nodeName, which resource %q cannot be selected by: give --resources=pods", s.Node, r))
			}
		}
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"server-read-header-timeout", s.ServerReadHeaderTimeout}, {"server-read-timeout", s.ServerReadTimeout},
		{"server-write-timeout", s.ServerWriteTimeout}, {"server-idle-timeout", s.ServerIdleTimeout}} {
		if t.d < 0 {
			errs = append(errs, fmt.Errorf("--%s %s: want 0 (no timeout) or more", t.name, t.d))
		}
	}
	if len(s.Namespaces) > 0 && len(s.namespaces()) == 0 {
		errs = append(errs, fmt.Errorf("--namespaces-denylist leaves out every namespace of --namespaces (%s): nothing would be watched", strings.Join(s.Namespaces, ",")))
	}
	if s.CustomResourcesOnly && s.CustomResourceConfig == "" && s.crsFile() == "" {
		errs = append(errs, errors.New("--custom-resource-state-only needs --custom-resource-state-config-file or --custom-resource-state-config"))
	}
	return errs
}

// dropInSettings are kube-state-metrics' settings that export has no flags
// of; the command called kube-state-metrics sets them (see
// ExportOptions.dropIn).
type dropInSettings struct {
	node              string
	unscheduledPods   bool
	useAPIServerCache bool
	objectLimit       int64
	autoShard         exporter.AutoShard
	telemetry         []string
	timeouts          exporter.ServerTimeouts
	noGzip            bool
	authFilter        bool
	// configFiles are the options file and the custom resource state
	// config file, which kube_state_metrics_config_hash reports.
	configFiles []exporter.KubeStateMetricsConfigFile
	// logger logs through klog, as kube-state-metrics does.
	logger *slog.Logger
}

// apply sets d's settings on the exporter's options and server config;
// a nil d (export) changes nothing.
func (d *dropInSettings) apply(opts *exporter.Options, serve *exporter.ServeConfig) {
	if d == nil {
		return
	}
	opts.KubeStateMetrics = true
	opts.Node, opts.UnscheduledPods = d.node, d.unscheduledPods
	opts.UseAPIServerCache, opts.ObjectLimit = d.useAPIServerCache, d.objectLimit
	opts.AutoShard = d.autoShard
	serve.TelemetryAddresses = d.telemetry
	serve.Timeouts = d.timeouts
	serve.NoGzip = d.noGzip
	serve.AuthFilter = d.authFilter
	opts.KubeStateMetricsConfigFiles = d.configFiles
}

// exportOptions returns the export the settings in force run, not yet
// validated (see Validate).
func (o *KubeStateMetricsOptions) exportOptions() *ExportOptions {
	s := &o.settings
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &s.Kubeconfig
	flags.APIServer = &s.Apiserver
	e := &ExportOptions{
		ConfigFlags:          flags,
		IOStreams:            o.IOStreams,
		Profile:              profiles.KubeStateMetrics,
		CRSOnly:              s.CustomResourcesOnly,
		Resources:            s.Resources,
		MetricAllowlist:      s.MetricAllowlist,
		MetricDenylist:       s.MetricDenylist,
		MetricOptInList:      s.MetricOptInList,
		LabelsAllowlist:      string(s.LabelsAllowList),
		AnnotationsAllowlist: string(s.AnnotationsAllowList),
		Namespaces:           s.namespaces(),
		NamespacesDenylist:   s.NamespacesDenylist,
		ListenAddresses:      []string{net.JoinHostPort(s.Host, strconv.Itoa(s.Port))},
		WebConfigFile:        s.TLSConfig,
		Shard:                int(s.Shard),
		TotalShards:          s.TotalShards,
		LogFormat:            "logfmt",
		crsData:              o.crsData,
		crsName:              o.crsName,
		dropIn: &dropInSettings{
			node: s.Node, unscheduledPods: s.TrackUnscheduledPods,
			useAPIServerCache: s.UseAPIServerCache, objectLimit: s.ObjectLimit,
			telemetry: []string{net.JoinHostPort(s.TelemetryHost, strconv.Itoa(s.TelemetryPort))},
			timeouts: exporter.ServerTimeouts{ReadHeader: s.ServerReadHeaderTimeout, Read: s.ServerReadTimeout,
				Write: s.ServerWriteTimeout, Idle: s.ServerIdleTimeout},
			noGzip:     !s.EnableGZIPEncoding,
			authFilter: s.AuthFilter,
		},
	}
	if s.CustomResourcesOnly {
		e.Profile = ""
	}
	if o.Config != "" {
		e.dropIn.configFiles = append(e.dropIn.configFiles, exporter.KubeStateMetricsConfigFile{Type: exporter.OptionsConfigType, Path: o.Config})
	}
	if f := s.crsFile(); f != "" && s.CustomResourceConfig == "" {
		e.dropIn.configFiles = append(e.dropIn.configFiles, exporter.KubeStateMetricsConfigFile{Type: exporter.CustomResourceConfigType, Path: f})
	}
	if s.Pod != "" && s.PodNamespace != "" {
		e.dropIn.autoShard = exporter.AutoShard{Pod: s.Pod, Namespace: s.PodNamespace}
	}
	return e
}

// namespaces are those of --namespaces without those of
// --namespaces-denylist, as kube-state-metrics watches them.
func (s *ksmSettings) namespaces() []string {
	return slices.DeleteFunc(slices.Clone(s.Namespaces), func(ns string) bool { return slices.Contains(s.NamespacesDenylist, ns) })
}

// notesOf are what the settings in force mean here that a reader of
// kube-state-metrics' flags might not expect: each is logged once at
// start.
func (s *ksmSettings) notesOf() []string {
	var notes []string
	if (s.Pod == "") != (s.PodNamespace == "") {
		notes = append(notes, "--pod and --pod-namespace go together: with one of them only, automatic sharding is off, as in kube-state-metrics")
	}
	if s.Node != "" && len(s.Resources) == 0 {
		notes = append(notes, "--node selects only the pods by spec.nodeName: the other resources of the default --resources are watched whole (kube-state-metrics sends the node's field selector for them too, which the API server refuses); give --resources=pods to serve pods only")
	}
	if s.Help {
		notes = append(notes, "the options file's help key prints nothing here: give -h on the command line")
	}
	return notes
}

// ksmLogger returns the logger of kube-state-metrics' mode: slog records
// written through klog, which its flags (-v, --logtostderr, --log_file...)
// configure. Debug records are klog's -v=4.
func ksmLogger() *slog.Logger {
	klog.ClearLogger()
	return slog.New(logr.ToSlogHandler(klog.Background()))
}

// Run runs the exporter until ctx ends; a change of the options file or of
// the custom resource state config file that loads restarts it with the
// new settings, as kube-state-metrics restarts (the caches list again); a
// change that does not load is logged and the running exporter stays.
func (o *KubeStateMetricsOptions) Run(ctx context.Context) error {
	if o.flags.Help {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	log := ksmLogger()
	defer klog.Flush()
	for _, n := range append(o.notes, o.settings.notesOf()...) {
		log.Warn(n)
	}
	if o.settings.Kubeconfig == "" && o.settings.Apiserver == "" && !inCluster() {
		log.Warn("neither --kubeconfig nor --apiserver, and not in a cluster: the default kubeconfig is used (KUBECONFIG, ~/.kube/config), where kube-state-metrics would use an empty config")
	}
	if o.settings.AutoGoMemlimit {
		// The exporter's pacing of the collector keeps below it.
		setMemoryLimit(o.settings.AutoGoMemlimitRatio, log)
	}
	for {
		runCtx, cancel := context.WithCancel(ctx)
		next := o.watchFiles(runCtx, cancel, log)
		// The export Validate built and validated, logging through klog.
		e := o.export
		e.dropIn.logger = log
		err := e.Run(runCtx)
		cancel()
		n := next()
		if n == nil || ctx.Err() != nil {
			return err
		}
		log.Info("restarting with the changed options: the caches list again")
		*o = *n
	}
}

// inCluster reports whether the in-cluster config can be used.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

// watchFiles watches the options file and the custom resource state
// config file, until ctx ends. When one of them changes and the settings
// it gives load and validate, it cancels ctx with stop; next then returns
// the new options, and nil otherwise.
func (o *KubeStateMetricsOptions) watchFiles(ctx context.Context, stop context.CancelFunc, log *slog.Logger) (next func() *KubeStateMetricsOptions) {
	var mu sync.Mutex // guards found
	var found *KubeStateMetricsOptions
	next = func() *KubeStateMetricsOptions {
		mu.Lock()
		defer mu.Unlock()
		return found
	}
	var files []string
	if o.Config != "" {
		files = append(files, o.Config)
	}
	if f := o.settings.crsFile(); f != "" && o.settings.CustomResourceConfig == "" {
		files = append(files, f)
	}
	if len(files) == 0 {
		return next
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Error("the options files' changes will not be noticed", "err", err)
		return next
	}
	for _, f := range files {
		if err := w.Add(filepath.Dir(f)); err != nil {
			log.Error("the options files' changes will not be noticed", "file", f, "err", err)
		}
	}
	go func() {
		defer func() { _ = w.Close() }()
		var debounce <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Op != fsnotify.Chmod && slices.ContainsFunc(files, func(f string) bool {
					return filepath.Clean(ev.Name) == filepath.Clean(f) || filepath.Base(ev.Name) == "..data"
				}) {
					debounce = time.After(300 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("watching the options files", "err", err)
			case <-debounce:
				debounce = nil
				n, err := o.reread()
				if err != nil {
					log.Error("the changed options do not load: the running exporter keeps its settings", "err", err)
					continue
				}
				if n == nil {
					continue
				}
				mu.Lock()
				found = n
				mu.Unlock()
				log.Info("the options changed", "config", o.Config, "custom_resource_state_config_file", o.settings.crsFile())
				stop()
				return
			}
		}
	}()
	return next
}

// reread loads the files again; it returns nil when nothing they say
// changed.
func (o *KubeStateMetricsOptions) reread() (*KubeStateMetricsOptions, error) {
	n := &KubeStateMetricsOptions{IOStreams: o.IOStreams, Config: o.Config, flags: o.flags}
	settings, found, err := n.load()
	if err != nil {
		return nil, err
	}
	n.settings, n.fileFound = settings, found
	if n.crsData, n.crsName, err = n.settings.customResourceState(); err != nil {
		return nil, err
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if reflect.DeepEqual(n.settings, o.settings) && n.fileFound == o.fileFound && bytes.Equal(n.crsData, o.crsData) {
		return nil, nil
	}
	n.notes = nil
	return n, nil
}

// newKSMVersionCommand prints the version as kube-state-metrics lays it
// out, with the plugin's version and commit.
func newKSMVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			v := version.Get()
			_, err := fmt.Fprintf(streams.Out, "%s, version %s (served by kubectl-informer, revision: %s)\n  go version:       %s\n  platform:         %s/%s\n",
				KubeStateMetricsName, v.Version, v.Commit, v.GoVersion, runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// newKSMCompletionCommand writes a shell's completion script for the
// kube-state-metrics command line, as kube-state-metrics' completion
// subcommand does (bash, zsh, fish).
func newKSMCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                   "completion [bash|zsh|fish]",
		Short:                 "Print a shell's completion script",
		Long:                  "Print the completion script of bash, zsh or fish; load it with: source <(kube-state-metrics completion bash)",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"comp", "c"},
		ValidArgs:             []string{"bash", "zsh", "fish"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "bash":
				return cmd.Root().GenBashCompletion(streams.Out)
			case "zsh":
				return cmd.Root().GenZshCompletion(streams.Out)
			default:
				return cmd.Root().GenFishCompletion(streams.Out, true)
			}
		},
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/crs"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// ExportOptions runs the Prometheus exporter.
type ExportOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	ConfigFile  string
	Profile     string
	PrintConfig bool
	// kube-state-metrics' custom resource state flags, with its names,
	// and --convert-crs, which prints the config they translate to.
	CRSConfigFile string
	CRSConfig     string
	CRSOnly       bool
	ConvertCRS    string
	// The selection flags of kube-state-metrics, with its names.
	Resources            []string
	MetricAllowlist      []string
	MetricDenylist       []string
	MetricOptInList      []string
	LabelsAllowlist      string
	AnnotationsAllowlist string
	Namespaces           []string
	NamespacesDenylist   []string
	Host                 string
	Port                 int
	ListenAddresses      []string
	// listenAddressSet: --web.listen-address was given.
	listenAddressSet   bool
	WebConfigFile      string
	Shard              int
	TotalShards        int
	MaxSeriesPerMetric int
	EnablePprof        bool
	CostLimit          uint64
	Check              bool
	PrintRBAC          bool
	RBACName           string
	RBACNamespace      string
	Verbosity          int
	LogFormat          string

	// labels and annotations are the parsed allowlists.
	labels, annotations map[string][]string
	// crsData is the custom resource state config; crsName names it.
	crsData []byte
	crsName string
	// rbacNaming are the flags naming the objects of --print-rbac that
	// were given.
	rbacNaming []string
	// dropIn, when set, are the settings of kube-state-metrics' command
	// line that export has no flags of (see NewKubeStateMetricsCommand).
	dropIn *dropInSettings
}

// defaultListenAddress is where the exporter listens unless
// --web.listen-address says otherwise. Its port is none of Prometheus' own
// (9090 the server, 9091 the Pushgateway, 9093 and 9094 the Alertmanager)
// nor kube-state-metrics' (8080, 8081), which the exporter runs beside:
// exporters' ports follow the Prometheus wiki page "Default port
// allocations", whose range 9100-9999 is taken in full, and 10149 is one
// of the ports after it.
const defaultListenAddress = ":10149"

// NewExportCommand returns the "export" verb.
func NewExportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newExportCommand(streams)
	return cmd
}

func newExportCommand(streams genericiooptions.IOStreams) (*cobra.Command, *ExportOptions) {
	o := &ExportOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "export (--config FILE | --profile NAME) [flags]",
		Short: "Serve Prometheus metrics computed by CEL from informer caches",
		Long: `export runs a Prometheus exporter: it watches the resources of the config file
into informer caches and serves the metric families the config declares with CEL,
computed when objects change, on /metrics (text and OpenMetrics, gzip). It listens
at once; an API server that cannot be reached at start (refused, or silent for 10s)
does not end it: it tries again with a backoff of up to 30s, and /readyz answers
503 with the cause meanwhile. /healthz
answers while the process runs; /readyz answers 503 until every cache has synced
and while every resource's requests fail, and 200 otherwise, naming any resource
whose requests fail (forbidden, CRD deleted): it keeps its last series; and any
metric capped by --max-series-per-metric (off by default). SIGHUP or a change of the config
file reloads it; a config that fails to load leaves the running one in place.

With -n NAMESPACE, every entry of the config that lists no namespaces of its
own watches that namespace only, as kubectl's -n scopes a command; entries with
namespaces keep theirs, and cluster-scoped resources are watched whole. Without
-n, such entries watch every namespace, whatever the kubeconfig's context says.
A resource read with get() or byIndex() is watched in the namespaces of the
entries that read it and of its own entry (every namespace if one of them
watches every namespace or is cluster-scoped); get() of another namespace fails
as an evaluation error that names the fix.

With --profile kube-state-metrics, the exporter serves kube-state-metrics'
default metric families, exactly as it names and computes them, from CEL configs
built into the binary (--print-config prints them); --config then adds the
user's families in the same process and on the same caches. kube-state-metrics'
flags choose among them with its names and meanings: --resources,
--metric-allowlist or --metric-denylist (regular expressions over family names),
--metric-opt-in-list (regular expressions naming the opt-in families to serve:
kube_pod_nodeselectors, kube_persistentvolume_csi_attributes),
--metric-labels-allowlist and --metric-annotations-allowlist (the keys of the
kube_*_labels and kube_*_annotations families, such as 'pods=[app,team],*=[*]';
without them those families have no series), --namespaces and
--namespaces-denylist, --host and --port. See docs/kube-state-metrics-profile.md.

With --check, the config is compiled and validated, the metric families it would
expose are printed, and nothing else happens.

With --print-rbac, the resources the config reads (its entries and those its
expressions read with get() and byIndex()) are resolved through the API server's
discovery, and least-privilege RBAC for the exporter the same flags would run is
printed as YAML: a ServiceAccount, and list and watch on exactly those
resources, one rule per API group. A resource watched in every namespace and a
cluster-scoped one are granted by a ClusterRole; a namespaced resource watched
only in some namespaces (its entry's, those of -n, or for get() and byIndex()
those of the entries that read it) is granted by a Role in each of those
namespaces. No informer starts and nothing is served.

` + exitCodesHelp,
		Example: `  # Check a config without a cluster
  kubectl informer export --config examples/kube-state-metrics-pods.yaml --check

  # Print the RBAC it needs, for a ServiceAccount in monitoring, and apply it
  kubectl informer export --config examples/kube-state-metrics-pods.yaml --print-rbac --rbac-namespace monitoring | kubectl apply -f -

  # Export the pods of the namespace shop only, and print the Role that needs
  kubectl informer export --config examples/kube-state-metrics-pods.yaml -n shop
  kubectl informer export --config examples/kube-state-metrics-pods.yaml -n shop --print-rbac

  # Serve kube-state-metrics' families of pods and deployments, with the app label
  kubectl informer export --profile kube-state-metrics --resources pods,deployments --metric-labels-allowlist 'pods=[app]'

  # Print the profile's configs, to copy a family into your own config
  kubectl informer export --profile kube-state-metrics --print-config

  # Serve it on port 10149, the default
  kubectl informer export --config examples/kube-state-metrics-pods.yaml --web.listen-address :10149`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	f.StringVar(&o.ConfigFile, "config", "", "the exporter config file (required without --profile)")
	f.StringVar(&o.Profile, "profile", "", "serve a built-in profile's families: "+strings.Join(profiles.Names(), ", "))
	f.BoolVar(&o.PrintConfig, "print-config", false, "with --profile: print the profile's config files the selection flags keep, and exit")
	f.StringVar(&o.CRSConfigFile, "custom-resource-state-config-file", "", "a kube-state-metrics custom resource state config (CustomResourceStateMetrics) to serve, as kube-state-metrics serves it")
	f.StringVar(&o.CRSConfig, "custom-resource-state-config", "", "the same config inline, as YAML")
	f.BoolVar(&o.CRSOnly, "custom-resource-state-only", false, "as kube-state-metrics' flag: serve only the custom resource state metrics (no --profile)")
	f.StringVar(&o.ConvertCRS, "convert-crs", "", "print the exporter config a kube-state-metrics custom resource state config FILE translates to, and exit")
	f.StringSliceVar(&o.Resources, "resources", nil, "with --profile: the profile's resources to serve, comma-separated (default: kube-state-metrics' default resources)")
	f.StringSliceVar(&o.MetricAllowlist, "metric-allowlist", nil, "with --profile: serve only the families one of these regular expressions matches")
	f.StringSliceVar(&o.MetricDenylist, "metric-denylist", nil, "with --profile: do not serve the families these regular expressions match")
	f.StringSliceVar(&o.MetricOptInList, "metric-opt-in-list", nil, "with --profile: serve the opt-in families one of these regular expressions matches ("+strings.Join(profiles.OptInFamilies(profiles.KubeStateMetrics), ", ")+")")
	f.StringVar(&o.LabelsAllowlist, "metric-labels-allowlist", "", "the object labels made labels of the kube_*_labels families and other labelsFrom families, as RESOURCE=[KEY,...],... ('*=[*]': all)")
	f.StringVar(&o.AnnotationsAllowlist, "metric-annotations-allowlist", "", "the annotations made labels of the kube_*_annotations families and other labelsFrom families, as RESOURCE=[KEY,...],...")
	f.StringSliceVar(&o.Namespaces, "namespaces", nil, "watch these namespaces only (entries with namespaces of their own keep them); the list form of -n")
	f.StringSliceVar(&o.NamespacesDenylist, "namespaces-denylist", nil, "leave out these namespaces' objects from entries that watch every namespace")
	f.StringVar(&o.Host, "host", "", "with --port: the address to listen on, as kube-state-metrics' --host (instead of --web.listen-address)")
	f.IntVar(&o.Port, "port", 0, "the port to listen on, as kube-state-metrics' --port (instead of --web.listen-address)")
	f.StringSliceVar(&o.ListenAddresses, "web.listen-address", []string{defaultListenAddress}, "addresses to listen on (repeatable)")
	f.StringVar(&o.WebConfigFile, "web.config.file", "", "exporter-toolkit web config for TLS and basic auth")
	f.IntVar(&o.Shard, "shard", 0, "this replica's shard, 0 ≤ shard < --total-shards")
	f.IntVar(&o.TotalShards, "total-shards", 1, "number of shards; each keeps the objects whose UID hashes to it")
	f.IntVar(&o.MaxSeriesPerMetric, "max-series-per-metric", 0, "series per metric beyond which series are dropped, counted, logged and reported by /readyz (0: no cap)")
	f.BoolVar(&o.EnablePprof, "enable-pprof", false, "serve Go's runtime profiles under /debug/pprof/ (CPU and memory; served as /metrics is, with its TLS and auth)")
	addCostLimitFlag(f, &o.CostLimit)
	f.BoolVar(&o.Check, "check", false, "validate the config, print the metric families, and exit")
	f.BoolVar(&o.PrintRBAC, "print-rbac", false, "print least-privilege RBAC for the config's resources as YAML, and exit")
	f.StringVar(&o.RBACName, "rbac-name", "kubectl-informer-exporter", "with --print-rbac: the name of the ServiceAccount, roles and bindings")
	f.StringVar(&o.RBACNamespace, "rbac-namespace", "", "with --print-rbac: the ServiceAccount's namespace (default: the namespace of -n, else the kubeconfig's context)")
	f.IntVarP(&o.Verbosity, "v", "v", 0, "log verbosity: 0 info, 1 and more debug")
	f.StringVar(&o.LogFormat, "log.format", "logfmt", "log format: logfmt or json")
	registerExportCompletions(cmd, o)
	noFiles(cmd, "rbac-name")
	mustRegister(cmd, "rbac-namespace", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNamespaces(o.ConfigFlags, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd, o
}

// Complete records which of the flags that matter only with others were
// given.
func (o *ExportOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.listenAddressSet = cmd.Flags().Changed("web.listen-address")
	for _, name := range []string{"rbac-name", "rbac-namespace"} {
		if cmd.Flags().Changed(name) {
			o.rbacNaming = append(o.rbacNaming, name)
		}
	}
	switch {
	case o.CRSConfigFile != "" && o.CRSConfig != "":
		return usageErrorf("--custom-resource-state-config-file and --custom-resource-state-config: give one")
	case o.CRSConfigFile != "":
		data, err := os.ReadFile(o.CRSConfigFile)
		if err != nil {
			return usageErrorf("--custom-resource-state-config-file: %v", err)
		}
		o.crsData, o.crsName = data, o.CRSConfigFile
	case o.CRSConfig != "":
		o.crsData, o.crsName = []byte(o.CRSConfig), "--custom-resource-state-config"
	}
	return nil
}

// Validate checks the flags.
func (o *ExportOptions) Validate() error {
	if err := oneContext(o.ConfigFlags); err != nil {
		return err
	}
	if !o.PrintRBAC && len(o.rbacNaming) > 0 {
		return usageErrorf("--%s is only for --print-rbac", o.rbacNaming[0])
	}
	var errs []error
	if o.ConvertCRS != "" {
		return nil // it reads the file only
	}
	if o.ConfigFile == "" && o.Profile == "" && len(o.crsData) == 0 {
		errs = append(errs, fmt.Errorf("--config or --profile is required: the exporter config file (see docs/exporter-config.md), or a built-in profile (%s)", strings.Join(profiles.Names(), ", ")))
	}
	if o.CRSOnly && o.Profile != "" {
		errs = append(errs, errors.New("--custom-resource-state-only serves the custom resource state metrics alone: leave out --profile"))
	}
	if o.CRSOnly && len(o.crsData) == 0 {
		errs = append(errs, errors.New("--custom-resource-state-only needs --custom-resource-state-config-file or --custom-resource-state-config"))
	}
	errs = append(errs, o.validateSelection()...)
	if o.TotalShards < 1 || o.Shard < 0 || o.Shard >= o.TotalShards {
		errs = append(errs, fmt.Errorf("--shard %d --total-shards %d: want 0 ≤ shard < total-shards", o.Shard, o.TotalShards))
	}
	if o.MaxSeriesPerMetric < 0 {
		errs = append(errs, fmt.Errorf("--max-series-per-metric must be 0 (no cap) or positive, got %d", o.MaxSeriesPerMetric))
	}
	if ns := o.namespace(); ns != "" {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespace %q: %s", ns, strings.Join(msgs, "; ")))
		}
		if len(o.Namespaces) > 0 {
			errs = append(errs, errors.New("-n and --namespaces: give one"))
		}
	}
	for _, flag := range []struct {
		name string
		list []string
	}{{"namespaces", o.Namespaces}, {"namespaces-denylist", o.NamespacesDenylist}} {
		for _, ns := range flag.list {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("--%s %q: %s", flag.name, ns, strings.Join(msgs, "; ")))
			}
		}
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d: want a port, 1 to 65535", o.Port))
	}
	if o.Host != "" && o.Port == 0 {
		errs = append(errs, errors.New("--host needs --port"))
	}
	if o.Port != 0 && o.listenAddressSet {
		errs = append(errs, errors.New("--port and --web.listen-address both choose where to listen: give one"))
	}
	if o.LogFormat != "logfmt" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log.format %q: want logfmt or json", o.LogFormat))
	}
	if o.PrintConfig && (o.Check || o.PrintRBAC) {
		errs = append(errs, errors.New("--print-config, --check and --print-rbac: give one"))
	}
	if o.PrintRBAC {
		if o.Check {
			errs = append(errs, errors.New("--check and --print-rbac: give one"))
		}
		if msgs := validation.IsDNS1123Subdomain(o.RBACName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--rbac-name %q: %s", o.RBACName, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsDNS1123Label(o.RBACNamespace); o.RBACNamespace != "" && len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--rbac-namespace %q: %s", o.RBACNamespace, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// validateSelection checks the profile and the flags that choose its
// families; it parses the label allowlists into o.labels and
// o.annotations.
func (o *ExportOptions) validateSelection() []error {
	var errs []error
	if o.Profile == "" {
		for name, set := range map[string]bool{
			"print-config": o.PrintConfig, "resources": len(o.Resources) > 0, "metric-allowlist": len(o.MetricAllowlist) > 0,
			"metric-denylist": len(o.MetricDenylist) > 0, "metric-opt-in-list": len(o.MetricOptInList) > 0,
		} {
			if set {
				errs = append(errs, fmt.Errorf("--%s chooses among the families of a profile: give --profile %s", name, profiles.KubeStateMetrics))
			}
		}
	} else if !slices.Contains(profiles.Names(), o.Profile) {
		errs = append(errs, fmt.Errorf("--profile %q: the profiles are %s", o.Profile, strings.Join(profiles.Names(), ", ")))
	} else if _, err := o.selection().Validate(o.Profile); err != nil {
		errs = append(errs, err)
	}
	var err error
	if o.labels, err = exporter.ParseAllowlist(o.LabelsAllowlist); err != nil {
		errs = append(errs, fmt.Errorf("--metric-labels-allowlist %w", err))
	}
	if o.annotations, err = exporter.ParseAllowlist(o.AnnotationsAllowlist); err != nil {
		errs = append(errs, fmt.Errorf("--metric-annotations-allowlist %w", err))
	}
	return errs
}

// selection is the profile's selection of the flags.
func (o *ExportOptions) selection() exporter.Selection {
	return exporter.Selection{Resources: o.Resources, MetricAllowlist: o.MetricAllowlist, MetricDenylist: o.MetricDenylist, MetricOptInList: o.MetricOptInList}
}

// sources are the configs the flags name.
func (o *ExportOptions) sources() exporter.Sources {
	return exporter.Sources{ConfigPath: o.ConfigFile, Profile: o.Profile, Selection: o.selection(),
		CustomResourceState: o.crsData, CustomResourceStateName: o.crsName,
		LabelsAllowlist: o.labels, AnnotationsAllowlist: o.annotations}
}

// namespace is the namespace of -n, "" when not given: the entries
// without namespaces then watch every namespace, not the context's.
func (o *ExportOptions) namespace() string {
	if o.ConfigFlags == nil || o.ConfigFlags.Namespace == nil {
		return ""
	}
	return *o.ConfigFlags.Namespace
}

func (o *ExportOptions) logger() *slog.Logger { return newLogger(o.ErrOut, o.Verbosity, o.LogFormat) }

// newLogger returns the logger of a long-running verb: format is logfmt or
// json, verbosity 0 logs info and above, more logs debug too.
func newLogger(w io.Writer, verbosity int, format string) *slog.Logger {
	level := slog.LevelInfo
	if verbosity > 0 {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// gcPacing is the garbage collector's pacing while the caches fill and
// its target percentage once they have synced (see exporter.Options),
// unless GOGC says otherwise, which then holds throughout. A memory limit
// (GOMEMLIMIT, --auto-gomemlimit) stays the ceiling of both.
func gcPacing() (startup factory.FillPacing, steady int) {
	if !factory.Paced() {
		return factory.FillPacing{}, 0
	}
	return factory.DefaultFillPacing(), 25
}

// Run checks the config, or runs the exporter until SIGINT or SIGTERM.
func (o *ExportOptions) Run(ctx context.Context) error {
	if o.ConvertCRS != "" {
		return o.convertCRS()
	}
	o.warnSelection()
	if o.PrintConfig {
		return o.printConfig()
	}
	if o.Check {
		return o.check(ctx)
	}
	if o.PrintRBAC {
		return o.printRBAC()
	}
	// The exporter listens at once: /healthz answers while the config is
	// loaded, and /readyz says why it is not ready, such as an API server
	// that cannot be reached, which Start tries again with a backoff. A
	// config that cannot be loaded ends the command, as does Ctrl-C before
	// it is loaded (interrupted, as in query); once it is loaded, Ctrl-C or
	// SIGTERM stops the exporter with 0.
	return withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		opts, serve := o.exporterConfig()
		log := opts.Logger
		x, err := exporter.New(conn.Config, conn.Resolver, opts)
		if err != nil {
			return err
		}
		serveCtx, stopServing := context.WithCancel(ctx)
		defer stopServing()
		served := make(chan error, 1)
		go func() {
			served <- x.Serve(serveCtx, serve, log)
		}()
		startCtx, stopStarting := context.WithCancel(ctx)
		defer stopStarting()
		started := make(chan error, 1)
		go func() { started <- x.Start(startCtx) }()
		select {
		case err := <-served:
			// Listening failed (or ctx ended): the config is not loaded.
			stopStarting()
			if startErr := <-started; err == nil {
				err = startErr
			}
			return err
		case err := <-started:
			if err != nil {
				stopServing()
				// The start's error is the one reported.
				if serveErr := <-served; serveErr != nil {
					log.Debug("serving stopped", "err", serveErr)
				}
				var le *exporter.LoadError
				if errors.As(err, &le) {
					return &UsageError{Err: err}
				}
				return err
			}
		}
		if err := x.WatchReloads(ctx); err != nil {
			log.Warn("config changes will not be noticed; SIGHUP still reloads", "err", err)
		}
		return <-served
	})
}

// exporterConfig returns what the exporter runs with: its options and
// its server's config, from the flags as Validate left them (the label
// allowlists parsed) and, under kube-state-metrics' name, the drop-in's
// settings. It is the one place where flags become the exporter's
// settings, for export and for the drop-in alike.
func (o *ExportOptions) exporterConfig() (exporter.Options, exporter.ServeConfig) {
	log := o.logger()
	if o.dropIn != nil && o.dropIn.logger != nil {
		log = o.dropIn.logger
	}
	startupGC, steadyGC := gcPacing()
	opts := exporter.Options{
		Sources:            o.sources(),
		Namespaces:         o.Namespaces,
		NamespacesDenylist: o.NamespacesDenylist,
		MaxSeriesPerMetric: o.MaxSeriesPerMetric,
		Pprof:              o.EnablePprof,
		Shard:              exporter.Shard{Index: o.Shard, Total: o.TotalShards},
		Logger:             log,
		StartupPacing:      startupGC,
		SteadyGCPercent:    steadyGC,
		Namespace:          o.namespace(),
		EnvOptions:         o.envOptions(),
	}
	serve := exporter.ServeConfig{ListenAddresses: o.listenAddresses(), WebConfigFile: o.WebConfigFile}
	o.dropIn.apply(&opts, &serve)
	return opts, serve
}

// envOptions are the options of the CEL environment of the config's
// expressions: --cost-limit.
func (o *ExportOptions) envOptions() []indexers.Option { return costLimitOptions(o.CostLimit) }

// checkTimeout bounds each request --check sends to the cluster, unless
// --request-timeout says otherwise: a check must not hang on a cluster
// that does not answer.
const checkTimeout = "10s"

// load compiles the config file in a new CEL environment; a config that
// does not compile is a *UsageError. available, when not nil, says which
// of the profile's resources the server has (see exporter.Sources).
func (o *ExportOptions) load(available func(string) bool) (*indexers.Env, *exporter.Compiled, error) {
	env, err := indexers.NewEnv(o.envOptions()...)
	if err != nil {
		return nil, nil, err
	}
	s := o.sources()
	s.Available = available
	c, err := s.Load(env)
	if err != nil {
		return nil, nil, &UsageError{Err: err}
	}
	exporter.DefaultNamespace(c, append([]string{o.namespace()}, o.Namespaces...)...)
	exporter.ExcludeNamespaces(c, o.NamespacesDenylist...)
	return env, c, nil
}

// listenAddresses are those of --web.listen-address, or of --host and
// --port.
func (o *ExportOptions) listenAddresses() []string {
	if o.Port != 0 {
		return []string{net.JoinHostPort(o.Host, strconv.Itoa(o.Port))}
	}
	return o.ListenAddresses
}

// warnSelection says on stderr what a selection flag asks for that the
// profile does not serve: kube-state-metrics resources it has no families
// for yet, and opt-in patterns that match none of its opt-in families.
func (o *ExportOptions) warnSelection() {
	if o.Profile == "" {
		return
	}
	if unserved, err := o.selection().Validate(o.Profile); err == nil && len(unserved) > 0 {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: --resources: the %s profile has no families for %s yet; they are not served\n", o.Profile, strings.Join(unserved, ", "))
	}
	if unmatched := o.selection().UnmatchedOptIns(o.Profile); len(unmatched) > 0 {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: --metric-opt-in-list: %s matches none of the opt-in families of the %s profile (%s)\n",
			strings.Join(unmatched, ", "), o.Profile, strings.Join(profiles.OptInFamilies(o.Profile), ", "))
	}
}

// printConfig writes the profile's config files the selection keeps, as
// one YAML stream, each document headed by its file's name.
func (o *ExportOptions) printConfig() error {
	files, err := o.selection().Files(o.Profile)
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := fmt.Fprintf(o.Out, "---\n# %s\n%s", f.Path, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// check loads the config, checks it against the cluster's resources when
// a cluster can be reached, and prints the families it would expose.
// Without a cluster (no kubeconfig, or a server that cannot be reached)
// the expressions are checked dynamically and metrics that may serve
// duplicate series are only warned about, on stderr.
func (o *ExportOptions) check(ctx context.Context) error {
	env, c, err := o.load(nil)
	if err != nil {
		return err
	}
	warnings, err := o.checkCluster(ctx, env, c)
	warnings = append(warnings, c.UnusedAllowlistEntries(o.labels, o.annotations)...)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	if err != nil {
		return err
	}
	return exporter.Describe(o.Out, c)
}

// checkCluster checks c against the resources of the kubeconfig's cluster
// (see exporter.Compiled.CheckResources); without one, it returns the
// warnings of a check without a cluster.
func (o *ExportOptions) checkCluster(ctx context.Context, env *indexers.Env, c *exporter.Compiled) ([]string, error) {
	offline := func(why string) []string {
		return append([]string{"not checked against a cluster: " + why,
			"without a cluster, field names and value types are checked on each object once the exporter runs; give a kubeconfig (--kubeconfig, --context) to check them against the API server's OpenAPI schemas"},
			c.DuplicateSeries()...)
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return offline(err.Error()), nil
	}
	if raw.CurrentContext == "" && (o.ConfigFlags.Context == nil || *o.ConfigFlags.Context == "") &&
		(o.ConfigFlags.APIServer == nil || *o.ConfigFlags.APIServer == "") {
		return offline("no kubeconfig context"), nil
	}
	if _, err := o.ConfigFlags.ToRESTConfig(); err != nil {
		return offline(err.Error()), nil
	}
	if o.ConfigFlags.Timeout == nil || *o.ConfigFlags.Timeout == "" || *o.ConfigFlags.Timeout == "0" {
		timeout := checkTimeout
		o.ConfigFlags.Timeout = &timeout
	}
	var warnings []string
	err = withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		// One contact phase: the first request the server does not answer
		// within the request timeout makes the others fail at once, so
		// that a silent server costs the check the timeout once, not once
		// per discovery request.
		if conn.Bound != nil {
			defer conn.Bound(ctx, 0)()
		}
		infos, schemaErrs, err := exporter.ResolveResources(c, conn.Resolver)
		var serverErr *factory.ServerError
		switch {
		case errors.As(err, &serverErr):
			warnings = offline(strings.ReplaceAll(serverErr.Error(), "\n", "; "))
			return nil
		case err != nil:
			return err
		}
		for _, err := range schemaErrs {
			warnings = append(warnings, fmt.Sprintf("%v: its expressions are checked on each object once the exporter runs", err))
		}
		w, err := c.CheckResources(env, infos)
		warnings = append(warnings, w...)
		if err != nil {
			return &UsageError{Err: err}
		}
		return nil
	})
	return warnings, err
}

// printRBAC resolves the resources of the config through discovery and
// prints the RBAC the exporter needs for them. It starts no informer.
func (o *ExportOptions) printRBAC() error {
	resolver, err := factory.NewResolverFor(o.ConfigFlags)
	if err != nil {
		return err
	}
	// The profile's resources the server does not have are left out, as
	// the exporter leaves them out.
	_, c, err := o.load(func(resource string) bool {
		_, err := resolver.ResolveOne(resource)
		return !factory.IsUnknownResource(err)
	})
	if err != nil {
		return err
	}
	for _, res := range c.Unavailable {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: the API server does not have %s, a resource of the %s profile: its families are not served, and it gets no rule\n", res, o.Profile)
	}
	namespace := o.RBACNamespace
	if namespace == "" {
		if namespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return err
		}
	}
	resolved, err := exporter.ResolveRBACResources(c, resolver)
	if err != nil {
		var serverErr *factory.ServerError
		if errors.As(err, &serverErr) {
			return err
		}
		return &UsageError{Err: err}
	}
	objs, err := exporter.RBAC(c, resolved, exporter.RBACOptions{Name: o.RBACName, Namespace: namespace})
	if err != nil {
		return &UsageError{Err: err}
	}
	return objs.WriteYAML(o.Out)
}

// convertCRS prints the exporter config that the custom resource state
// config of --convert-crs translates to; it compiles it first, so that what
// it prints loads.
func (o *ExportOptions) convertCRS() error {
	data, err := os.ReadFile(o.ConvertCRS)
	if err != nil {
		return usageErrorf("--convert-crs: %v", err)
	}
	out, err := crs.Convert(o.ConvertCRS, data)
	if err != nil {
		return &UsageError{Err: err}
	}
	env, err := indexers.NewEnv(o.envOptions()...)
	if err != nil {
		return err
	}
	if _, err := exporter.Compile(o.ConvertCRS+" (translated)", out, env); err != nil {
		return &UsageError{Err: err}
	}
	_, err = o.Out.Write(out)
	return err
}

package app

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// dropInCRS is a custom resource state config for the cases below.
const dropInCRS = `kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind: {group: "", version: v1, kind: ConfigMap}
      metricNamePrefix: t_configmap
      labelsFromPath: {name: [metadata, name]}
      metrics:
        - name: generation
          help: the generation of a ConfigMap
          each:
            type: Gauge
            gauge: {path: [metadata], valueFrom: [generation], nilIsZero: true}
`

// notExporterSettings are the settings of kube-state-metrics' command
// line that do not become the exporter's options or its server's config,
// and the test that checks each.
var notExporterSettings = map[string]string{
	"Apiserver":              "the connection: kubectl's --server of the ConfigFlags",
	"Kubeconfig":             "the connection: the ConfigFlags' kubeconfig (every test of test/e2e/ksm)",
	"ContinueWithoutConfig":  "whether a missing --config ends the command (TestKubeStateMetricsOptionsFile)",
	"ContinueWithoutCRSFile": "whether a missing custom resource state file ends the command (TestCustomResourceStateFileLater)",
	"AutoGoMemlimit":         "the process's memory limit (TestAutoGomemlimit)",
	"AutoGoMemlimitRatio":    "the process's memory limit (TestAutoGomemlimit)",
	"Help":                   "printing the help",
}

// TestDropInConfigAsExport checks the one path from kube-state-metrics'
// command line to the exporter, the one Run takes (Complete, Validate,
// and the export Validate built): each setting given to the drop-in
// reaches the exporter's options and server config as export's
// equivalent flags bring it there, and changes them, so that no
// translated setting can be dropped unseen. Every field of ksmSettings
// must be changed by a case here or be named in notExporterSettings.
func TestDropInConfigAsExport(t *testing.T) {
	dir := t.TempDir()
	crsFile := filepath.Join(dir, "crs.yaml")
	writeFile(t, crsFile, dropInCRS)
	optionsFile := filepath.Join(dir, "options.yaml")
	crsOptionsFile := filepath.Join(dir, "crs-options.yaml")
	writeFile(t, crsOptionsFile, "custom_resource_config_file: "+crsFile+"\n")
	writeFile(t, optionsFile, "labels_allow_list:\n  pods: [app]\n  '*': [team]\nannotations_allow_list:\n  deployments: ['*']\nresources:\n  pods: {}\n  deployments: {}\n")
	listen := "--web.listen-address=[::]:8080"
	cases := []struct {
		ksm []string
		// export are export's flags of the same meaning, after
		// --profile kube-state-metrics; nil: the setting is the drop-in's
		// own, which export has no flag of.
		export []string
		// noProfile: export is run without --profile.
		noProfile bool
	}{
		{ksm: []string{"--resources=pods,services"}, export: []string{"--resources=pods,services"}},
		{ksm: []string{"--metric-allowlist=kube_pod_.*,kube_service_info"}, export: []string{"--metric-allowlist=kube_pod_.*,kube_service_info"}},
		{ksm: []string{"--metric-denylist=kube_pod_.*"}, export: []string{"--metric-denylist=kube_pod_.*"}},
		{ksm: []string{"--metric-opt-in-list=kube_pod_nodeselectors"}, export: []string{"--metric-opt-in-list=kube_pod_nodeselectors"}},
		{ksm: []string{"--metric-labels-allowlist=pods=[app,team],*=[tier]"}, export: []string{"--metric-labels-allowlist=pods=[app,team],*=[tier]"}},
		{ksm: []string{"--metric-annotations-allowlist=deployments=[*]"}, export: []string{"--metric-annotations-allowlist=deployments=[*]"}},
		{ksm: []string{"--config=" + optionsFile}, export: []string{"--resources=deployments,pods",
			"--metric-labels-allowlist=*=[team],pods=[app]", "--metric-annotations-allowlist=deployments=[*]"}},
		{ksm: []string{"--namespaces=a,b"}, export: []string{"--namespaces=a,b"}},
		{ksm: []string{"--namespaces=a,b,c", "--namespaces-denylist=c"}, export: []string{"--namespaces=a,b", "--namespaces-denylist=c"}},
		{ksm: []string{"--namespaces-denylist=kube-system"}, export: []string{"--namespaces-denylist=kube-system"}},
		{ksm: []string{"--shard=1", "--total-shards=3"}, export: []string{"--shard=1", "--total-shards=3"}},
		{ksm: []string{"--host=127.0.0.1", "--port=9000"}, export: []string{"--web.listen-address=127.0.0.1:9000"}},
		{ksm: []string{"--tls-config=web.yaml"}, export: []string{"--web.config.file=web.yaml"}},
		{ksm: []string{"--custom-resource-state-config=" + dropInCRS}, export: []string{"--custom-resource-state-config=" + dropInCRS}},
		{ksm: []string{"--custom-resource-state-config-file=" + crsFile}, export: []string{"--custom-resource-state-config-file=" + crsFile}},
		{ksm: []string{"--config=" + crsOptionsFile}, export: []string{"--custom-resource-state-config-file=" + crsFile}},
		{ksm: []string{"--custom-resource-state-only", "--custom-resource-state-config=" + dropInCRS},
			export: []string{"--custom-resource-state-only", "--custom-resource-state-config=" + dropInCRS}, noProfile: true},
		// The drop-in's own settings.
		{ksm: []string{"--telemetry-host=127.0.0.1", "--telemetry-port=9001"}},
		{ksm: []string{"--pod=ksm-0", "--pod-namespace=monitoring"}},
		{ksm: []string{"--node=n1", "--resources=pods"}},
		{ksm: []string{"--track-unscheduled-pods"}},
		{ksm: []string{"--use-apiserver-cache"}},
		{ksm: []string{"--object-limit=10"}},
		{ksm: []string{"--auth-filter"}},
		{ksm: []string{"--enable-gzip-encoding"}},
		{ksm: []string{"--server-read-header-timeout=1s", "--server-read-timeout=2s", "--server-write-timeout=3s", "--server-idle-timeout=4s"}},
		{ksm: []string{"--custom-resource-state-config-file=" + filepath.Join(dir, "later.yaml"), "--continue-without-custom-resource-state-config-file"}},
	}
	base := completeKSM(t)
	baseOpts, baseServe := comparableConfig(base.export.exporterConfig())
	changed := map[string]bool{}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.ksm), func(t *testing.T) {
			o := completeKSM(t, c.ksm...)
			for _, f := range changedSettings(base.settings, o.settings) {
				changed[f] = true
			}
			opts, serve := comparableConfig(o.export.exporterConfig())
			if reflect.DeepEqual(opts, baseOpts) && reflect.DeepEqual(serve, baseServe) {
				t.Errorf("%v changes neither the exporter's options nor its server config", c.ksm)
			}
			if c.export == nil {
				return
			}
			args := c.export
			if !hasFlag(args, "--web.listen-address") {
				args = append([]string{listen}, args...)
			}
			if !c.noProfile {
				args = append(args, "--profile=kube-state-metrics")
			}
			e := completeExport(t, args...)
			// The drop-in's own settings, which export has no flags of.
			e.dropIn = o.export.dropIn
			wantOpts, wantServe := comparableConfig(e.exporterConfig())
			if !reflect.DeepEqual(opts, wantOpts) {
				t.Errorf("kube-state-metrics %v gives the exporter\n%+v\nexport %v gives it\n%+v", c.ksm, opts, args, wantOpts)
			}
			if !reflect.DeepEqual(serve, wantServe) {
				t.Errorf("kube-state-metrics %v gives the server\n%+v\nexport %v gives it\n%+v", c.ksm, serve, args, wantServe)
			}
		})
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[ksmSettings]()) {
		if !changed[f.Name] && notExporterSettings[f.Name] == "" {
			t.Errorf("setting %s (%s) is changed by no case of this test and is not among notExporterSettings: add a case that gives it", f.Name, f.Tag.Get("yaml"))
		}
	}
}

// hasFlag reports whether args give flag (--flag=value).
func hasFlag(args []string, flag string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, flag+"=") })
}

// changedSettings are the names of the fields of b that differ from a's.
func changedSettings(a, b ksmSettings) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i, f := range reflect.VisibleFields(va.Type()) {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// comparableConfig returns opts and serve without what cannot be compared: the
// logger, and the CEL environment's options (functions), whose number is
// kept.
func comparableConfig(opts exporter.Options, serve exporter.ServeConfig) (exporter.Options, exporter.ServeConfig) {
	opts.Logger = nil
	opts.EnvOptions = make([]indexers.Option, len(opts.EnvOptions))
	return opts, serve
}

// completeExport parses args as export does and completes and validates
// them.
func completeExport(t *testing.T, args ...string) *ExportOptions {
	t.Helper()
	cmd, o := newExportCommand(genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := o.Complete(cmd, nil); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return o
}

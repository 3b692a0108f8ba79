package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
)

// ksmFlags are the flags of `kube-state-metrics -h` of v2.20
// (docs/developer/cli-arguments.md), with the default each prints ("" for
// none) and its shorthand.
var ksmFlags = []struct{ name, def, short string }{
	{"add_dir_header", "false", ""},
	{"alsologtostderr", "false", ""},
	{"alsologtostderrthreshold", "0", ""}, // INFO, which -h does not print
	{"apiserver", "", ""},
	{"auth-filter", "false", ""},
	{"auto-gomemlimit", "false", ""},
	{"auto-gomemlimit-ratio", "0.9", ""},
	{"config", "", ""},
	{"continue-without-config", "false", ""},
	{"continue-without-custom-resource-state-config-file", "false", ""},
	{"custom-resource-state-config", "", ""},
	{"custom-resource-state-config-file", "", ""},
	{"custom-resource-state-only", "false", ""},
	{"enable-gzip-encoding", "false", ""},
	{"help", "false", "h"},
	{"host", "::", ""},
	{"kubeconfig", "", ""},
	{"legacy_stderr_threshold_behavior", "true", ""},
	{"log_backtrace_at", ":0", ""},
	{"log_dir", "", ""},
	{"log_file", "", ""},
	{"log_file_max_size", "1800", ""},
	{"logtostderr", "true", ""},
	{"metric-allowlist", "", ""},
	{"metric-annotations-allowlist", "", ""},
	{"metric-denylist", "", ""},
	{"metric-labels-allowlist", "", ""},
	{"metric-opt-in-list", "", ""},
	{"namespaces", "", ""},
	{"namespaces-denylist", "", ""},
	{"node", "", ""},
	{"object-limit", "0", ""},
	{"one_output", "false", ""},
	{"pod", "", ""},
	{"pod-namespace", "", ""},
	{"port", "8080", ""},
	{"resources", "", ""},
	{"server-idle-timeout", "5m0s", ""},
	{"server-read-header-timeout", "5s", ""},
	{"server-read-timeout", "1m0s", ""},
	{"server-write-timeout", "1m0s", ""},
	{"shard", "0", ""},
	{"skip_headers", "false", ""},
	{"skip_log_headers", "false", ""},
	{"stderrthreshold", "2", ""},
	{"telemetry-host", "::", ""},
	{"telemetry-port", "8081", ""},
	{"tls-config", "", ""},
	{"total-shards", "1", ""},
	{"track-unscheduled-pods", "false", ""},
	{"use-apiserver-cache", "false", ""},
	{"v", "0", "v"},
	{"vmodule", "", ""},
}

// TestKubeStateMetricsFlags checks that the command called
// kube-state-metrics has each of kube-state-metrics' flags with its
// default and shorthand, and that each of them, given with its default,
// leaves the settings as they are without it.
func TestKubeStateMetricsFlags(t *testing.T) {
	cmd, _ := newKubeStateMetricsCommand(genericiooptions.NewTestIOStreamsDiscard())
	for _, f := range ksmFlags {
		fl := cmd.Flags().Lookup(f.name)
		if fl == nil {
			t.Errorf("--%s is missing", f.name)
			continue
		}
		if fl.DefValue != f.def {
			t.Errorf("--%s defaults to %q, want %q", f.name, fl.DefValue, f.def)
		}
		if fl.Shorthand != f.short {
			t.Errorf("--%s has shorthand %q, want %q", f.name, fl.Shorthand, f.short)
		}
	}
	var args []string
	for _, f := range ksmFlags {
		// -h prints help; log_backtrace_at takes no ":0" back.
		if f.def != "" && f.name != "help" && f.name != "log_backtrace_at" {
			args = append(args, "--"+f.name+"="+f.def)
		}
	}
	if got, want := completeKSM(t, args...).settings, completeKSM(t).settings; !reflect.DeepEqual(got, want) {
		t.Errorf("the defaults given as flags (%v) give\n%+v\nwant\n%+v", args, got, want)
	}
	for _, sub := range []string{"version", "completion"} {
		if c, _, err := cmd.Find([]string{sub}); err != nil || c.Name() != sub {
			t.Errorf("no %s subcommand: %v", sub, err)
		}
	}
}

// TestKubeStateMetricsSettings checks what the flags turn into: the
// export they run and the exporter's options and server config.
func TestKubeStateMetricsSettings(t *testing.T) {
	o := completeKSM(t, "--port=9000", "--host=127.0.0.1", "--telemetry-port=0", "--telemetry-host=127.0.0.2",
		"--resources=pods,deployments", "--metric-denylist=kube_pod_info,kube_deployment_.*",
		"--metric-labels-allowlist=pods=[app]", "--namespaces=a,b,c", "--namespaces-denylist=c",
		"--node=n1", "--resources=pods", "--use-apiserver-cache", "--object-limit=7", "--pod=ksm-1", "--pod-namespace=monitoring",
		"--enable-gzip-encoding", "--auth-filter", "--server-read-timeout=2m", "--tls-config=web.yaml", "--shard=1", "--total-shards=3")
	e := o.export
	if got := e.ListenAddresses; !slices.Equal(got, []string{"127.0.0.1:9000"}) {
		t.Errorf("listen addresses %v", got)
	}
	if !slices.Equal(e.Resources, []string{"pods"}) || !slices.Equal(e.MetricDenylist, []string{"kube_pod_info", "kube_deployment_.*"}) ||
		!slices.Equal(e.Namespaces, []string{"a", "b"}) || !slices.Equal(e.NamespacesDenylist, []string{"c"}) ||
		e.LabelsAllowlist != "pods=[app]" || e.Profile != "kube-state-metrics" || e.WebConfigFile != "web.yaml" || e.Shard != 1 || e.TotalShards != 3 {
		t.Errorf("export options: %+v", e)
	}
	var opts exporter.Options
	var serve exporter.ServeConfig
	e.dropIn.apply(&opts, &serve)
	want := exporter.Options{KubeStateMetrics: true, Node: "n1", UseAPIServerCache: true, ObjectLimit: 7,
		AutoShard: exporter.AutoShard{Pod: "ksm-1", Namespace: "monitoring"}}
	if opts.KubeStateMetrics != want.KubeStateMetrics || opts.Node != want.Node || opts.UseAPIServerCache != want.UseAPIServerCache ||
		opts.ObjectLimit != want.ObjectLimit || opts.AutoShard != want.AutoShard || opts.UnscheduledPods {
		t.Errorf("exporter options %+v", opts)
	}
	wantTimeouts := ksmDefaultTimeouts
	wantTimeouts.Read = 2 * time.Minute
	if !slices.Equal(serve.TelemetryAddresses, []string{"127.0.0.2:0"}) || serve.NoGzip || !serve.AuthFilter || serve.Timeouts != wantTimeouts {
		t.Errorf("serve config %+v", serve)
	}

	// Defaults: both listeners on every address, gzip off.
	e = completeKSM(t).export
	e.dropIn.apply(&opts, &serve)
	if !slices.Equal(e.ListenAddresses, []string{"[::]:8080"}) || !slices.Equal(serve.TelemetryAddresses, []string{"[::]:8081"}) ||
		!serve.NoGzip || serve.AuthFilter || serve.Timeouts != ksmDefaultTimeouts || opts.AutoShard != (exporter.AutoShard{}) {
		t.Errorf("defaults: listen %v, serve %+v, options %+v", e.ListenAddresses, serve, opts)
	}
}

// completeKSM parses args as the command called kube-state-metrics does
// and completes and validates them.
func completeKSM(t *testing.T, args ...string) *KubeStateMetricsOptions {
	t.Helper()
	cmd, o := newKubeStateMetricsCommand(genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := o.Complete(cmd); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return o
}

// TestKubeStateMetricsOptionsFile checks kube-state-metrics' options
// file: its keys override the flags, whole lists replace the flags' lists,
// in kube-state-metrics' map form or as lists, and the keys it does not
// know are said once.
func TestKubeStateMetricsOptionsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "options.yaml")
	writeFile(t, path, `port: 9100
telemetry_port: 9101
resources:
  pods: {}
  services: {}
metric_allowlist: [kube_pod_info, kube_service_info]
labels_allow_list:
  pods: [app, team]
namespaces: [shop]
server_read_timeout: 30s
object_limit: 5
use_api_server_cache: true
auto-gomemlimit-ratio: 0.5
pod: ksm-0
namespace: monitoring
no_such_option: 1
`)
	o := completeKSM(t, "--config", path, "--port=8000", "--resources=deployments", "--metric-allowlist=kube_deployment_labels", "--host=127.0.0.1")
	s := o.settings
	if s.Port != 9100 || s.TelemetryPort != 9101 || s.Host != "127.0.0.1" || !slices.Equal(s.Resources, []string{"pods", "services"}) ||
		!slices.Equal(s.MetricAllowlist, []string{"kube_pod_info", "kube_service_info"}) || string(s.LabelsAllowList) != "pods=[app,team]" ||
		!slices.Equal(s.Namespaces, []string{"shop"}) || s.ServerReadTimeout != 30*time.Second || s.ObjectLimit != 5 || !s.UseAPIServerCache ||
		s.AutoGoMemlimitRatio != 0.5 || s.Pod != "ksm-0" || s.PodNamespace != "monitoring" {
		t.Errorf("settings %+v", s)
	}
	if o.flags.Port != 8000 {
		t.Errorf("the flags' settings changed: port %d", o.flags.Port)
	}
	if len(o.notes) != 1 || !strings.Contains(o.notes[0], `"no_such_option"`) {
		t.Errorf("notes %q, want one naming no_such_option", o.notes)
	}

	// A missing file fails, unless --continue-without-config.
	missing := filepath.Join(dir, "missing.yaml")
	cmd, mo := newKubeStateMetricsCommand(genericiooptions.NewTestIOStreamsDiscard())
	_ = cmd.ParseFlags([]string{"--config", missing})
	if err := mo.Complete(cmd); err == nil || !strings.Contains(err.Error(), "--continue-without-config") {
		t.Errorf("missing --config: %v, want an error naming --continue-without-config", err)
	}
	o = completeKSM(t, "--config", missing, "--continue-without-config", "--port=8000")
	if o.settings.Port != 8000 || len(o.notes) != 1 {
		t.Errorf("missing file with --continue-without-config: port %d, notes %q", o.settings.Port, o.notes)
	}
	// Once it appears, reread finds it.
	writeFile(t, missing, "port: 8001\n")
	n, err := o.reread()
	if err != nil || n == nil || n.settings.Port != 8001 {
		t.Fatalf("reread: %v, %+v", err, n)
	}
	if n2, err := n.reread(); err != nil || n2 != nil {
		t.Errorf("reread of an unchanged file: %v, %v, want nothing", n2, err)
	}
	writeFile(t, missing, "port: [\n")
	if _, err := n.reread(); err == nil {
		t.Error("reread of an invalid file: no error")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKubeStateMetricsBadValues checks that bad values end the command
// with ExitUsage and a message naming the flag.
func TestKubeStateMetricsBadValues(t *testing.T) {
	dir := t.TempDir()
	badFile := filepath.Join(dir, "bad.yaml")
	writeFile(t, badFile, "port: eighty\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port=-1"}, "--port -1"},
		{[]string{"--port=70000"}, "--port 70000"},
		{[]string{"--telemetry-port=-5"}, "--telemetry-port -5"},
		{[]string{"--port=http"}, `invalid argument "http" for "--port"`},
		{[]string{"--auto-gomemlimit-ratio=0"}, "--auto-gomemlimit-ratio 0"},
		{[]string{"--auto-gomemlimit-ratio=1.5"}, "--auto-gomemlimit-ratio 1.5"},
		{[]string{"--object-limit=-1"}, "--object-limit -1"},
		{[]string{"--node=n1", "--resources=pods,deployments"}, `resource "deployments" cannot be selected`},
		{[]string{"--shard=3", "--total-shards=2"}, "--shard 3 --total-shards 2"},
		{[]string{"--server-read-timeout=-1s"}, "--server-read-timeout -1s"},
		{[]string{"--metric-allowlist=a", "--metric-denylist=b"}, "--metric-allowlist"},
		{[]string{"--metric-labels-allowlist=pods=[app"}, "--metric-labels-allowlist"},
		{[]string{"--resources=pods,nosuchthings"}, "nosuchthings"},
		{[]string{"--namespaces=Bad_NS"}, `--namespaces "Bad_NS"`},
		{[]string{"--custom-resource-state-only"}, "--custom-resource-state-only needs"},
		{[]string{"--namespaces=a", "--namespaces-denylist=a"}, "leaves out every namespace"},
		{[]string{"--custom-resource-state-config-file", filepath.Join(dir, "nope.yaml")}, "--continue-without-custom-resource-state-config-file"},
		{[]string{"--config", badFile}, badFile},
		{[]string{"--v=loud"}, `"-v, --v"`},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"version", "extra"}, "unknown command"},
		{[]string{"completion", "tcsh"}, "invalid argument"},
	} {
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &errOut}
		cmd := NewCommandFor("kube-state-metrics", streams)
		cmd.SetArgs(tc.args)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // nothing may run
		cmd.SetContext(ctx)
		if code := Execute(cmd, streams); code != ExitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), ExitUsage, tc.want)
		}
	}
}

// TestCommandFor checks that the binary speaks kube-state-metrics' command
// line under that name only.
func TestCommandFor(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	for name, want := range map[string]string{"kube-state-metrics": "kube-state-metrics", "kube-state-metrics.exe": "kube-state-metrics",
		"kubectl-informer": "kubectl-informer", "kubectl-informer.exe": "kubectl-informer"} {
		if got := NewCommandFor(name, streams).Name(); got != want {
			t.Errorf("%s runs %s, want %s", name, got, want)
		}
	}
	var out bytes.Buffer
	cmd := NewCommandFor("kube-state-metrics", genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &bytes.Buffer{}})
	cmd.SetArgs([]string{"version"})
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "kube-state-metrics, version ") {
		t.Errorf("version: %v, %q", err, out.String())
	}
	out.Reset()
	cmd = NewCommandFor("kube-state-metrics", genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &bytes.Buffer{}})
	cmd.SetArgs([]string{"completion", "bash"})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "kube-state-metrics") {
		t.Errorf("completion bash: %v, %d bytes", err, out.Len())
	}
}

// TestSystemMemory reads MemTotal from a meminfo file.
func TestSystemMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	writeFile(t, path, "MemTotal:       16315412 kB\nMemFree:         1000 kB\n")
	if got, err := systemMemory(path); err != nil || got != 16315412*1024 {
		t.Errorf("systemMemory: %d, %v", got, err)
	}
	writeFile(t, path, "MemFree: 1 kB\n")
	if _, err := systemMemory(path); err == nil {
		t.Error("no MemTotal: no error")
	}
}

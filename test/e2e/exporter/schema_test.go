package exporter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// misspelled reads two fields that pods do not have and a value that is a
// string: with the schema of pods, none of it can load.
const misspelled = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: test_pod_node_info
    help: The node of a pod.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      node: object.spec.nodeNme
  - name: test_pod_running
    help: Whether a pod runs.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
    value: object.status.phse == "Running"
  - name: test_pod_phase
    help: The phase of a pod.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
    value: object.status.phase
`

const misspelledErrors = `CONFIG:12: metric "test_pod_node_info" label "node": invalid expression: undefined field 'nodeNme' (did you mean "nodeName"?)
 | object.spec.nodeNme
 |             ^
CONFIG:19: metric "test_pod_running" value: invalid expression: undefined field 'phse' (did you mean "phase"?)
 | object.status.phse == "Running"
 |               ^
CONFIG:26: metric "test_pod_phase" value: invalid expression: must evaluate to a number or bool (or null, or an optional of one) but got string`

// duplicated has a metric whose labels do not tell pods apart.
const duplicated = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: test_pod_phase
    help: The phase of pods.
    type: gauge
    labels:
      phase: object.status.phase
`

const duplicatedError = `CONFIG:9: metric "test_pod_phase": the labels (phase) do not tell the objects of pods apart: objects with the same label values would serve the same series; set aggregate: count to count them, or add labels that identify each object, such as namespace: object.metadata.namespace and name: object.metadata.name`

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadChecksSchema starts exporters whose configs the schemas of the
// API server refute: each refuses to start, with every mistake, instead of
// becoming ready and counting evaluation errors.
func TestLoadChecksSchema(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"misspelled", misspelled, misspelledErrors},
		{"duplicated", duplicated, duplicatedError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.config)
			x, err := exporter.New(cluster.Config, cluster.Resolver(t), exporter.Options{Sources: exporter.Sources{ConfigPath: path}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err = x.Start(ctx)
			if err == nil {
				t.Fatal("the exporter started")
			}
			var le *exporter.LoadError
			if !errors.As(err, &le) {
				t.Errorf("error %T, want a *exporter.LoadError", err)
			}
			if got, want := err.Error(), strings.ReplaceAll(tt.want, "CONFIG", path); got != want {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestCheckWithCluster runs export --check with the test cluster's
// kubeconfig: the expressions are checked against its schemas and the
// labels against the scope of its resources.
func TestCheckWithCluster(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"misspelled", misspelled, misspelledErrors},
		{"duplicated", duplicated, duplicatedError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.config)
			code, out, errOut := framework.RunPlugin(context.Background(), nil, "export", "--kubeconfig", cluster.Kubeconfig, "--config", path, "--check")
			want := "error: " + strings.ReplaceAll(tt.want, "CONFIG", path) + "\n"
			if code != 2 || out != "" || errOut != want {
				t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant 2, no output and:\n%s", code, out, errOut, want)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		path := writeConfig(t, config)
		code, out, errOut := framework.RunPlugin(context.Background(), nil, "export", "--kubeconfig", cluster.Kubeconfig, "--config", path, "--check")
		want := `RESOURCE   METRIC                     TYPE    AGGREGATE   LABELS
pods       test_pod_info              info    <none>      namespace,node,phase,pod,zone
pods       test_pods_per_node_phase   gauge   count       node,phase
`
		if code != 0 || out != want || errOut != "" {
			t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant 0, no warning and:\n%s", code, out, errOut, want)
		}
	})
}

// TestCheckWithoutCluster runs export --check without a kubeconfig: the
// config loads, and what could not be checked is said on stderr.
func TestCheckWithoutCluster(t *testing.T) {
	path := writeConfig(t, misspelled)
	kubeconfig := filepath.Join(t.TempDir(), "none")
	code, out, errOut := framework.RunPlugin(context.Background(), nil, "export", "--kubeconfig", kubeconfig, "--config", path, "--check")
	want := `warning: not checked against a cluster: stat ` + kubeconfig + `: no such file or directory
warning: without a cluster, field names and value types are checked on each object once the exporter runs; give a kubeconfig (--kubeconfig, --context) to check them against the API server's OpenAPI schemas
`
	if code != 0 || errOut != want || !strings.Contains(out, "test_pod_phase") {
		t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant 0, the families and:\n%s", code, out, errOut, want)
	}
}

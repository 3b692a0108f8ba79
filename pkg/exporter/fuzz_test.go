package exporter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// FuzzConfig feeds arbitrary files to the config loader: a file is either
// refused with an error that names it, or compiles into families whose
// series can be computed for a pod and written out; nothing panics.
func FuzzConfig(f *testing.F) {
	examples, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range examples {
		data, err := os.ReadFile(path) //nolint:gosec // G304: the repository's example configs
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"", "{}", "[]", "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\n",
		"apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n- resource: pods\n  metrics:\n  - name: x\n    help: h\n    type: gauge\n    each: '[1,2]'\n    labels: {n: 'string(each)'}\n    value: each\n",
		"apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n- resource: pods\n  metrics:\n  - name: x\n    help: h\n    type: gauge\n    aggregate: sum\n    labels: {n: object.metadata.name}\n    value: size(object.metadata.name)\n",
		"apiVersion: v1\nkind: ExporterConfig\nresources: &a [*a]\n", "resources:\n- resource: pods\n  resource: nodes\n", "\t", "---\n---\n",
	} {
		f.Add([]byte(seed))
	}
	env, err := indexers.NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "shop", "name": "web-0", "uid": "u-1", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "app", "image": "nginx"}}},
		"status":   map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{"name": "app", "restartCount": int64(2)}}},
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Compile("fuzz.yaml", data, env)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		e := NewEngine(c, EngineOptions{MaxSeriesPerMetric: 1000, Workers: 1})
		defer e.Close()
		for i := range c.Resources {
			e.Update(i, obj)
			e.Delete(i, obj)
			e.Update(i, obj)
		}
		var b bytes.Buffer
		if err := e.WriteFamilies(&b, false); err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := parser.TextToMetricFamilies(bytes.NewReader(b.Bytes())); err != nil {
			t.Fatalf("the exposition does not parse: %v\n%s", err, b.String())
		}
	})
}

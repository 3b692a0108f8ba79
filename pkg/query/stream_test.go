package query

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
)

// awkwardPod is a pod whose strings and values test the encoders: long
// texts with blanks (which YAML may fold), HTML characters (which JSON
// escapes), several lines, text YAML would read as another type, unicode,
// empty maps and lists.
func awkwardPod(i int) *corev1.Pod {
	p := pod("shop", fmt.Sprintf("awkward-%03d", i), "n1", corev1.PodRunning, int32(i%7), time.Duration(i)*time.Minute, "nginx", "envoy")
	p.Annotations = map[string]string{
		"description":                 strings.Repeat("a long text with blanks, which a YAML encoder may fold at eighty columns; ", 1+i%4),
		"html":                        `<script>alert("x & y")</script>`,
		"lines":                       "first line\nsecond line\n\tindented",
		"looks-like":                  []string{"true", "123", "0x1F", "null", "~", "1e3", "-", ": x", "'q'", "#c"}[i%10],
		"unicode":                     "zoë ☃ 日本語 \u2028",
		"kubectl.kubernetes.io/empty": "",
	}
	p.Labels = map[string]string{"app": "web", "index": fmt.Sprint(i)}
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.NodeSelector = map[string]string{}
	p.Spec.Containers[0].Args = []string{}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	return p
}

// numbers is a custom resource with the numbers JSON and YAML write in
// several ways.
func numbers(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": "lab", "name": name, "creationTimestamp": "2024-05-01T11:00:00Z"},
		"spec": map[string]any{
			"ratio": 0.5, "big": int64(1)<<53 + 1, "negative": int64(-7), "tiny": 1e-9, "huge": 1.5e300,
			"nested": []any{[]any{}, map[string]any{}, []any{int64(1), "two", nil, true}},
		},
	}}
}

// TestStreamedMatchesKubectl: -o json, yaml and name, which Print writes
// one item at a time, are byte for byte what kubectl's printers write for
// the whole List kubectl get builds of the same objects (see
// kubectlPrintGeneric), managed fields omitted.
func TestStreamedMatchesKubectl(t *testing.T) {
	var many []runtime.Object
	for i := range 150 {
		many = append(many, awkwardPod(i))
	}
	fixed := testPods()
	fixed[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	sets := map[string][]runtime.Object{
		"pods":     many,
		"fixtures": {fixed[0], fixed[1], fixed[3], fixed[5]},
		"one pod":  {awkwardPod(3)},
		"widgets":  {numbers("w-1"), numbers("w-2"), widget("lab", "w-3", "red", time.Hour)},
		"deployed": {deployment("a", "d-1", 2, time.Hour), deployment("b", "d-2", 0, time.Minute)},
		"nothing":  {},
	}
	// New printers for each List: kubectl's YAML printer separates the
	// documents it prints with "---".
	formats := map[string]func() printers.ResourcePrinter{
		"json": func() printers.ResourcePrinter {
			return &printers.OmitManagedFieldsPrinter{Delegate: &printers.JSONPrinter{}}
		},
		"yaml": func() printers.ResourcePrinter {
			return &printers.OmitManagedFieldsPrinter{Delegate: &printers.YAMLPrinter{}}
		},
		"name": func() printers.ResourcePrinter { return &printers.NamePrinter{} },
	}
	for setName, objs := range sets {
		for format, printer := range formats {
			t.Run(setName+"/"+format, func(t *testing.T) {
				var want bytes.Buffer
				if err := kubectlPrintGeneric(objs, printer(), &want); err != nil {
					t.Fatal(err)
				}
				var anys []any
				for _, o := range objs {
					anys = append(anys, o)
				}
				res, err := Run(newIndexer(t, cache.Indexers{}, anys...), Spec{})
				if err != nil {
					t.Fatal(err)
				}
				p, err := NewPrinter(format, PrintOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if p.streamed(res) == nil {
					t.Fatalf("-o %s is not streamed", format)
				}
				var got bytes.Buffer
				if err := p.Print(&got, res); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("streamed (%d bytes) differs from kubectl (%d bytes) from byte %d:\n%s\nkubectl:\n%s",
						got.Len(), want.Len(), firstDifference(got.String(), want.String()), got.String(), want.String())
				}
			})
		}
	}
}

func firstDifference(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestTypedItemsAsTheirMaps: typed objects, encoded without a conversion
// to maps, print as the same objects converted to unstructured ones do,
// also over several clusters (the cluster annotation) and with managed
// fields shown.
func TestTypedItemsAsTheirMaps(t *testing.T) {
	for _, opts := range []PrintOptions{{Clusters: true}, {ShowManagedFields: true}, {Clusters: true, ShowManagedFields: true}} {
		for _, format := range []string{"json", "yaml"} {
			var typed, maps []any
			for i := range 20 {
				p := awkwardPod(i)
				typed = append(typed, p)
				content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
				if err != nil {
					t.Fatal(err)
				}
				maps = append(maps, &unstructured.Unstructured{Object: content})
			}
			printed := func(objs []any) string {
				res, err := Run(newIndexer(t, cache.Indexers{}, objs...), Spec{})
				if err != nil {
					t.Fatal(err)
				}
				for i := range res.Items {
					res.Items[i].Cluster = fmt.Sprintf("c%d", i%3)
				}
				p, err := NewPrinter(format, opts)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := p.Print(&out, res); err != nil {
					t.Fatal(err)
				}
				return out.String()
			}
			got, want := printed(typed), printed(maps)
			if got != want {
				t.Errorf("%+v -o %s: typed (%d bytes) differs from unstructured (%d bytes) from byte %d", opts, format, len(got), len(want), firstDifference(got, want))
			}
			if opts.Clusters && !strings.Contains(got, ClusterAnnotation) {
				t.Errorf("%+v -o %s: no cluster annotation", opts, format)
			}
			if opts.ShowManagedFields != strings.Contains(got, "managedFields") {
				t.Errorf("%+v -o %s: managed fields shown: %v", opts, format, strings.Contains(got, "managedFields"))
			}
		}
	}
}

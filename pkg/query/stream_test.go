package query

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/getprint"
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
				res := answerOf(t, objs)
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

// answerOf is the answer of a query of every object of objs.
func answerOf(t *testing.T, objs []runtime.Object) *Result {
	t.Helper()
	var anys []any
	for _, o := range objs {
		anys = append(anys, o)
	}
	res, err := Run(newIndexer(t, cache.Indexers{}, anys...), Spec{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// printedAs is res printed as -o format with opts.
func printedAs(t *testing.T, format string, opts PrintOptions, res *Result) string {
	t.Helper()
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
				return printedAs(t, format, opts, res)
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

// TestStreamedTemplatesMatchKubectl: jsonpath, go-template and
// custom-columns outputs, printed one item at a time when the template
// reads the List only through its items, print byte for byte what
// kubectl's printers print for the whole List kubectl get builds, and fail
// with kubectl's error after the same output when the template fails on
// an item. Templates of other forms are printed over the whole List.
func TestStreamedTemplatesMatchKubectl(t *testing.T) {
	var many []runtime.Object
	for i := range 60 {
		many = append(many, awkwardPod(i))
	}
	fixed := testPods()
	sets := map[string][]runtime.Object{
		"pods":     many,
		"fixtures": {fixed[0], fixed[1], fixed[2], fixed[3], fixed[4], fixed[5]},
		"one pod":  {awkwardPod(3)},
		"widgets":  {numbers("w-1"), numbers("w-2"), widget("lab", "w-3", "red", time.Hour)},
		"deployed": {deployment("a", "d-1", 2, time.Hour), deployment("b", "d-2", 0, time.Minute)},
		"nothing":  {},
		// The templates that read a second container fail on the last.
		"late failure": {awkwardPod(0), awkwardPod(1), pod("shop", "zz-single", "n1", corev1.PodRunning, 0, time.Minute, "nginx")},
	}
	type tmpl struct {
		format, text string
		strict       bool
		noHeaders    bool
		// streamed: the form printed item by item
		streamed bool
	}
	templates := []tmpl{
		{format: "jsonpath", text: `{.items[*].metadata.name}`, streamed: true},
		{format: "jsonpath", text: `names: {.items[*].metadata.name}{"\n"}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].spec.containers[*].image}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].metadata.annotations.lines}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].metadata.annotations.absent}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].metadata.labels}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].spec}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].spec.containers[?(@.name=="envoy")].image}`, streamed: true},
		{format: "jsonpath", text: `{.items[*].metadata.name}`, strict: true, streamed: true},
		{format: "jsonpath", text: `{.items[*].metadata.annotations.absent}`, strict: true, streamed: true},
		{format: "jsonpath", text: `{range .items[*]}{.metadata.name}{"\t"}{.spec.containers[*].name}{"\n"}{end}`, streamed: true},
		{format: "jsonpath", text: `head{"\n"}{range .items[*]}{@.metadata.name}{" "}{range .spec.containers[*]}{.name}={.image},{end}{"\n"}{end}tail{"\n"}`, streamed: true},
		{format: "jsonpath", text: `{range .items[*]}{.spec.containers[-1].name}{" "}{.spec.containers[0:1].name}{"\n"}{end}`, streamed: true},
		{format: "jsonpath", text: `{range .items[*]}{.metadata.name}{.spec.containers[1].name}{"\n"}{end}`, streamed: true},
		{format: "jsonpath", text: `{range .items[*]}{.metadata.name}{.spec.containers[1].name}{"\n"}{end}`, strict: true, streamed: true},
		{format: "jsonpath", text: `before{"\n"}{range .items[*]}{.metadata.name}{.spec.containers[1].name}{"\n"}{end}after`, streamed: true},
		{format: "jsonpath", text: `{range .items[*]}{.spec.ratio} {.spec.big} {.spec.tiny} {.spec.huge}{"\n"}{end}`, streamed: true},
		{format: "jsonpath", text: `{.items[0].metadata.name}`},
		{format: "jsonpath", text: `{.kind} {.items[*].metadata.name}`},
		{format: "jsonpath", text: `{.items[*]['metadata', 'kind']}`},
		{format: "jsonpath", text: `{range .items[*]}{.metadata.name}{end}{.kind}`},
		{format: "jsonpath", text: `{range .items[1:]}{.metadata.name}{"\n"}{end}`},
		{format: "go-template", text: `{{range .items}}{{.metadata.name}}{{"\n"}}{{end}}`, streamed: true},
		{format: "go-template", text: "Pods:\n{{range .items}}{{.metadata.name}} {{.spec.nodeName}} {{range .spec.containers}}{{.image}},{{end}}\n{{end}}done\n", streamed: true},
		{format: "go-template", text: `{{range .items}}{{if .metadata.annotations}}{{index .metadata.annotations "html"}}|{{.metadata.annotations.unicode}}{{end}}{{"\n"}}{{end}}`, streamed: true},
		{format: "go-template", text: `{{range .items}}{{.spec.ratio}} {{.spec.big}} {{.spec.tiny}} {{.spec.replicas}} {{.spec.nested}}{{"\n"}}{{end}}`, streamed: true},
		{format: "go-template", text: `{{range .items}}{{$n := .metadata.name}}{{range .spec.containers}}{{$n}}/{{.name}} {{end}}{{end}}`, streamed: true},
		{format: "go-template", text: `{{- range .items }} {{ .metadata.name | printf "%q" }} {{ .metadata.labels }} {{- end }}`, streamed: true},
		{format: "go-template", text: `{{range .items}}{{exists . "metadata" "labels"}} {{end}}`, streamed: true},
		{format: "go-template", text: `{{range .items}}{{.metadata.name}} {{index .spec.containers 1}}{{"\n"}}{{end}}`, streamed: true},
		{format: "go-template", text: `{{range .items}}{{.metadata.name}} {{.metadata.absent}}{{end}}`, strict: true, streamed: true},
		{format: "template", text: `{{range .items}}{{.kind}} {{end}}`, streamed: true},
		{format: "go-template", text: `{{len .items}}`},
		{format: "go-template", text: `{{range $i, $p := .items}}{{$i}}:{{$p.metadata.name}} {{end}}`},
		{format: "go-template", text: `{{range .items}}{{$.kind}} {{end}}`},
		{format: "go-template", text: `{{.kind}}{{range .items}}{{.metadata.name}}{{end}}`},
		{format: "custom-columns", text: "NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image", streamed: true},
		{format: "custom-columns", text: "NAME:.metadata.name,KIND:.kind,LINES:.metadata.annotations.lines", noHeaders: true, streamed: true},
		{format: "custom-columns", text: "NAME:.metadata.name,SECOND:.spec.containers[1].name", streamed: true},
	}
	decoder := scheme.Codecs.UniversalDecoder(scheme.Scheme.PrioritizedVersionsAllGroups()...)
	kubectlPrinter := func(tc tmpl) (printers.ResourcePrinter, error) {
		switch tc.format {
		case "jsonpath":
			p, err := printers.NewJSONPathPrinter(tc.text)
			if err != nil {
				return nil, err
			}
			p.AllowMissingKeys(!tc.strict)
			return p, nil
		case "go-template", "template":
			p, err := printers.NewGoTemplatePrinter([]byte(tc.text))
			if err != nil {
				return nil, err
			}
			p.AllowMissingKeys(!tc.strict)
			return p, nil
		}
		// kubectl's printer, in the copy TestCopiedFromUpstream checks.
		return getprint.NewCustomColumnsPrinterFromSpec(tc.text, decoder, tc.noHeaders)
	}
	failures := 0
	for setName, objs := range sets {
		for i, tc := range templates {
			t.Run(fmt.Sprintf("%s/%d-%s", setName, i, tc.format), func(t *testing.T) {
				printer, err := kubectlPrinter(tc)
				if err != nil {
					t.Fatal(err)
				}
				res := answerOf(t, objs)
				// kubectl's List, of the answer's items in its order.
				var answered []runtime.Object
				for _, item := range res.Items {
					answered = append(answered, item.Object)
				}
				var want bytes.Buffer
				wantErr := kubectlPrintGeneric(answered, printer, &want)
				p, err := NewPrinter(tc.format+"="+tc.text, PrintOptions{StrictTemplateKeys: tc.strict, NoHeaders: tc.noHeaders})
				if err != nil {
					t.Fatal(err)
				}
				if streamed := p.streamed(res) != nil; streamed != tc.streamed {
					t.Fatalf("streamed %v, want %v", streamed, tc.streamed)
				}
				var got bytes.Buffer
				gotErr := p.Print(&got, res)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("error %v, kubectl's %v", gotErr, wantErr)
				}
				if wantErr != nil {
					failures++
				}
				if got.String() != want.String() {
					t.Errorf("printed (%d bytes) differs from kubectl (%d bytes) from byte %d:\n%s\nkubectl:\n%s",
						got.Len(), want.Len(), firstDifference(got.String(), want.String()), got.String(), want.String())
				}
			})
		}
	}
	if failures == 0 {
		t.Error("no template failed: the failures' output is not compared")
	}
}

// mapCache is an ItemCache of the texts stored, counting the calls.
type mapCache struct {
	mu           sync.Mutex
	texts        map[runtime.Object][]byte
	loads, store int
}

func (c *mapCache) Load(_ schema.GroupVersionKind, obj runtime.Object) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads++
	t, ok := c.texts[obj]
	return t, ok
}

func (c *mapCache) Store(_ schema.GroupVersionKind, obj runtime.Object, text []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store++
	c.texts[obj] = text
}

// TestEncodedItems: -o json prints the same List with an ItemCache as
// without, storing each item's text once and printing what it holds for
// an object afterwards; with managed fields or over several clusters it
// does not use the cache.
func TestEncodedItems(t *testing.T) {
	fixed := testPods()
	fixed[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	objs := []runtime.Object{awkwardPod(1), fixed[0], awkwardPod(2), numbers("w-1")}
	res := answerOf(t, objs)
	printJSON := func(opts PrintOptions) string {
		t.Helper()
		return printedAs(t, "json", opts, res)
	}
	want := printJSON(PrintOptions{})
	c := &mapCache{texts: map[runtime.Object][]byte{}}
	for round := range 2 {
		if got := printJSON(PrintOptions{Encoded: c}); got != want {
			t.Fatalf("round %d with an ItemCache differs from byte %d:\n%s\nwithout:\n%s", round, firstDifference(got, want), got, want)
		}
	}
	if c.loads != 2*len(objs) || c.store != len(objs) {
		t.Fatalf("%d loads, %d stores over two answers of %d objects; want %d, %d", c.loads, c.store, len(objs), 2*len(objs), len(objs))
	}
	c.texts[res.Items[2].Object] = []byte(`"kept"`)
	if got := printJSON(PrintOptions{Encoded: c}); !strings.Contains(got, "\n        \"kept\",\n") {
		t.Errorf("the text held for the third item was not printed:\n%s", got)
	}
	for name, opts := range map[string]PrintOptions{
		"show-managed-fields": {Encoded: c, ShowManagedFields: true},
		"clusters":            {Encoded: c, Clusters: true},
	} {
		loads := c.loads
		if got := printJSON(opts); strings.Contains(got, "kept") || c.loads != loads {
			t.Errorf("%s: the ItemCache was read (%d loads)", name, c.loads-loads)
		}
	}
}

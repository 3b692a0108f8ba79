package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
)

// printCase is one golden output test: a query over objs printed with -o
// output.
type printCase struct {
	name    string
	objs    []any
	spec    Spec
	output  string
	opts    PrintOptions
	want    string
	wantErr string // stderr
}

func (tt printCase) run(t *testing.T) {
	t.Helper()
	objs := tt.objs
	if objs == nil {
		for _, p := range testPods() {
			objs = append(objs, p)
		}
	}
	res, err := Run(newIndexer(t, podIndexersFor(objs), objs...), tt.spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var stderr bytes.Buffer
	opts := tt.opts
	opts.Now = fixedNow
	opts.ErrOut = &stderr
	p, err := NewPrinter(tt.output, opts)
	if err != nil {
		t.Fatalf("NewPrinter(%q): %v", tt.output, err)
	}
	var out bytes.Buffer
	if err := p.Print(&out, res); err != nil {
		t.Fatalf("Print: %v", err)
	}
	if got := out.String(); got != tt.want {
		t.Errorf("output:\n%s\nwant:\n%s", got, tt.want)
	}
	if got := stderr.String(); got != tt.wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, tt.wantErr)
	}
}

// podIndexersFor returns the pod indexers for pods, and only the namespace
// index for other objects.
func podIndexersFor(objs []any) cache.Indexers {
	for _, o := range objs {
		if _, ok := o.(*corev1.Pod); !ok {
			return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		}
	}
	return podIndexers
}

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

func TestPrintTable(t *testing.T) {
	columns := []Column{{Name: "node", Value: nodeName}, {Name: "images", Value: images}}
	tests := []printCase{
		{
			name: "all namespaces",
			spec: Spec{Columns: columns},
			want: `NAMESPACE     NAME    READY   STATUS    RESTARTS   AGE    NODE     IMAGES
default       db-0    0/1     Pending   0          90s    n1       postgres
default       web-0   0/2     Running   3          120m   n1       nginx,envoy
default       web-1   0/2     Running   10         120m   n2       nginx,nginx
kube-system   dns-0   0/0     Running   0          3d     n2       <none>
kube-system   px-a    0/1     Failed    1          10m    n1       proxy
other         web-2   0/1     Pending   0          25h    <none>   nginx
`,
		},
		{
			name: "one namespace",
			spec: Spec{Namespace: "default", Columns: columns},
			opts: PrintOptions{Namespace: "default"},
			want: `NAME    READY   STATUS    RESTARTS   AGE    NODE   IMAGES
db-0    0/1     Pending   0          90s    n1     postgres
web-0   0/2     Running   3          120m   n1     nginx,envoy
web-1   0/2     Running   10         120m   n2     nginx,nginx
`,
		},
		{
			name: "sort order is kept",
			spec: Spec{SortBy: name},
			want: `NAMESPACE     NAME    READY   STATUS    RESTARTS   AGE
default       db-0    0/1     Pending   0          90s
kube-system   dns-0   0/0     Running   0          3d
kube-system   px-a    0/1     Failed    1          10m
default       web-0   0/2     Running   3          120m
default       web-1   0/2     Running   10         120m
other         web-2   0/1     Pending   0          25h
`,
		},
		{
			name:   "wide shows the kind's wide columns and no index",
			spec:   Spec{Selectors: []Selector{{Index: "byPhase", Value: "Pending"}}, Columns: columns[:1]},
			output: "wide",
			want: `NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE   IP       NODE     NOMINATED NODE   READINESS GATES   NODE
default     db-0    0/1     Pending   0          90s   <none>   n1       <none>           <none>            n1
other       web-2   0/1     Pending   0          25h   <none>   <none>   <none>           <none>            <none>
`,
		},
		{
			name: "chosen indexes",
			spec: Spec{Namespace: "default"},
			opts: PrintOptions{Namespace: "default", IndexNames: []string{"byPhase", "namespace"}},
			want: `NAME    READY   STATUS    RESTARTS   AGE    BYPHASE   NAMESPACE
db-0    0/1     Pending   0          90s    Pending   default
web-0   0/2     Running   3          120m   Running   default
web-1   0/2     Running   10         120m   Running   default
`,
		},
		{
			name:   "wide with chosen indexes",
			spec:   Spec{Namespace: "default"},
			output: "wide",
			opts:   PrintOptions{Namespace: "default", IndexNames: []string{"byPhase", "namespace"}},
			want: `NAME    READY   STATUS    RESTARTS   AGE    IP       NODE   NOMINATED NODE   READINESS GATES   BYPHASE   NAMESPACE
db-0    0/1     Pending   0          90s    <none>   n1     <none>           <none>            Pending   default
web-0   0/2     Running   3          120m   <none>   n1     <none>           <none>            Running   default
web-1   0/2     Running   10         120m   <none>   n2     <none>           <none>            Running   default
`,
		},
		{
			name: "no headers, kind, label columns",
			spec: Spec{Namespace: "kube-system"},
			opts: PrintOptions{Namespace: "kube-system", NoHeaders: true, ShowKind: true, LabelColumns: []string{"app"}, GroupVersionKind: podGVK},
			want: `pod/dns-0   0/0   Running   0     3d    dns
pod/px-a    0/1   Failed    1     10m   px
`,
		},
		{
			name: "kind from the objects",
			objs: []any{deployment("a", "web", 1, time.Hour), deployment("b", "api", 1, 5*time.Second)},
			opts: PrintOptions{ShowKind: true},
			want: `NAMESPACE   NAME                  READY   UP-TO-DATE   AVAILABLE   AGE
a           deployment.apps/web   0/1     0            0           60m
b           deployment.apps/api   0/1     0            0           5s
`,
		},
		{
			name: "show labels",
			spec: Spec{Namespace: "other"},
			opts: PrintOptions{Namespace: "other", ShowLabels: true},
			want: `NAME    READY   STATUS    RESTARTS   AGE   LABELS
web-2   0/1     Pending   0          25h   app=web
`,
		},
		{
			name: "cluster-scoped, unknown age",
			objs: []any{
				&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: ago(400 * 24 * time.Hour)}},
				&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
			},
			opts: PrintOptions{ClusterScoped: true},
			want: `NAME   STATUS    ROLES    AGE         VERSION
n1     Unknown   <none>   400d        
n2     Unknown   <none>   <unknown>   
`,
		},
		{
			name: "values of every type",
			objs: []any{testPods()[0]},
			spec: Spec{Columns: []Column{
				{Name: "str", Value: constant("a b")},
				{Name: "int", Value: constant(int64(-42))},
				{Name: "float", Value: constant(2.5)},
				{Name: "whole", Value: constant(3.0)},
				{Name: "bool", Value: constant(true)},
				{Name: "null", Value: constant(nil)},
				{Name: "list", Value: constant([]any{"x", int64(1), nil})},
				{Name: "empty", Value: constant([]any{})},
				{Name: "map", Value: constant(map[string]any{"b": int64(1), "a": []any{"x"}})},
				{Name: "fails", Value: func(any) (any, error) { return nil, errors.New("boom") }},
				{Name: "newline", Value: constant("one\ntwo")},
			}},
			want: `NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE    STR   INT   FLOAT   WHOLE   BOOL   NULL     LIST         EMPTY    MAP                 FAILS     NEWLINE
default     web-0   0/2     Running   3          120m   a b   -42   2.5     3       true   <none>   x,1,<none>   <none>   {"a":["x"],"b":1}   <error>   one...
`,
		},
		{
			name:    "nothing found in a namespace",
			spec:    Spec{Namespace: "nowhere"},
			opts:    PrintOptions{Namespace: "nowhere"},
			want:    "",
			wantErr: "No resources found in nowhere namespace.\n",
		},
		{
			name:    "nothing found in all namespaces",
			spec:    Spec{Where: func(any) (bool, error) { return false, nil }},
			output:  "wide",
			want:    "",
			wantErr: "No resources found\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func constant(v any) ValueFunc { return func(any) (any, error) { return v, nil } }

func TestPrintIndexColumnErrors(t *testing.T) {
	res, err := Run(podIndexer(t), Spec{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	res.Indexers = cache.Indexers{"byRestarts": func(obj any) ([]string, error) {
		v, err := restarts(obj)
		if err != nil {
			return nil, err
		}
		return []string{FormatValue(v)}, nil
	}}
	var out, stderr bytes.Buffer
	p, err := NewPrinter("wide", PrintOptions{Namespace: "default", Now: fixedNow, ErrOut: &stderr, IndexNames: []string{"byRestarts"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Print(&out, res); err != nil {
		t.Fatal(err)
	}
	want := `NAME    READY   STATUS    RESTARTS   AGE    IP       NODE   NOMINATED NODE   READINESS GATES   BYRESTARTS
db-0    0/1     Pending   0          90s    <none>   n1     <none>           <none>            <error>
web-0   0/2     Running   3          120m   <none>   n1     <none>           <none>            3
web-1   0/2     Running   10         120m   <none>   n2     <none>           <none>            10
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	wantErr := "warning: index byRestarts: 1 of 3 objects failed: default/db-0: index out of range: 0\n"
	if stderr.String() != wantErr {
		t.Errorf("stderr = %q, want %q", stderr.String(), wantErr)
	}

	p, err = NewPrinter("wide", PrintOptions{IndexNames: []string{"byZone"}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Print(&out, res)
	if want := `unknown index "byZone"; known indexes: byRestarts`; err == nil || err.Error() != want {
		t.Errorf("Print with an unknown index = %v, want %q", err, want)
	}
}

const podsJSON = `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": "2024-05-01T11:58:30Z",
                "labels": {
                    "app": "db"
                },
                "name": "db-0",
                "namespace": "default"
            },
            "spec": {
                "containers": [
                    {
                        "image": "postgres",
                        "name": "c0",
                        "resources": {}
                    }
                ],
                "nodeName": "n1"
            },
            "status": {
                "phase": "Pending"
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": "2024-05-01T10:00:00Z",
                "labels": {
                    "app": "web"
                },
                "name": "web-0",
                "namespace": "default"
            },
            "spec": {
                "containers": [
                    {
                        "image": "nginx",
                        "name": "c0",
                        "resources": {}
                    },
                    {
                        "image": "envoy",
                        "name": "c1",
                        "resources": {}
                    }
                ],
                "nodeName": "n1"
            },
            "status": {
                "containerStatuses": [
                    {
                        "image": "",
                        "imageID": "",
                        "lastState": {},
                        "name": "c0",
                        "ready": false,
                        "restartCount": 3,
                        "state": {}
                    }
                ],
                "phase": "Running"
            }
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
`

const podsYAML = `apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T11:58:30Z"
    labels:
      app: db
    name: db-0
    namespace: default
  spec:
    containers:
    - image: postgres
      name: c0
      resources: {}
    nodeName: n1
  status:
    phase: Pending
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T10:00:00Z"
    labels:
      app: web
    name: web-0
    namespace: default
  spec:
    containers:
    - image: nginx
      name: c0
      resources: {}
    - image: envoy
      name: c1
      resources: {}
    nodeName: n1
  status:
    containerStatuses:
    - image: ""
      imageID: ""
      lastState: {}
      name: c0
      ready: false
      restartCount: 3
      state: {}
    phase: Running
kind: List
metadata:
  resourceVersion: ""
`

const widgetJSON = `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {
                "creationTimestamp": "2024-05-01T11:00:00Z",
                "name": "w-1",
                "namespace": "default"
            },
            "spec": {
                "color": "red",
                "size": 3
            }
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
`

const emptyJSON = `{
    "apiVersion": "v1",
    "items": [],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
`

func TestPrintJSONYAML(t *testing.T) {
	twoPods := Spec{Namespace: "default", Limit: 2}
	tests := []printCase{
		{name: "json", spec: twoPods, output: "json", want: podsJSON},
		{name: "yaml", spec: twoPods, output: "yaml", want: podsYAML},
		{name: "json without TypeMeta uses the given kind", objs: []any{stripTypeMeta(testPods()[2]), stripTypeMeta(testPods()[0])}, output: "json", opts: PrintOptions{GroupVersionKind: podGVK}, want: podsJSON},
		{name: "json without TypeMeta uses the scheme", objs: []any{stripTypeMeta(testPods()[2]), stripTypeMeta(testPods()[0])}, output: "json", want: podsJSON},
		{name: "unstructured, managed fields omitted", objs: []any{widget("default", "w-1", "red", time.Hour)}, output: "json", want: widgetJSON},
		{
			name:   "managed fields shown on request",
			objs:   []any{widget("default", "w-1", "red", time.Hour)},
			output: "yaml",
			opts:   PrintOptions{ShowManagedFields: true},
			want: `apiVersion: v1
items:
- apiVersion: example.com/v1
  kind: Widget
  metadata:
    creationTimestamp: "2024-05-01T11:00:00Z"
    managedFields:
    - manager: kubectl
      operation: Apply
    name: w-1
    namespace: default
  spec:
    color: red
    size: 3
kind: List
metadata:
  resourceVersion: ""
`,
		},
		{
			name:   "metadata only",
			objs:   []any{partial("default", "d-1", time.Hour)},
			output: "yaml",
			opts:   PrintOptions{GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
			want: `apiVersion: v1
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    creationTimestamp: "2024-05-01T11:00:00Z"
    name: d-1
    namespace: default
kind: List
metadata:
  resourceVersion: ""
`,
		},
		{name: "empty json list, no message", spec: Spec{Namespace: "nowhere"}, opts: PrintOptions{Namespace: "nowhere"}, output: "json", want: emptyJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func stripTypeMeta(p *corev1.Pod) *corev1.Pod {
	p.TypeMeta = metav1.TypeMeta{}
	return p
}

// kubectlPrintGeneric is kubectl get's printGeneric for several objects.
func kubectlPrintGeneric(objs []runtime.Object, printer printers.ResourcePrinter, w *bytes.Buffer) error {
	list := corev1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, o := range objs {
		list.Items = append(list.Items, runtime.RawExtension{Object: o})
	}
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	converted, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		return err
	}
	items := converted.(*unstructured.UnstructuredList).Items
	out := &unstructured.UnstructuredList{Object: map[string]any{
		"kind": "List", "apiVersion": "v1",
		"metadata": map[string]any{"resourceVersion": ""},
	}}
	out.Items = items
	return printer.PrintObj(out, w)
}

func TestPrintName(t *testing.T) {
	tests := []printCase{
		{name: "typed pods", spec: Spec{Namespace: "default"}, output: "name", want: "pod/db-0\npod/web-0\npod/web-1\n"},
		{name: "typed pods without TypeMeta", objs: []any{stripTypeMeta(testPods()[0])}, output: "name", want: "pod/web-0\n"},
		{
			name:   "typed deployments",
			objs:   []any{deployment("a", "d-1", 1, 0), deployment("b", "d-2", 1, 0)},
			output: "name",
			want:   "deployment.apps/d-1\ndeployment.apps/d-2\n",
		},
		{
			name:   "unstructured custom resources",
			objs:   []any{widget("a", "w-1", "red", 0), widget("a", "w-2", "red", 0)},
			output: "name",
			want:   "widget.example.com/w-1\nwidget.example.com/w-2\n",
		},
		{
			name:   "metadata-only pods",
			objs:   []any{partial("a", "p-1", 0)},
			output: "name",
			opts:   PrintOptions{GroupVersionKind: podGVK},
			want:   "pod/p-1\n",
		},
		{
			name:   "metadata-only deployments",
			objs:   []any{partial("a", "d-1", 0), partial("b", "d-0", 0)},
			output: "name",
			opts:   PrintOptions{GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
			want:   "deployment.apps/d-1\ndeployment.apps/d-0\n",
		},
		{name: "nothing, no message", spec: Spec{Namespace: "nowhere"}, opts: PrintOptions{Namespace: "nowhere"}, output: "name", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func TestPrintUnknownKind(t *testing.T) {
	res, err := Run(newIndexer(t, cache.Indexers{}, partial("a", "p-1", 0)), Spec{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPrinter("name", PrintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Print(&bytes.Buffer{}, res)
	want := "cannot print a/p-1: its apiVersion and kind are unknown; the resource's kind must be given in PrintOptions.GroupVersionKind"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestPrintTemplates(t *testing.T) {
	dir := t.TempDir()
	jsonpathFile := filepath.Join(dir, "names.jsonpath")
	columnsFile := filepath.Join(dir, "columns.txt")
	if err := os.WriteFile(jsonpathFile, []byte(`{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\n"}{end}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(columnsFile, []byte("POD          NODE\nmetadata.name  .spec.nodeName\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Namespace: "default"}
	tests := []printCase{
		{name: "jsonpath", spec: spec, output: "jsonpath={.items[*].metadata.name}", want: "db-0 web-0 web-1"},
		{name: "jsonpath range", spec: spec, output: `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, want: "db-0\nweb-0\nweb-1\n"},
		{name: "jsonpath from --template", spec: spec, output: "jsonpath", opts: PrintOptions{Template: "{.items[0].metadata.name}"}, want: "db-0"},
		{name: "jsonpath-file", spec: spec, output: "jsonpath-file=" + jsonpathFile, want: "db-0\tn1\nweb-0\tn1\nweb-1\tn2\n"},
		{name: "jsonpath-as-json", spec: Spec{Namespace: "other"}, output: "jsonpath-as-json={.items[*].metadata.name}", want: "[\n    \"web-2\"\n]\n"},
		{name: "go-template", spec: spec, output: `go-template={{range .items}}{{.metadata.name}} {{end}}`, want: "db-0 web-0 web-1 "},
		{name: "--template alone means go-template", spec: spec, opts: PrintOptions{Template: `{{len .items}}`}, want: "3"},
		{
			name:   "custom-columns",
			spec:   Spec{SortBy: name},
			output: "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image",
			want: `NAME    NODE     IMAGES
db-0    n1       postgres
dns-0   n2       <none>
px-a    n1       proxy
web-0   n1       nginx,envoy
web-1   n2       nginx,nginx
web-2   <none>   nginx
`,
		},
		{
			name:   "custom-columns without headers",
			spec:   spec,
			output: "custom-columns=NAME:.metadata.name,KIND:.kind",
			opts:   PrintOptions{NoHeaders: true},
			want:   "db-0    Pod\nweb-0   Pod\nweb-1   Pod\n",
		},
		{
			name:   "custom-columns of metadata-only objects",
			objs:   []any{partial("a", "d-1", 0)},
			output: "custom-columns=NAME:.metadata.name,KIND:.kind,GROUP:.apiVersion",
			opts:   PrintOptions{GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
			want:   "NAME   KIND         GROUP\nd-1    Deployment   apps/v1\n",
		},
		{
			name:   "custom-columns-file",
			spec:   spec,
			output: "custom-columns-file=" + columnsFile,
			want:   "POD     NODE\ndb-0    n1\nweb-0   n1\nweb-1   n2\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func TestNewPrinterErrors(t *testing.T) {
	tests := []struct {
		output string
		opts   PrintOptions
		want   string
		usage  bool
	}{
		{
			output: "xml",
			want:   `unable to match a printer suitable for the output format "xml", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml`,
			usage:  true,
		},
		{output: "jsonpath", want: "template format specified but no template given"},
		{output: "jsonpath={.items[", want: "error parsing jsonpath {.items[, unterminated array"},
		{output: "custom-columns", want: "custom-columns format specified but no custom columns given"},
		{output: "custom-columns=NAME", want: "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{output: "jsonpath-file=/nonexistent/file", want: "error reading --template /nonexistent/file, open /nonexistent/file: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.output, func(t *testing.T) {
			_, err := NewPrinter(tt.output, tt.opts)
			if err == nil {
				t.Fatalf("NewPrinter(%q) succeeded", tt.output)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
			if got := genericclioptions.IsNoCompatiblePrinterError(err); got != tt.usage {
				t.Errorf("IsNoCompatiblePrinterError = %v, want %v", got, tt.usage)
			}
		})
	}
	if got := strings.Join(AllowedFormats(), ","); !strings.HasPrefix(tests[0].want, "unable") || !strings.HasSuffix(tests[0].want, got) {
		t.Errorf("AllowedFormats() = %s, not the list of the error", got)
	}
}

func TestPrintCount(t *testing.T) {
	tests := []printCase{
		{name: "bare count", spec: Spec{Count: true}, want: "6\n"},
		{name: "zero", spec: Spec{Count: true, Namespace: "nowhere"}, opts: PrintOptions{Namespace: "nowhere"}, want: "0\n"},
		{
			name: "groups aligned",
			spec: Spec{Count: true, GroupBy: images},
			want: `nginx      3
<none>     1
envoy      1
postgres   1
proxy      1
`,
		},
		{
			name:   "groups with -o wide",
			spec:   Spec{Count: true, GroupBy: nodeName},
			output: "wide",
			want:   "n1       3\nn2       2\n<none>   1\n",
		},
		{name: "no groups", spec: Spec{Count: true, GroupBy: nodeName, Namespace: "nowhere"}, opts: PrintOptions{Namespace: "nowhere"}, want: "", wantErr: "No resources found in nowhere namespace.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}

	res, err := Run(podIndexer(t), Spec{Count: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPrinter("json", PrintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.HumanReadable() {
		t.Error("-o json is human-readable")
	}
	err = p.Print(&bytes.Buffer{}, res)
	if want := `counts are printed as text; output format "json" cannot print them`; err == nil || err.Error() != want {
		t.Errorf("count with -o json = %v, want %q", err, want)
	}
}

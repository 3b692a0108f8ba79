// Package charts_test renders charts/kubectl-informer with Helm's Go SDK, as
// "helm lint" and "helm template" do, and checks what it renders: every
// object decodes strictly as a Kubernetes object, selectors select, probes
// name ports that exist, and the exporter's arguments are flags its command
// line (kube-state-metrics' in the drop-in mode) accepts.
package charts_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart, relative to this package.
const chartDir = "kubectl-informer"

// The release the tests render.
const (
	releaseName      = "prom"
	releaseNamespace = "monitoring"
)

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return ch
}

// renderManifest renders the chart with vals as "helm template" does,
// without a cluster, and returns the manifest.
func renderManifest(t testing.TB, vals map[string]any, apiVersions ...string) (string, error) {
	t.Helper()
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	// API versions the cluster serves besides the built-in ones.
	install.APIVersions = apiVersions
	install.ReleaseName = releaseName
	install.Namespace = releaseNamespace
	install.Replace = true
	rel, err := install.Run(loadChart(t), vals)
	if err != nil {
		return "", err
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("install returned a %T, not a *release.Release", rel)
	}
	return r.Manifest, nil
}

// Objects is what a render returned, in order.
type Objects []*unstructured.Unstructured

// render renders the chart with vals, fails the test if it cannot, and
// checks every object (see checkObjects).
func render(t testing.TB, vals map[string]any, apiVersions ...string) Objects {
	t.Helper()
	manifest, err := renderManifest(t, vals, apiVersions...)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	objs := decodeObjects(t, manifest)
	checkObjects(t, objs)
	return objs
}

// strict decodes the kinds client-go knows, failing on unknown and
// duplicate fields.
var strict = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
	json.SerializerOptions{Yaml: true, Strict: true})

// decodeObjects splits a manifest into objects and decodes each kind
// client-go knows strictly into its type.
func decodeObjects(t testing.TB, manifest string) Objects {
	t.Helper()
	var objs Objects
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the manifest: %v", err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("an object of the manifest is not YAML: %v\n%s", err, doc)
		}
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			t.Fatalf("an object of the manifest has no apiVersion or kind:\n%s", doc)
		}
		if scheme.Scheme.Recognizes(gvk) {
			if _, _, err := strict.Decode(doc, nil, nil); err != nil {
				t.Errorf("%s %s does not decode as a %s: %v\n%s", gvk.Kind, u.GetName(), gvk, err, doc)
			}
		}
		objs = append(objs, u)
	}
	if len(objs) == 0 {
		t.Fatal("the chart rendered no object")
	}
	return objs
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// find returns the object of that kind and name, failing the test if there
// is none.
func (o Objects) find(t testing.TB, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range o {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %q among the rendered objects: %s", kind, name, o)
	return nil
}

// kind returns the objects of that kind.
func (o Objects) kind(kind string) Objects {
	var out Objects
	for _, u := range o {
		if u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}

func (o Objects) String() string {
	var names []string
	for _, u := range o {
		names = append(names, u.GetKind()+"/"+u.GetName())
	}
	return strings.Join(names, ", ")
}

// into converts u into a typed object.
func into[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// podTemplate returns the pod template and selector of a Deployment or
// StatefulSet.
func podTemplate(t testing.TB, u *unstructured.Unstructured) (*corev1.PodTemplateSpec, labels.Selector) {
	t.Helper()
	var tmpl corev1.PodTemplateSpec
	var sel labels.Selector
	switch u.GetKind() {
	case "Deployment":
		d := into[appsv1.Deployment](t, u)
		tmpl, sel = d.Spec.Template, selector(t, d.Spec.Selector.MatchLabels)
	case "StatefulSet":
		s := into[appsv1.StatefulSet](t, u)
		tmpl, sel = s.Spec.Template, selector(t, s.Spec.Selector.MatchLabels)
	default:
		t.Fatalf("%s %s has no pod template", u.GetKind(), u.GetName())
	}
	return &tmpl, sel
}

func selector(t testing.TB, m map[string]string) labels.Selector {
	t.Helper()
	if len(m) == 0 {
		t.Fatal("an empty selector")
	}
	return labels.SelectorFromSet(m)
}

// checkObjects checks what holds for every render: each workload's
// selector selects its pods, every probe names a port of its own container
// (the kubelet looks a probe's named port up there only), every Service
// selects the pods of exactly one workload and names their ports, and every
// ServiceAccount a pod runs as is rendered or named by the values.
func checkObjects(t testing.TB, objs Objects) {
	t.Helper()
	type workload struct {
		name string
		tmpl *corev1.PodTemplateSpec
	}
	var workloads []workload
	for _, u := range append(objs.kind("Deployment"), objs.kind("StatefulSet")...) {
		tmpl, sel := podTemplate(t, u)
		if !sel.Matches(labels.Set(tmpl.Labels)) {
			t.Errorf("%s %s: its selector %s does not select its pods (%v)", u.GetKind(), u.GetName(), sel, tmpl.Labels)
		}
		for _, c := range tmpl.Spec.Containers {
			ports := map[string]bool{}
			for _, p := range c.Ports {
				ports[p.Name] = true
			}
			for what, p := range map[string]*corev1.Probe{"startupProbe": c.StartupProbe, "livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
				if p == nil || p.HTTPGet == nil {
					continue
				}
				if name := p.HTTPGet.Port.StrVal; name != "" && !ports[name] {
					t.Errorf("%s %s: the %s of container %s names port %q, which the container does not declare", u.GetKind(), u.GetName(), what, c.Name, name)
				}
			}
		}
		workloads = append(workloads, workload{u.GetKind() + "/" + u.GetName(), tmpl})
	}
	for _, u := range objs.kind("Service") {
		svc := into[corev1.Service](t, u)
		sel := selector(t, svc.Spec.Selector)
		var selected []string
		for _, w := range workloads {
			if !sel.Matches(labels.Set(w.tmpl.Labels)) {
				continue
			}
			selected = append(selected, w.name)
			for _, p := range svc.Spec.Ports {
				if p.TargetPort.StrVal == "" {
					continue
				}
				found := false
				for _, c := range w.tmpl.Spec.Containers {
					for _, cp := range c.Ports {
						found = found || cp.Name == p.TargetPort.StrVal
					}
				}
				if !found {
					t.Errorf("Service %s: port %s targets %q, which no container of %s declares", svc.Name, p.Name, p.TargetPort.StrVal, w.name)
				}
			}
		}
		if len(selected) != 1 {
			t.Errorf("Service %s selects the pods of %v, want one workload", svc.Name, selected)
		}
	}
}

// valuesFile reads a values file of the chart's ci/ directory.
func valuesFile(t testing.TB, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "ci", name)) //nolint:gosec // G304: a values file of the chart in the tree
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return vals
}

// parseValues parses inline YAML values.
func parseValues(t testing.TB, s string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &vals); err != nil {
		t.Fatalf("values %q: %v", s, err)
	}
	return vals
}

// exporterContainer returns the exporter's workload and its first
// container.
func exporterContainer(t testing.TB, objs Objects, kind, name string) (*corev1.PodTemplateSpec, *corev1.Container) {
	t.Helper()
	tmpl, _ := podTemplate(t, objs.find(t, kind, name))
	if len(tmpl.Spec.Containers) == 0 {
		t.Fatalf("%s %s has no container", kind, name)
	}
	return tmpl, &tmpl.Spec.Containers[0]
}

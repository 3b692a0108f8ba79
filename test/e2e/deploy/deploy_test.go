package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, createNamespace, (*framework.Cluster).InstallMonitoringCRDs))
}

// The deployment's namespace, service account, image and shipped config, as
// the manifests of deploy/ declare them.
const (
	namespace      = "kubectl-informer"
	serviceAccount = "kubectl-informer"
	image          = "ghcr.io/kubectl-informer/kubectl-informer:v0.1.0"
	shippedFile    = "deploy/base/config.yaml"
	exampleFile    = "examples/kube-state-metrics-pods.yaml"
)

// createNamespace creates, for real, the Namespace and the ServiceAccounts
// that deploy/base and deploy/serve render: a server-side dry run persists
// nothing, so the objects of a dry run could not find a namespace created by
// the same dry run, and a pod dry-run needs its service account to exist.
// Created as rendered, the namespace enforces the Pod Security Standard the
// manifests ask for, against which checkPodTemplate dry-runs the pods of
// the exporter and of the query server. Both directories declare the same
// Namespace; it is created once.
func createNamespace(c *framework.Cluster) error {
	var objs []string
	seen := map[string]bool{}
	for _, dir := range []string{"deploy/base", "deploy/serve"} {
		out, err := c.Kubectl("kustomize", filepath.Join(c.Root, dir))
		if err != nil {
			return fmt.Errorf("kubectl kustomize %s: %w\n%s", dir, err, out)
		}
		n := 0
		for _, doc := range strings.Split(out, "\n---\n") {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return err
			}
			if k := u.GetKind(); k == "Namespace" || k == "ServiceAccount" {
				n++
				if !seen[key(&u)] {
					seen[key(&u)] = true
					objs = append(objs, doc)
				}
			}
		}
		if n != 2 {
			return fmt.Errorf("%s renders %d Namespace and ServiceAccount objects, want 2", dir, n)
		}
	}
	if len(objs) != 3 {
		return fmt.Errorf("deploy/base and deploy/serve render %d distinct Namespace and ServiceAccount objects, want 3", len(objs))
	}
	file := filepath.Join(c.Dir, "namespace.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(objs, "\n---\n")), 0o600); err != nil {
		return err
	}
	if out, err := c.Kubectl("create", "--save-config", "-f", file); err != nil {
		return fmt.Errorf("creating the namespace: %w\n%s", err, out)
	}
	return nil
}

// kubectl runs the project's kubectl against the test cluster and returns
// its standard output and standard error apart.
func kubectl(args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// rendering is what a kustomization renders and what the API server made of
// it in a server-side dry run.
type rendering struct {
	// rendered are the objects kubectl kustomize wrote, in order.
	rendered []*unstructured.Unstructured
	// admitted are the objects the dry run returned, by kind/namespace/name.
	admitted map[string]*unstructured.Unstructured
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// renderAndDryRun renders the kustomization in dir with the project's
// kubectl and applies every object with --dry-run=server. It fails the test
// unless the server admitted each one without a warning.
func renderAndDryRun(t *testing.T, dir string) rendering {
	t.Helper()
	out, stderr, err := kubectl("kustomize", dir)
	if err != nil || stderr != "" {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	rendered := decodeAll(t, []byte(out))
	if len(rendered) == 0 {
		t.Fatalf("kubectl kustomize %s rendered nothing", dir)
	}
	file := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	applied, stderr, err := kubectl("apply", "--dry-run=server", "--validate=strict", "-f", file, "-o", "json")
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server of %s: %v\n%s", dir, err, stderr)
	}
	// Warnings include Pod Security violations of the workloads' pods.
	if stderr != "" {
		t.Errorf("kubectl apply --dry-run=server of %s warned:\n%s", dir, stderr)
	}
	r := rendering{rendered: rendered, admitted: map[string]*unstructured.Unstructured{}}
	for _, u := range decodeAll(t, []byte(applied)) {
		if u.IsList() {
			err := u.EachListItem(func(o runtime.Object) error {
				item := o.(*unstructured.Unstructured)
				r.admitted[key(item)] = item
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		r.admitted[key(u)] = u
	}
	for _, u := range rendered {
		got, ok := r.admitted[key(u)]
		if !ok {
			t.Errorf("%s: the dry run returned no %s (it returned %v)", dir, key(u), keys(r.admitted))
			continue
		}
		if got.GetUID() == "" {
			t.Errorf("%s: %s came back without a UID: not admitted by the server", dir, key(u))
		}
	}
	return r
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// decodeAll decodes a stream of YAML or JSON documents.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding: %v", err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// kustomization writes a kustomization in a temporary directory that
// renders resources and components, given relative to the module root.
func kustomization(t *testing.T, resources, components []string) string {
	t.Helper()
	dir := t.TempDir()
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			r, err := filepath.Rel(dir, filepath.Join(cluster.Root, p))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  rel(resources),
		"components": rel(components),
	}
	b, err := yaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestKustomizationsPassServerDryRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		// dir is the kustomization, relative to the module root, or
		// resources and components make one.
		dir                   string
		resources, components []string
		want                  []string // kinds, in any order
		// elsewhere are the objects, by kind/namespace/name, that are
		// not in the namespace of the deployment.
		elsewhere []string
		// check checks the rendering; checkRendering when nil.
		check func(*testing.T, rendering)
	}{
		{
			name: "base", dir: "deploy/base",
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment"},
		},
		{
			name: "sharded", dir: "deploy/sharded",
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Service", "StatefulSet"},
		},
		{
			name: "servicemonitor", dir: "deploy/servicemonitor",
			want: []string{"ServiceMonitor"},
		},
		{
			name: "base with servicemonitor", resources: []string{"deploy/base"}, components: []string{"deploy/servicemonitor"},
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment", "ServiceMonitor"},
		},
		{
			name: "sharded with servicemonitor", resources: []string{"deploy/sharded"}, components: []string{"deploy/servicemonitor"},
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Service", "StatefulSet", "ServiceMonitor"},
		},
		{
			name: "monitoring", dir: "deploy/monitoring",
			want: []string{"ServiceMonitor", "PrometheusRule", "ConfigMap"},
		},
		{
			name: "base with monitoring", resources: []string{"deploy/base"}, components: []string{"deploy/monitoring"},
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Deployment", "ServiceMonitor", "PrometheusRule", "ConfigMap"},
		},
		{
			name: "sharded with monitoring", resources: []string{"deploy/sharded"}, components: []string{"deploy/monitoring"},
			want: []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Service", "Service", "StatefulSet", "ServiceMonitor", "PrometheusRule", "ConfigMap"},
		},
		{
			name: "kube-state-metrics", dir: "deploy/kube-state-metrics",
			want:  []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment"},
			check: checkKubeStateMetricsRendering,
		},
		{
			name: "kube-state-metrics with servicemonitor", resources: []string{"deploy/kube-state-metrics"}, components: []string{"deploy/servicemonitor"},
			want:  []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment", "ServiceMonitor"},
			check: checkKubeStateMetricsRendering,
		},
		{
			name: "kube-state-metrics with monitoring", resources: []string{"deploy/kube-state-metrics"}, components: []string{"deploy/monitoring"},
			want:  []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment", "ServiceMonitor", "PrometheusRule", "ConfigMap"},
			check: checkKubeStateMetricsRendering,
		},
		{
			name: "serve", dir: "deploy/serve",
			want:      []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "ConfigMap", "Service", "Deployment"},
			elsewhere: []string{"RoleBinding/kube-system/" + queryServiceAccount + "-authentication-reader"},
			check:     checkServeRendering,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = kustomization(t, tc.resources, tc.components)
			} else {
				dir = filepath.Join(cluster.Root, dir)
			}
			r := renderAndDryRun(t, dir)
			var kinds []string
			for _, u := range r.rendered {
				kinds = append(kinds, u.GetKind())
				if ns := u.GetNamespace(); ns != "" && ns != namespace && !slices.Contains(tc.elsewhere, key(u)) {
					t.Errorf("%s is in namespace %q, want %q", key(u), ns, namespace)
				}
			}
			for _, k := range tc.elsewhere {
				if _, ok := r.admitted[k]; !ok {
					t.Errorf("no %s rendered", k)
				}
			}
			slices.Sort(kinds)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(kinds, want) {
				t.Errorf("rendered kinds %v, want %v", kinds, want)
			}
			check := tc.check
			if check == nil {
				check = checkRendering
			}
			check(t, r)
			checkMonitoring(t, r)
		})
	}
}

// checkRendering checks what every rendering must satisfy, on the objects
// as the server admitted them.
func checkRendering(t *testing.T, r rendering) {
	t.Helper()
	var services []corev1.Service
	for _, u := range r.admitted {
		switch u.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			fromUnstructured(t, u, &cr)
			checkClusterRole(t, &cr)
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, u, &d)
			checkPodTemplate(t, "Deployment "+d.Name, &d.Spec.Template, exporterPod)
			if got := ptrValue(d.Spec.Replicas); got != 1 {
				t.Errorf("Deployment %s has %d replicas, want 1", d.Name, got)
			}
			checkArgs(t, "Deployment "+d.Name, d.Spec.Template.Spec.Containers[0].Args, nil)
			checkCommand(t, "Deployment "+d.Name, d.Spec.Template.Spec.Containers[0])
		case "StatefulSet":
			var s appsv1.StatefulSet
			fromUnstructured(t, u, &s)
			checkPodTemplate(t, "StatefulSet "+s.Name, &s.Spec.Template, exporterPod)
			checkStatefulSet(t, r, &s)
		case "Service":
			var s corev1.Service
			fromUnstructured(t, u, &s)
			services = append(services, s)
		case "ConfigMap":
			var cm corev1.ConfigMap
			fromUnstructured(t, u, &cm)
			if cm.Name == dashboardConfigMap {
				break // see checkMonitoring
			}
			want, err := os.ReadFile(filepath.Join(cluster.Root, exampleFile))
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["config.yaml"] != string(want) {
				t.Errorf("ConfigMap %s: config.yaml differs from %s", cm.Name, exampleFile)
			}
		case "ServiceMonitor":
			checkServiceMonitor(t, u, r)
		case "Namespace":
			if got := u.GetLabels()["pod-security.kubernetes.io/enforce"]; got != "restricted" {
				t.Errorf("Namespace %s enforces the Pod Security Standard %q, want restricted", u.GetName(), got)
			}
		}
	}
	for _, s := range services {
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue // the sharded overlay's headless Service; see checkStatefulSet
		}
		checkMetricsService(t, &s)
	}
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("decoding %s: %v", key(u), err)
	}
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// checkClusterRole checks that the ClusterRole grants list and watch, and
// nothing else, on exactly the resources the shipped config reads.
func checkClusterRole(t *testing.T, cr *rbacv1.ClusterRole) {
	t.Helper()
	if cr.AggregationRule != nil {
		t.Errorf("ClusterRole %s aggregates other roles", cr.Name)
	}
	granted := map[string]bool{}
	for _, rule := range cr.Rules {
		if !slices.Equal(slices.Sorted(slices.Values(rule.Verbs)), []string{"list", "watch"}) {
			t.Errorf("ClusterRole %s grants verbs %v, want exactly [list watch]", cr.Name, rule.Verbs)
		}
		if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
			t.Errorf("ClusterRole %s has a rule with non-resource URLs or resource names: %+v", cr.Name, rule)
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				if g == "*" || res == "*" || strings.Contains(res, "/") {
					t.Errorf("ClusterRole %s grants %q in group %q: want plain resources, no wildcard or subresource", cr.Name, res, g)
				}
				granted[qualified(res, g)] = true
			}
		}
	}
	want := configResources(t, filepath.Join(cluster.Root, shippedFile))
	if got := keys(granted); !slices.Equal(got, want) {
		t.Errorf("ClusterRole %s grants list and watch on %v; %s reads %v", cr.Name, got, shippedFile, want)
	}
}

// qualified returns resource.group, or the resource for the core group.
func qualified(resource, group string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// podWant is what checkPodTemplate expects of a pod besides its security:
// its service account, and the container port its probes use.
type podWant struct {
	serviceAccount string
	portName       string
	port           int32
	// scheme is the probes' scheme.
	scheme corev1.URIScheme
	// noConfig: the pod mounts no config file (it serves a profile).
	noConfig bool
}

// exporterPod is the exporter's pod: metrics and probes over HTTP on 10149.
var exporterPod = podWant{serviceAccount: serviceAccount, portName: "http-metrics", port: 10149, scheme: corev1.URISchemeHTTP}

// checkPodTemplate checks a pod of the deployment: image, probes, and a
// container that runs as non-root with a read-only root filesystem, no
// privilege escalation, no capabilities and the runtime's seccomp profile.
func checkPodTemplate(t *testing.T, what string, tpl *corev1.PodTemplateSpec, want podWant) {
	t.Helper()
	spec := tpl.Spec
	if spec.ServiceAccountName != want.serviceAccount {
		t.Errorf("%s: serviceAccountName %q, want %s", what, spec.ServiceAccountName, want.serviceAccount)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: shares a host namespace", what)
	}
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(spec.Containers))
	}
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		name := what + " container " + c.Name
		if !ptrValue(first(sc.RunAsNonRoot, pod.RunAsNonRoot)) {
			t.Errorf("%s: runAsNonRoot is not true", name)
		}
		if uid := first(sc.RunAsUser, pod.RunAsUser); uid != nil && *uid == 0 {
			t.Errorf("%s: runs as user 0", name)
		}
		if !ptrValue(sc.ReadOnlyRootFilesystem) {
			t.Errorf("%s: readOnlyRootFilesystem is not true", name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", name)
		}
		if ptrValue(sc.Privileged) {
			t.Errorf("%s: privileged", name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: capabilities %+v, want drop [ALL] and no add", name, sc.Capabilities)
		}
		if p := first(sc.SeccompProfile, pod.SeccompProfile); p == nil || p.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: seccomp profile %+v, want RuntimeDefault", name, p)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: resources %+v: want cpu and memory requests and a memory limit", name, c.Resources)
		}
	}
	c := spec.Containers[0]
	if c.Image != image {
		t.Errorf("%s: image %q, want %q", what, c.Image, image)
	}
	checkProbe(t, what+" liveness probe", c.LivenessProbe, "/healthz", want)
	checkProbe(t, what+" readiness probe", c.ReadinessProbe, "/readyz", want)
	var port *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == want.portName {
			port = &c.Ports[i]
		}
	}
	if port == nil || port.ContainerPort != want.port {
		t.Errorf("%s: ports %+v, want %s on %d", what, c.Ports, want.portName, want.port)
	}
	// Workload objects are not checked by Pod Security admission; their
	// pods are. Dry-run one in the namespace, which enforces the
	// restricted standard as deploy/base and deploy/serve create it.
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kubectl-informer-", Namespace: namespace, Labels: tpl.Labels},
		Spec:       *spec.DeepCopy(),
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	if _, err := cluster.Client.CoreV1().Pods(namespace).Create(context.Background(), p, dry); err != nil {
		t.Errorf("%s: a pod from the template is refused: %v", what, err)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/etc/kubectl-informer" && m.ReadOnly && m.SubPath == "" {
			mounted = true
		}
	}
	if !mounted && !want.noConfig {
		t.Errorf("%s: the config is not mounted read-only, without subPath, at /etc/kubectl-informer", what)
	}
	if mounted && want.noConfig {
		t.Errorf("%s mounts a config at /etc/kubectl-informer; it serves a profile", what)
	}
}

func first[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func checkProbe(t *testing.T, what string, p *corev1.Probe, path string, want podWant) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: want an HTTP GET of %s", what, path)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != want.portName || p.HTTPGet.Scheme != want.scheme {
		t.Errorf("%s: GET %s %s on port %s, want %s %s on %s", what, p.HTTPGet.Scheme, p.HTTPGet.Path, p.HTTPGet.Port.String(), want.scheme, path, want.portName)
	}
}

// checkCommand checks that a container running one of the plugin's verbs
// names the image's binary as its command: the image's entrypoint is the
// kube-state-metrics drop-in, which args alone would follow.
func checkCommand(t *testing.T, what string, c corev1.Container) {
	t.Helper()
	if want := []string{ociimage.BinaryPath}; !slices.Equal(c.Command, want) {
		t.Errorf("%s: command %q, want %q: the image's entrypoint is the kube-state-metrics drop-in, which args alone would follow", what, c.Command, want)
	}
}

// checkArgs checks the exporter's arguments: the base ones, then extra.
func checkArgs(t *testing.T, what string, args, extra []string) {
	t.Helper()
	want := append([]string{"export", "--config=/etc/kubectl-informer/config.yaml", "--web.listen-address=:10149"}, extra...)
	if !slices.Equal(args, want) {
		t.Errorf("%s: args %q, want %q", what, args, want)
	}
}

// checkStatefulSet checks the sharded overlay: three replicas, each passing
// its ordinal as --shard, governed by a headless Service.
func checkStatefulSet(t *testing.T, r rendering, s *appsv1.StatefulSet) {
	t.Helper()
	what := "StatefulSet " + s.Name
	if got := ptrValue(s.Spec.Replicas); got != 3 {
		t.Errorf("%s: %d replicas, want 3", what, got)
	}
	c := s.Spec.Template.Spec.Containers[0]
	checkArgs(t, what, c.Args, []string{"--shard=$(SHARD)", "--total-shards=3"})
	checkCommand(t, what, c)
	var shard *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "SHARD" {
			shard = &c.Env[i]
		}
	}
	if shard == nil || shard.ValueFrom == nil || shard.ValueFrom.FieldRef == nil ||
		shard.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("%s: SHARD %+v, want the downward API label apps.kubernetes.io/pod-index", what, shard)
	}
	headless, ok := r.admitted["Service/"+s.Namespace+"/"+s.Spec.ServiceName]
	if !ok {
		t.Fatalf("%s: no Service %q", what, s.Spec.ServiceName)
	}
	var svc corev1.Service
	fromUnstructured(t, headless, &svc)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("%s: Service %s is not headless (clusterIP %q)", what, svc.Name, svc.Spec.ClusterIP)
	}
	if !selects(svc.Spec.Selector, s.Spec.Template.Labels) {
		t.Errorf("%s: Service %s selector %v does not select the pods %v", what, svc.Name, svc.Spec.Selector, s.Spec.Template.Labels)
	}
	if _, ok := r.admitted["Deployment/"+s.Namespace+"/"+s.Name]; ok {
		t.Errorf("%s: the base Deployment is still there", what)
	}
}

// checkMetricsService checks the scrape target: port 10149 named
// http-metrics, with the prometheus.io annotations.
func checkMetricsService(t *testing.T, s *corev1.Service) {
	t.Helper()
	what := "Service " + s.Name
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != "http-metrics" || s.Spec.Ports[0].Port != 10149 {
		t.Errorf("%s: ports %+v, want http-metrics on 10149", what, s.Spec.Ports)
	}
	for k, v := range map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "10149", "prometheus.io/path": "/metrics"} {
		if got := s.Annotations[k]; got != v {
			t.Errorf("%s: annotation %s=%q, want %q", what, k, got, v)
		}
	}
}

// checkServiceMonitor checks that the ServiceMonitor scrapes http-metrics
// with honorLabels and selects the metrics Service, not the headless one.
func checkServiceMonitor(t *testing.T, u *unstructured.Unstructured, r rendering) {
	t.Helper()
	endpoints, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor: %d endpoints, want 1", len(endpoints))
	}
	ep, _ := endpoints[0].(map[string]any)
	if ep["port"] != "http-metrics" || ep["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoint %v: want port http-metrics and honorLabels true", ep)
	}
	selector, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	if len(selector) == 0 {
		t.Fatal("ServiceMonitor: no spec.selector.matchLabels")
	}
	for _, obj := range r.admitted {
		if obj.GetKind() != "Service" {
			continue
		}
		var s corev1.Service
		fromUnstructured(t, obj, &s)
		metrics := s.Spec.ClusterIP != corev1.ClusterIPNone
		if got := selects(selector, s.Labels); got != metrics {
			t.Errorf("ServiceMonitor selector %v selects Service %s: %v, want %v", selector, s.Name, got, metrics)
		}
	}
}

// selects reports whether every label of selector is in labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// TestShippedConfigIsTheExample checks that the config of deploy/base is
// examples/kube-state-metrics-pods.yaml, byte for byte.
func TestShippedConfigIsTheExample(t *testing.T) {
	checkCopy(t, shippedFile, exampleFile)
}

// checkCopy checks that the file copied, relative to the repository's
// root, holds exactly what original does.
func checkCopy(t *testing.T, copied, original string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(cluster.Root, copied))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(cluster.Root, original))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s: copy it again (cp %s %s)", copied, original, original, copied)
	}
}

// dashboardConfigMap is the ConfigMap of deploy/monitoring that holds the
// Grafana dashboard.
const dashboardConfigMap = "kubectl-informer-dashboard"

// checkMonitoring checks the objects of deploy/monitoring in a rendering
// that has them: the PrometheusRule holds the groups of the plain rules
// file; the dashboard's ConfigMap holds dashboard.json as it is,
// labelled for Grafana's dashboard sidecar.
func checkMonitoring(t *testing.T, r rendering) {
	t.Helper()
	for _, u := range r.admitted {
		switch {
		case u.GetKind() == "PrometheusRule":
			var file struct {
				Groups []any `json:"groups"`
			}
			b, err := os.ReadFile(filepath.Join(cluster.Root, "deploy/monitoring/rules.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &file); err != nil {
				t.Fatal(err)
			}
			groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
			if len(file.Groups) == 0 || !equalJSON(t, groups, file.Groups) {
				t.Errorf("the admitted PrometheusRule %s does not hold the groups of deploy/monitoring/rules.yaml", u.GetName())
			}
			// The alerts hold under any job name (test/e2e/prometheus
			// checks that no rule names one), so the ServiceMonitor may
			// name the job as it likes.
		case u.GetKind() == "ConfigMap" && u.GetName() == dashboardConfigMap:
			var cm corev1.ConfigMap
			fromUnstructured(t, u, &cm)
			want, err := os.ReadFile(filepath.Join(cluster.Root, "deploy/monitoring/dashboard.json"))
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["kubectl-informer.json"] != string(want) {
				t.Errorf("ConfigMap %s: kubectl-informer.json differs from deploy/monitoring/dashboard.json", cm.Name)
			}
			if cm.Labels["grafana_dashboard"] != "1" {
				t.Errorf("ConfigMap %s has labels %v, want grafana_dashboard: \"1\"", cm.Name, cm.Labels)
			}
		}
	}
}

// equalJSON reports whether a and b encode to the same JSON.
func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

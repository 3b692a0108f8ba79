package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// kube-prometheus' setup of kube-state-metrics, which deploy/kube-prometheus
// reproduces.
const (
	monitoringNamespace = "monitoring"
	// ksmName names kube-prometheus' kube-state-metrics objects and, through
	// the ServiceMonitor's jobLabel, the scrape job.
	ksmName = "kube-state-metrics"
	// prometheusAccount is kube-prometheus' Prometheus service account.
	prometheusAccount = "prometheus-k8s"
	jobLabel          = "app.kubernetes.io/name"
)

// kubePrometheusArgs are the arguments kube-prometheus gives
// kube-state-metrics: both ports on loopback, behind kube-rbac-proxy.
var kubePrometheusArgs = []string{"--host=127.0.0.1", "--port=8081", "--telemetry-host=127.0.0.1", "--telemetry-port=8082"}

// createMonitoringNamespace creates the namespace the manifests of
// deploy/kube-prometheus go to, enforcing the restricted Pod Security
// Standard so that the pods dry-run below are held to it, and the
// exporter's ServiceAccount the pods name.
func createMonitoringNamespace(t *testing.T) {
	t.Helper()
	// Created with --save-config, as kubectl apply would, so that the dry
	// runs of kubectl apply find them as applied and do not warn.
	objs := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: %[2]s
  namespace: %[1]s
`, monitoringNamespace, ksmName)
	file := filepath.Join(t.TempDir(), "monitoring.yaml")
	if err := os.WriteFile(file, []byte(objs), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := kubectl("create", "--save-config", "-f", file); err != nil && !strings.Contains(stderr, "AlreadyExists") {
		t.Fatalf("creating namespace %s: %v\n%s", monitoringNamespace, err, stderr)
	}
}

// TestKubePrometheusManifests server-side dry-runs deploy/kube-prometheus'
// two variants and checks them as kube-prometheus' Prometheus would use
// them: two targets per pod (main and telemetry port), named
// job="kube-state-metrics", reachable only as the NetworkPolicy allows; the
// exporter's pod with kube-prometheus' arguments (behind kube-rbac-proxy)
// or with --auth-filter; its ClusterRole; the exporter's own alerts and
// dashboard in the namespace; and, applied for real, the RBAC that lets
// Prometheus' service account discover the endpoints and get /metrics.
func TestKubePrometheusManifests(t *testing.T) {
	createMonitoringNamespace(t)
	for _, tc := range []struct {
		dir string
		// containers are the pod's containers, in order.
		containers []string
		// ports are the Service's ports, main then telemetry.
		ports []string
	}{
		{dir: "deploy/kube-prometheus/kube-rbac-proxy", containers: []string{ksmName, "kube-rbac-proxy-main", "kube-rbac-proxy-self"}, ports: []string{"https-main", "https-self"}},
		{dir: "deploy/kube-prometheus/auth-filter", containers: []string{ksmName}, ports: []string{"http-metrics", "telemetry"}},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			r := renderAndDryRun(t, filepath.Join(cluster.Root, tc.dir))
			var kinds []string
			for _, u := range r.rendered {
				kinds = append(kinds, u.GetKind())
				if ns := u.GetNamespace(); ns != "" && ns != monitoringNamespace {
					t.Errorf("%s is in namespace %q, want %q", key(u), ns, monitoringNamespace)
				}
			}
			slices.Sort(kinds)
			want := []string{"ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding", "ConfigMap", "Deployment",
				"NetworkPolicy", "PrometheusRule", "Role", "RoleBinding", "Service", "ServiceAccount", "ServiceMonitor"}
			if !slices.Equal(kinds, want) {
				t.Errorf("rendered kinds %v, want %v", kinds, want)
			}
			get := func(kind, name string, into any) {
				t.Helper()
				ns := monitoringNamespace
				if strings.HasPrefix(kind, "Cluster") {
					ns = ""
				}
				u, ok := r.admitted[kind+"/"+ns+"/"+name]
				if !ok {
					t.Fatalf("no %s %s rendered; rendered: %v", kind, name, keys(r.admitted))
				}
				fromUnstructured(t, u, into)
			}
			var d appsv1.Deployment
			get("Deployment", ksmName, &d)
			var svc corev1.Service
			get("Service", ksmName, &svc)
			var np networkingv1.NetworkPolicy
			get("NetworkPolicy", ksmName, &np)
			var role rbacv1.ClusterRole
			get("ClusterRole", ksmName, &role)
			checkKubePrometheusPod(t, &d, tc.containers)
			checkKubePrometheusService(t, &svc, &d, tc.ports)
			checkKubePrometheusServiceMonitor(t, r.admitted["ServiceMonitor/"+monitoringNamespace+"/"+ksmName], &svc, tc.ports)
			checkKubePrometheusNetworkPolicy(t, &np, &d, &svc)
			checkKubePrometheusClusterRole(t, &role)
			checkMonitoring(t, r)
		})
	}
	t.Run("Prometheus may discover and scrape", func(t *testing.T) {
		checkPrometheusAccess(t, "deploy/kube-prometheus/kube-rbac-proxy")
	})
}

// checkKubePrometheusPod checks the exporter's pod: the project's image run
// with kube-prometheus' arguments behind two kube-rbac-proxy sidecars
// forwarding to its ports, or alone with --auth-filter and probes; every
// container restricted (the namespace enforces it on a dry-run pod).
func checkKubePrometheusPod(t *testing.T, d *appsv1.Deployment, containers []string) {
	t.Helper()
	spec := d.Spec.Template.Spec
	var names []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, containers) {
		t.Fatalf("Deployment %s has containers %v, want %v", d.Name, names, containers)
	}
	if spec.ServiceAccountName != ksmName || !ptrValue(spec.AutomountServiceAccountToken) {
		t.Errorf("Deployment %s: service account %q (token mounted: %v), want %s with its token", d.Name, spec.ServiceAccountName, ptrValue(spec.AutomountServiceAccountToken), ksmName)
	}
	exporter := spec.Containers[0]
	if exporter.Image != image {
		t.Errorf("Deployment %s: image %q, want %q", d.Name, exporter.Image, image)
	}
	if len(exporter.Command) > 0 {
		t.Errorf("Deployment %s: command %q: the image's entrypoint (/kube-state-metrics) must run, as kube-state-metrics' does", d.Name, exporter.Command)
	}
	if len(containers) > 1 {
		if !slices.Equal(exporter.Args, kubePrometheusArgs) {
			t.Errorf("Deployment %s: args %q, want kube-prometheus' %q", d.Name, exporter.Args, kubePrometheusArgs)
		}
		// Each proxy forwards to one of the exporter's loopback ports.
		for i, upstream := range []string{"--upstream=http://127.0.0.1:8081/", "--upstream=http://127.0.0.1:8082/"} {
			if c := spec.Containers[i+1]; !slices.Contains(c.Args, upstream) {
				t.Errorf("Deployment %s: container %s args %q, want %s", d.Name, c.Name, c.Args, upstream)
			}
		}
	} else {
		if !slices.Contains(exporter.Args, "--auth-filter") {
			t.Errorf("Deployment %s: args %q, want --auth-filter", d.Name, exporter.Args)
		}
		for _, p := range []struct {
			probe       *corev1.Probe
			path, port  string
			description string
		}{
			{exporter.LivenessProbe, "/livez", "http-metrics", "liveness"},
			{exporter.ReadinessProbe, "/readyz", "telemetry", "readiness"},
		} {
			if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != p.port {
				t.Errorf("Deployment %s: %s probe %+v, want GET %s on %s", d.Name, p.description, p.probe, p.path, p.port)
			}
		}
	}
	for _, c := range spec.Containers {
		sc := c.SecurityContext
		if sc == nil || !ptrValue(sc.RunAsNonRoot) || !ptrValue(sc.ReadOnlyRootFilesystem) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("Deployment %s: container %s: security context %+v, want non-root, read-only root, no privilege escalation", d.Name, c.Name, sc)
		}
		if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("Deployment %s: container %s: resources %+v, want memory requests and limits", d.Name, c.Name, c.Resources)
		}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: ksmName + "-", Namespace: monitoringNamespace, Labels: d.Spec.Template.Labels},
		Spec:       *spec.DeepCopy(),
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	if _, err := cluster.Client.CoreV1().Pods(monitoringNamespace).Create(context.Background(), p, dry); err != nil {
		t.Errorf("Deployment %s: a pod from the template is refused: %v", d.Name, err)
	}
}

// containerPort finds the pod's container port a Service's targetPort
// names.
func containerPort(spec *corev1.PodSpec, target intstr.IntOrString) (string, int32, bool) {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if (target.Type == intstr.String && p.Name == target.StrVal) || (target.Type == intstr.Int && p.ContainerPort == target.IntVal) {
				return c.Name, p.ContainerPort, true
			}
		}
	}
	return "", 0, false
}

// checkKubePrometheusService checks that the Service selects the pods, is
// labelled with the job's name, and has the two ports, each reaching a
// port of the pod.
func checkKubePrometheusService(t *testing.T, s *corev1.Service, d *appsv1.Deployment, ports []string) {
	t.Helper()
	if !selects(s.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("Service %s: selector %v does not select the pods %v", s.Name, s.Spec.Selector, d.Spec.Template.Labels)
	}
	if got := s.Labels[jobLabel]; got != ksmName {
		t.Errorf("Service %s: label %s=%q, want %q: the ServiceMonitor names the job after it", s.Name, jobLabel, got, ksmName)
	}
	var names []string
	for _, p := range s.Spec.Ports {
		names = append(names, p.Name)
		if _, _, ok := containerPort(&d.Spec.Template.Spec, p.TargetPort); !ok {
			t.Errorf("Service %s: port %s targets %s, which no container of the pod has", s.Name, p.Name, p.TargetPort.String())
		}
	}
	if !slices.Equal(names, ports) {
		t.Errorf("Service %s: ports %v, want %v", s.Name, names, ports)
	}
}

// checkKubePrometheusServiceMonitor checks that the ServiceMonitor makes
// both ports targets of job="kube-state-metrics", honoring the labels of
// the main port's series.
func checkKubePrometheusServiceMonitor(t *testing.T, u *unstructured.Unstructured, s *corev1.Service, ports []string) {
	t.Helper()
	if u == nil {
		t.Fatal("no ServiceMonitor kube-state-metrics rendered")
	}
	var sm struct {
		Spec struct {
			JobLabel  string `json:"jobLabel"`
			Selector  metav1.LabelSelector
			Endpoints []struct {
				Port        string `json:"port"`
				Scheme      string `json:"scheme"`
				HonorLabels bool   `json:"honorLabels"`
				BearerToken string `json:"bearerTokenFile"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	fromUnstructured(t, u, &sm)
	if job := s.Labels[sm.Spec.JobLabel]; sm.Spec.JobLabel == "" || job != ksmName {
		t.Errorf("ServiceMonitor: jobLabel %q gives the job %q, want %q", sm.Spec.JobLabel, job, ksmName)
	}
	if !selects(sm.Spec.Selector.MatchLabels, s.Labels) {
		t.Errorf("ServiceMonitor: selector %v does not select the Service %v", sm.Spec.Selector.MatchLabels, s.Labels)
	}
	var got []string
	for i, ep := range sm.Spec.Endpoints {
		got = append(got, ep.Port)
		if ep.BearerToken == "" {
			t.Errorf("ServiceMonitor endpoint %s sends no bearer token", ep.Port)
		}
		wantScheme := "http"
		if strings.HasPrefix(ep.Port, "https") {
			wantScheme = "https"
		}
		if ep.Scheme != wantScheme {
			t.Errorf("ServiceMonitor endpoint %s: scheme %q, want %q", ep.Port, ep.Scheme, wantScheme)
		}
		if i == 0 && !ep.HonorLabels {
			t.Errorf("ServiceMonitor endpoint %s: honorLabels is not set", ep.Port)
		}
	}
	if !slices.Equal(got, ports) {
		t.Errorf("ServiceMonitor scrapes the ports %v, want both %v", got, ports)
	}
}

// checkKubePrometheusNetworkPolicy checks that the policy selects the pods
// and admits Prometheus' pods on exactly the container ports the Service
// reaches.
func checkKubePrometheusNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, d *appsv1.Deployment, s *corev1.Service) {
	t.Helper()
	if !selects(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("NetworkPolicy %s selects %v, not the pods %v", np.Name, np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels)
	}
	var want, got []string
	for _, p := range s.Spec.Ports {
		if _, port, ok := containerPort(&d.Spec.Template.Spec, p.TargetPort); ok {
			want = append(want, fmt.Sprint(port))
		}
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("NetworkPolicy %s: %d ingress rules, want 1", np.Name, len(np.Spec.Ingress))
	}
	in := np.Spec.Ingress[0]
	for _, p := range in.Ports {
		got = append(got, p.Port.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("NetworkPolicy %s admits ports %v, want the Service's %v", np.Name, got, want)
	}
	if len(in.From) != 1 || in.From[0].PodSelector == nil || in.From[0].PodSelector.MatchLabels[jobLabel] != "prometheus" {
		t.Errorf("NetworkPolicy %s admits %+v, want Prometheus' pods", np.Name, in.From)
	}
}

// checkKubePrometheusClusterRole checks that the exporter may list and
// watch every resource of the profile, and create the token and access
// reviews of kube-rbac-proxy and --auth-filter; nothing else.
func checkKubePrometheusClusterRole(t *testing.T, cr *rbacv1.ClusterRole) {
	t.Helper()
	listed := map[string]bool{}
	for _, rule := range cr.Rules {
		if len(rule.NonResourceURLs)+len(rule.ResourceNames) > 0 {
			t.Errorf("ClusterRole %s: rule %+v names URLs or objects", cr.Name, rule)
		}
		verbs := slices.Sorted(slices.Values(rule.Verbs))
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				q := qualified(res, g)
				switch {
				case slices.Equal(verbs, []string{"list", "watch"}):
					listed[q] = true
				case slices.Equal(verbs, []string{"create"}) && (q == "tokenreviews.authentication.k8s.io" || q == "subjectaccessreviews.authorization.k8s.io"):
				default:
					t.Errorf("ClusterRole %s grants %v on %s", cr.Name, verbs, q)
				}
			}
		}
	}
	if got, want := keys(listed), profileResources(t); !slices.Equal(got, want) {
		t.Errorf("ClusterRole %s grants list and watch on %v; the profile reads %v", cr.Name, got, want)
	}
}

// checkPrometheusAccess applies the RBAC objects of the kustomization in
// dir for real and checks, with access reviews, that Prometheus' service
// account may get /metrics (what kube-rbac-proxy and --auth-filter ask)
// and discover the endpoints in the namespace, and not elsewhere.
func checkPrometheusAccess(t *testing.T, dir string) {
	t.Helper()
	out, stderr, err := kubectl("kustomize", filepath.Join(cluster.Root, dir))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	var rbac []string
	for _, u := range decodeAll(t, []byte(out)) {
		if k := u.GetKind(); k == "Role" || k == "RoleBinding" || (strings.HasPrefix(k, "ClusterRole") && strings.Contains(u.GetName(), "scraper")) {
			b, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			rbac = append(rbac, string(b))
		}
	}
	if len(rbac) != 4 {
		t.Fatalf("%s renders %d RBAC objects for Prometheus, want a ClusterRole, a Role and their bindings", dir, len(rbac))
	}
	file := filepath.Join(t.TempDir(), "rbac.json")
	if err := os.WriteFile(file, []byte(strings.Join(rbac, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := kubectl("apply", "-f", file); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _, _, _ = kubectl("delete", "-f", file) })
	user := serviceAccountUser(monitoringNamespace, prometheusAccount)
	review := func(spec authorizationv1.SubjectAccessReviewSpec) bool {
		spec.User = user
		spec.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + monitoringNamespace, "system:authenticated"}
		got, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(),
			&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Allowed
	}
	metrics := authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}
	framework.Eventually(t, user+" may get /metrics", func() bool { return review(metrics) })
	for _, res := range []string{"endpointslices.discovery.k8s.io", "services", "pods", "endpoints"} {
		name, group, _ := strings.Cut(res, ".")
		for _, verb := range []string{"get", "list", "watch"} {
			in := func(ns string) authorizationv1.SubjectAccessReviewSpec {
				return authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: verb, Group: group, Resource: name, Namespace: ns,
				}}
			}
			// The authorizer sees the RoleBinding when its informer does.
			framework.Eventually(t, fmt.Sprintf("%s may %s %s in %s", user, verb, res, monitoringNamespace), func() bool {
				return review(in(monitoringNamespace))
			})
			if review(in("default")) {
				t.Errorf("%s may %s %s in default; the Role is for %s only", user, verb, res, monitoringNamespace)
			}
		}
	}
	if review(authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "post"}}) {
		t.Errorf("%s may post to /metrics; want get only", user)
	}
}

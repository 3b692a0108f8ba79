package charts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// The names the chart gives the release's objects: RELEASE-NAME, NAME
// being kube-state-metrics in the drop-in mode.
const (
	dropIn   = releaseName + "-kube-state-metrics"
	exporter = releaseName + "-kubectl-informer"
	query    = releaseName + "-kubectl-informer-query"
)

func TestLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("the chart's ci/ values files: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = releaseNamespace
			res := lint.Run([]string{chartDir}, valuesFile(t, filepath.Base(file)))
			for _, m := range res.Messages {
				t.Log(m)
			}
			if len(res.Errors) > 0 || res.TotalChartsLinted != 1 {
				t.Fatalf("helm lint --strict: %d charts linted, errors: %v", res.TotalChartsLinted, res.Errors)
			}
		})
	}
}

// TestDefaultValues renders the chart's defaults: the drop-in for
// kube-state-metrics, named and labelled kube-state-metrics, run with
// kube-state-metrics' command line on the image's entrypoint, probed as
// kube-state-metrics' chart probes it, and granted list and watch on each
// collector.
func TestDefaultValues(t *testing.T) {
	ch := loadChart(t)
	objs := render(t, nil)
	tmpl, c := exporterContainer(t, objs, "Deployment", dropIn)
	if want := "ghcr.io/kubectl-informer/kubectl-informer:v" + ch.Metadata.AppVersion; c.Image != want {
		t.Errorf("image %q, want %q", c.Image, want)
	}
	// The chart's appVersion is the release the manifests of deploy/ run.
	base, err := os.ReadFile("../deploy/base/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(base), "image: "+c.Image+"\n") {
		t.Errorf("the chart's image %s is not the one deploy/base/deployment.yaml runs: update appVersion in Chart.yaml", c.Image)
	}
	if c.Name != "kube-state-metrics" || tmpl.Labels["app.kubernetes.io/name"] != "kube-state-metrics" {
		t.Errorf("container %q with app.kubernetes.io/name %q, want kube-state-metrics for both", c.Name, tmpl.Labels["app.kubernetes.io/name"])
	}
	if len(c.Command) != 0 {
		t.Errorf("command %q: the drop-in runs the image's entrypoint, /kube-state-metrics", c.Command)
	}
	fs := parseKSMArgs(t, c.Args)
	var collectors []string
	for _, r := range ch.Values["collectors"].([]any) {
		collectors = append(collectors, r.(string))
	}
	if got, want := flag(fs, "resources"), strings.Join(collectors, ","); got != want {
		t.Errorf("--resources=%s, want the collectors %s", got, want)
	}
	if got := flag(fs, "port"); got != "8080" {
		t.Errorf("--port=%s, want 8080", got)
	}
	checkPorts(t, c, map[string]int32{"http": 8080, "metrics": 8081})
	checkProbe(t, "liveness", c.LivenessProbe, "/livez", "http", corev1.URISchemeHTTP)
	checkProbe(t, "readiness", c.ReadinessProbe, "/readyz", "metrics", corev1.URISchemeHTTP)
	if c.StartupProbe != nil {
		t.Errorf("a startup probe, though startupProbe.enabled is false")
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("the container's root filesystem is writable: %+v", sc)
	}

	role := into[rbacv1.ClusterRole](t, objs.find(t, "ClusterRole", dropIn))
	for _, r := range collectors {
		if !allows(role.Rules, r, "list") || !allows(role.Rules, r, "watch") {
			t.Errorf("the ClusterRole does not grant list and watch on %s: %v", r, role.Rules)
		}
	}
	if allows(role.Rules, "tokenreviews", "create") {
		t.Errorf("the ClusterRole grants tokenreviews without kubeRBACProxy or authFilter")
	}
	binding := into[rbacv1.ClusterRoleBinding](t, objs.find(t, "ClusterRoleBinding", dropIn))
	if binding.RoleRef.Name != dropIn || len(binding.Subjects) != 1 || binding.Subjects[0].Name != dropIn || binding.Subjects[0].Namespace != releaseNamespace {
		t.Errorf("the ClusterRoleBinding binds %+v to %+v, want the ClusterRole to ServiceAccount %s/%s", binding.RoleRef, binding.Subjects, releaseNamespace, dropIn)
	}
	if tmpl.Spec.ServiceAccountName != dropIn {
		t.Errorf("the pod runs as %q, want %q", tmpl.Spec.ServiceAccountName, dropIn)
	}
	objs.find(t, "ServiceAccount", dropIn)
	svc := into[corev1.Service](t, objs.find(t, "Service", dropIn))
	if svc.Annotations["prometheus.io/scrape"] != "true" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("Service annotations %v, ports %+v: want prometheus.io/scrape and the port http 8080 alone", svc.Annotations, svc.Spec.Ports)
	}
	for _, kind := range []string{"ServiceMonitor", "NetworkPolicy", "PodDisruptionBudget", "StatefulSet", "Role"} {
		if got := objs.kind(kind); len(got) != 0 {
			t.Errorf("%s rendered by default: %s", kind, got)
		}
	}
}

// TestJobIsKubeStateMetrics checks that the ServiceMonitor makes the job
// kube-state-metrics in the drop-in mode, where kube-prometheus' rules and
// dashboards look for it: the value of the Service label it names.
func TestJobIsKubeStateMetrics(t *testing.T) {
	for _, tc := range []struct{ values, service, job string }{
		{"prometheus: {monitor: {enabled: true}}", dropIn, "kube-state-metrics"},
		{"prometheus: {monitor: {enabled: true}}\nnameOverride: ksm", releaseName + "-ksm", "ksm"},
		{"prometheus: {monitor: {enabled: true}}\nmode: export\nexport: {profile: kube-state-metrics}", exporter, "kubectl-informer"},
	} {
		t.Run(tc.job, func(t *testing.T) {
			objs := render(t, parseValues(t, tc.values))
			svc := objs.find(t, "Service", tc.service)
			sm := objs.find(t, "ServiceMonitor", tc.service)
			jobLabel, _, _ := unstructured.NestedString(sm.Object, "spec", "jobLabel")
			if got := svc.GetLabels()[jobLabel]; jobLabel == "" || got != tc.job {
				t.Errorf("the ServiceMonitor's jobLabel %q has the value %q on the Service, want the job %q", jobLabel, got, tc.job)
			}
			sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			if !selector(t, sel).Matches(labels.Set(svc.GetLabels())) {
				t.Errorf("the ServiceMonitor's selector %v does not select the Service (%v)", sel, svc.GetLabels())
			}
		})
	}
}

// TestDropInArgs renders values that set kube-state-metrics' flags and
// checks each against kube-state-metrics' own flag syntax and meaning.
func TestDropInArgs(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         map[string]string
	}{{
		name: "lists",
		values: `
metricAllowlist: [kube_pod_info, "kube_deployment_.*"]
metricLabelsAllowlist: ["pods=[app,team]", "namespaces=[*]"]
metricAnnotationsAllowList: ["pods=[owner]"]
collectors: [pods, deployments, secrets]
collectorsExclude: [secrets]
collectorsExtra: [namespaces, pods]
namespaces: "shop,{{ .Release.Name }}-apps"
releaseNamespace: true
namespacesDenylist: [kube-system]
extraArgs: [--enable-gzip-encoding, --use-apiserver-cache]`,
		want: map[string]string{
			"metric-allowlist":             "kube_pod_info,kube_deployment_.*",
			"metric-labels-allowlist":      "pods=[app,team],namespaces=[*]",
			"metric-annotations-allowlist": "pods=[owner]",
			"resources":                    "pods,deployments,namespaces",
			"namespaces":                   "shop,prom-apps,monitoring",
			"namespaces-denylist":          "kube-system",
			"enable-gzip-encoding":         "true",
			"use-apiserver-cache":          "true",
		},
	}, {
		name:   "denylist",
		values: "metricDenylist: [kube_secret_.*]",
		want:   map[string]string{"metric-denylist": "kube_secret_.*"},
	}, {
		name:   "telemetry",
		values: "selfMonitor: {enabled: true, telemetryHost: 0.0.0.0, telemetryPort: 9999}\nservice: {port: 8088}",
		want:   map[string]string{"telemetry-host": "0.0.0.0", "telemetry-port": "9999", "port": "8088"},
	}, {
		name:   "kubeconfig",
		values: "kubeconfig: {enabled: true, secret: YXBpVmVyc2lvbjogdjEK}",
		want:   map[string]string{"kubeconfig": "/opt/k8s/.kube/config"},
	}, {
		name:   "custom resource state",
		values: "customResourceState: {enabled: true, key: crs.yaml, config: {kind: CustomResourceStateMetrics, spec: {resources: []}}}",
		want:   map[string]string{"custom-resource-state-config-file": "/etc/customresourcestate/crs.yaml"},
	}, {
		name:   "auth filter",
		values: "authFilter: {enabled: true}",
		want:   map[string]string{"auth-filter": "true"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, parseValues(t, tc.values))
			_, c := exporterContainer(t, objs, "Deployment", dropIn)
			fs := parseKSMArgs(t, c.Args)
			for name, want := range tc.want {
				if got := flag(fs, name); got != want {
					t.Errorf("--%s=%q, want %q", name, got, want)
				}
			}
			// A file flag names a file that a volume of the pod mounts.
			for _, name := range []string{"kubeconfig", "custom-resource-state-config-file"} {
				if f := flag(fs, name); f != "" && !mounted(c, f) {
					t.Errorf("--%s=%s: no volume is mounted there (%+v)", name, f, c.VolumeMounts)
				}
			}
		})
	}
}

// TestAutosharding checks the StatefulSet of shards: in the drop-in mode
// each replica finds its shard from its StatefulSet, as kube-state-metrics
// does, with the Role that needs; in the export mode from its pod's index.
func TestAutosharding(t *testing.T) {
	t.Run("kube-state-metrics", func(t *testing.T) {
		objs := render(t, parseValues(t, "autosharding: {enabled: true}\nreplicas: 3"))
		sts := objs.find(t, "StatefulSet", dropIn)
		if name, _, _ := unstructured.NestedString(sts.Object, "spec", "serviceName"); name != dropIn {
			t.Errorf("serviceName %q, want the Service %q", name, dropIn)
		}
		_, c := exporterContainer(t, objs, "StatefulSet", dropIn)
		fs := parseKSMArgs(t, expandEnv(c, c.Args))
		if flag(fs, "pod") != "x-1" || flag(fs, "pod-namespace") != "x-1" {
			t.Errorf("--pod=%q --pod-namespace=%q, want both from the downward API", flag(fs, "pod"), flag(fs, "pod-namespace"))
		}
		env := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		if env["POD_NAME"] != "metadata.name" || env["POD_NAMESPACE"] != "metadata.namespace" {
			t.Errorf("downward API environment %v, want POD_NAME and POD_NAMESPACE", env)
		}
		svc := into[corev1.Service](t, objs.find(t, "Service", dropIn))
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service clusterIP %q, want a headless Service", svc.Spec.ClusterIP)
		}
		role := into[rbacv1.Role](t, objs.find(t, "Role", "stsdiscovery-"+dropIn))
		if !allows(role.Rules, "pods", "get") || !allows(role.Rules, "statefulsets", "get") {
			t.Errorf("the Role does not let a shard read its pod and StatefulSet: %v", role.Rules)
		}
		for _, r := range role.Rules {
			if slices.Contains(r.Resources, "statefulsets") && !slices.Equal(r.ResourceNames, []string{dropIn}) {
				t.Errorf("the Role grants statefulsets %v, want only %s", r.ResourceNames, dropIn)
			}
		}
		objs.find(t, "RoleBinding", "stsdiscovery-"+dropIn)
	})
	t.Run("export", func(t *testing.T) {
		objs := render(t, parseValues(t, "mode: export\nexport: {profile: kube-state-metrics}\nautosharding: {enabled: true}\nreplicas: 3"))
		_, c := exporterContainer(t, objs, "StatefulSet", exporter)
		fs := exportFlags(t, expandEnv(c, c.Args[1:]))
		if flag(fs, "shard") != "1" || flag(fs, "total-shards") != "3" {
			t.Errorf("--shard=%q --total-shards=%q, want the pod's index and 3", flag(fs, "shard"), flag(fs, "total-shards"))
		}
		if len(objs.kind("Role")) != 0 {
			t.Errorf("a Role in the export mode, which reads no StatefulSet: %s", objs.kind("Role"))
		}
	})
}

// TestKubeRBACProxy checks kube-rbac-proxy in front of both ports: the
// exporter on 127.0.0.1 only, each proxy on the port the Service targets,
// forwarding to the exporter's, probes over HTTPS through the proxies.
func TestKubeRBACProxy(t *testing.T) {
	objs := render(t, parseValues(t, "kubeRBACProxy: {enabled: true}\nselfMonitor: {enabled: true}"))
	tmpl, c := exporterContainer(t, objs, "Deployment", dropIn)
	fs := parseKSMArgs(t, c.Args)
	if flag(fs, "host") != "127.0.0.1" || flag(fs, "telemetry-host") != "127.0.0.1" {
		t.Errorf("--host=%q --telemetry-host=%q, want both 127.0.0.1", flag(fs, "host"), flag(fs, "telemetry-host"))
	}
	if len(c.Ports) != 0 {
		t.Errorf("the exporter declares ports %+v behind the proxies", c.Ports)
	}
	proxies := map[string]*corev1.Container{}
	for i := range tmpl.Spec.Containers[1:] {
		p := &tmpl.Spec.Containers[i+1]
		proxies[p.Name] = p
	}
	for name, tc := range map[string]struct{ port, upstream string }{
		"kube-rbac-proxy-http":      {"http", flag(fs, "port")},
		"kube-rbac-proxy-telemetry": {"metrics", flag(fs, "telemetry-port")},
	} {
		p := proxies[name]
		if p == nil {
			t.Errorf("no container %s: %v", name, tmpl.Spec.Containers)
			continue
		}
		var listen int32
		for _, cp := range p.Ports {
			if cp.Name == tc.port {
				listen = cp.ContainerPort
			}
		}
		for _, want := range []string{
			fmt.Sprintf("--secure-listen-address=:%d", listen),
			fmt.Sprintf("--upstream=http://127.0.0.1:%s/", tc.upstream),
			"--config-file=/etc/kube-rbac-proxy-config/config-file.yaml",
		} {
			if !slices.Contains(p.Args, want) {
				t.Errorf("%s: args %q lack %q", name, p.Args, want)
			}
		}
		if listen == 0 || !mounted(p, "/etc/kube-rbac-proxy-config/config-file.yaml") {
			t.Errorf("%s: no port %s, or no config mounted", name, tc.port)
		}
		// The probes reach the exporter through this proxy, which lets
		// them pass unauthenticated.
		for what, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if probe.HTTPGet.Port.IntVal == listen {
				if probe.HTTPGet.Scheme != corev1.URISchemeHTTPS || !ignored(p.Args, probe.HTTPGet.Path) {
					t.Errorf("the %s probe %+v goes through %s, which does not let %s pass over HTTPS: %q", what, probe.HTTPGet, name, probe.HTTPGet.Path, p.Args)
				}
			}
		}
	}
	if c.LivenessProbe.HTTPGet.Port.IntVal != 8080 || c.ReadinessProbe.HTTPGet.Port.IntVal != 8081 {
		t.Errorf("probes on ports %v and %v, want the proxies' 8080 and 8081", c.LivenessProbe.HTTPGet.Port, c.ReadinessProbe.HTTPGet.Port)
	}
	cm := into[corev1.ConfigMap](t, objs.find(t, "ConfigMap", dropIn+"-rbac-config"))
	if !strings.Contains(cm.Data["config-file.yaml"], "subresource: "+dropIn) {
		t.Errorf("kube-rbac-proxy's config %q does not authorize the Service's subresource", cm.Data["config-file.yaml"])
	}
	role := into[rbacv1.ClusterRole](t, objs.find(t, "ClusterRole", dropIn))
	if !allows(role.Rules, "tokenreviews", "create") || !allows(role.Rules, "subjectaccessreviews", "create") {
		t.Errorf("the ClusterRole does not let the proxies review tokens and access: %v", role.Rules)
	}
	svc := into[corev1.Service](t, objs.find(t, "Service", dropIn))
	if len(svc.Spec.Ports) != 2 {
		t.Errorf("Service ports %+v, want http and metrics", svc.Spec.Ports)
	}
}

// TestNetworkPolicy checks the NetworkPolicy selects the exporter's pods and
// lets in what scrapes its ports.
func TestNetworkPolicy(t *testing.T) {
	objs := render(t, parseValues(t, "networkPolicy: {enabled: true}\nselfMonitor: {enabled: true}"))
	tmpl, c := exporterContainer(t, objs, "Deployment", dropIn)
	np := into[networkingv1.NetworkPolicy](t, objs.find(t, "NetworkPolicy", dropIn))
	sel := selector(t, np.Spec.PodSelector.MatchLabels)
	if !sel.Matches(labels.Set(tmpl.Labels)) {
		t.Errorf("the NetworkPolicy selects %s, not the exporter's pods (%v)", sel, tmpl.Labels)
	}
	var ports []string
	for _, in := range np.Spec.Ingress {
		for _, p := range in.Ports {
			ports = append(ports, p.Port.String())
		}
	}
	var declared []string
	for _, p := range c.Ports {
		declared = append(declared, p.Name)
	}
	slices.Sort(ports)
	slices.Sort(declared)
	if !slices.Equal(ports, declared) {
		t.Errorf("ingress on ports %v, want the container's %v", ports, declared)
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(np.Spec.Egress) != 0 {
		t.Errorf("policy types %v, egress %v: want egress closed without networkPolicy.egress", np.Spec.PolicyTypes, np.Spec.Egress)
	}

	objs = render(t, parseValues(t, `
networkPolicy:
  enabled: true
  ingress: [{from: [{namespaceSelector: {matchLabels: {name: monitoring}}}]}]
  egress: [{ports: [{port: 6443, protocol: TCP}]}]`))
	np = into[networkingv1.NetworkPolicy](t, objs.find(t, "NetworkPolicy", dropIn))
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || len(np.Spec.Egress) != 1 || np.Spec.Egress[0].Ports[0].Port.IntVal != 6443 {
		t.Errorf("networkPolicy.ingress and egress not passed on: %+v", np.Spec)
	}
}

// TestExportMode renders an exporter of one's own config with
// kube-state-metrics' families beside it, and runs the export verb's own
// check on the arguments and the config the chart renders.
func TestExportMode(t *testing.T) {
	objs := render(t, valuesFile(t, "03-export-serve-values.yaml"))
	tmpl, c := exporterContainer(t, objs, "Deployment", exporter)
	if !slices.Equal(c.Command, []string{"/kubectl-informer"}) || len(c.Args) == 0 || c.Args[0] != "export" {
		t.Fatalf("command %q args %q, want /kubectl-informer export", c.Command, c.Args)
	}
	if tmpl.Labels["app.kubernetes.io/name"] != "kubectl-informer" {
		t.Errorf("app.kubernetes.io/name %q, want kubectl-informer", tmpl.Labels["app.kubernetes.io/name"])
	}
	fs := exportFlags(t, c.Args[1:])
	if flag(fs, "profile") != "kube-state-metrics" || flag(fs, "resources") != "[pods,deployments]" {
		t.Errorf("--profile=%q --resources=%q, want kube-state-metrics and the collectors", flag(fs, "profile"), flag(fs, "resources"))
	}
	config := flag(fs, "config")
	if !mounted(c, config) {
		t.Fatalf("--config=%s: no volume is mounted there", config)
	}
	cm := into[corev1.ConfigMap](t, objs.find(t, "ConfigMap", exporter+"-config"))
	data, ok := cm.Data[filepath.Base(config)]
	if !ok {
		t.Fatalf("the ConfigMap has no %s: %v", filepath.Base(config), cm.Data)
	}
	// The export verb checks the config and flags without a cluster.
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(c.Args[1:])
	for i, a := range args {
		if strings.HasPrefix(a, "--config=") {
			args[i] = "--config=" + file
		}
	}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := app.NewExportCommand(streams)
	cmd.SetArgs(append(args, "--check"))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("export %q --check: %v\n%s", args, err, errOut)
	}
	for _, family := range []string{"shop_pod_info", "shop_configmap_keys", "kube_pod_info", "kube_deployment_created"} {
		if !strings.Contains(out.String(), family) {
			t.Errorf("export --check does not list %s:\n%s", family, out)
		}
	}
	role := into[rbacv1.ClusterRole](t, objs.find(t, "ClusterRole", exporter))
	for _, r := range []string{"pods", "deployments", "configmaps"} {
		if !allows(role.Rules, r, "watch") {
			t.Errorf("the ClusterRole does not grant watch on %s, which the config or the collectors read: %v", r, role.Rules)
		}
	}
	checkProbe(t, "liveness", c.LivenessProbe, "/healthz", "http", corev1.URISchemeHTTP)
	checkProbe(t, "readiness", c.ReadinessProbe, "/readyz", "http", corev1.URISchemeHTTP)
}

// TestServe checks the query server: serve's own flags, its RBAC, and a
// Service of its own that the exporter's does not share.
func TestServe(t *testing.T) {
	objs := render(t, parseValues(t, "serve: {enabled: true, watch: [pods, deployments.apps, widgets.example.com]}"))
	_, c := exporterContainer(t, objs, "Deployment", query)
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %q, want serve", c.Args)
	}
	fs := serveFlags(t, c.Args[1:])
	if got := fs.Args(); !slices.Equal(got, []string{"pods,deployments.apps,widgets.example.com"}) {
		t.Errorf("serve's resources %q", got)
	}
	if !mounted(c, flag(fs, "config")) {
		t.Errorf("--config=%s: not mounted", flag(fs, "config"))
	}
	role := into[rbacv1.ClusterRole](t, objs.find(t, "ClusterRole", query))
	for _, rg := range [][2]string{{"pods", ""}, {"deployments", "apps"}, {"widgets", "example.com"}, {"tokenreviews", "authentication.k8s.io"}} {
		if !allowsIn(role.Rules, rg[1], rg[0]) {
			t.Errorf("the ClusterRole does not grant %s in group %q: %v", rg[0], rg[1], role.Rules)
		}
	}
	rb := into[rbacv1.RoleBinding](t, objs.find(t, "RoleBinding", query+"-authentication-reader"))
	if rb.Namespace != "kube-system" || rb.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Errorf("RoleBinding %s/%s to %s, want kube-system's extension-apiserver-authentication-reader", rb.Namespace, rb.Name, rb.RoleRef.Name)
	}
	objs.find(t, "Service", query)
	objs.find(t, "Deployment", dropIn)
}

// TestKubePrometheusStackValues renders the values kube-prometheus-stack
// gives its kube-state-metrics subchart, with a user's image swap.
func TestKubePrometheusStackValues(t *testing.T) {
	vals := valuesFile(t, "02-kube-prometheus-stack-values.yaml")
	objs := render(t, vals)
	tmpl, c := exporterContainer(t, objs, "Deployment", dropIn)
	if c.Image != "ghcr.io/kubectl-informer/kubectl-informer:v0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	fs := parseKSMArgs(t, c.Args)
	if flag(fs, "enable-gzip-encoding") != "true" || strings.Contains(flag(fs, "resources"), "secrets") {
		t.Errorf("--enable-gzip-encoding=%q --resources=%q: extraArgs or collectorsExclude lost", flag(fs, "enable-gzip-encoding"), flag(fs, "resources"))
	}
	if tmpl.Spec.Containers[0].Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("resources %+v", tmpl.Spec.Containers[0].Resources)
	}
	sm := objs.find(t, "ServiceMonitor", dropIn)
	if sm.GetLabels()["release"] != releaseName {
		t.Errorf("ServiceMonitor labels %v lack release: %s, which kube-prometheus-stack's Prometheus selects", sm.GetLabels(), releaseName)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("endpoints %v, want the main port's alone", eps)
	}
	ep := eps[0].(map[string]any)
	if ep["honorLabels"] != true || ep["port"] != "http" || ep["metricRelabelings"] == nil {
		t.Errorf("endpoint %v: want port http, honorLabels and the metricRelabelings", ep)
	}
	role := into[rbacv1.ClusterRole](t, objs.find(t, "ClusterRole", dropIn))
	if allows(role.Rules, "secrets", "list") {
		t.Errorf("the ClusterRole grants secrets, excluded from the collectors")
	}
}

// TestSchemaRejectsBadValues checks that values.schema.json refuses values
// of the wrong type or out of their set, naming the value.
func TestSchemaRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"replicas: two", "/replicas"},
		{"mode: exporter", "/mode"},
		{"image: {pullPolicy: Sometimes}", "/image/pullPolicy"},
		{"replica: 2", "replica"},
		{"service: {port: 70000}", "/service/port"},
		{"prometheus: {monitor: {honorLabels: \"yes\"}}", "/prometheus/monitor/honorLabels"},
		{"export: {profile: ksm}", "/export/profile"},
		{"collectors: 3", "/collectors"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := renderManifest(t, parseValues(t, tc.values))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rendering with %q: error %v, want one naming %s", tc.values, err, tc.want)
			}
			t.Log(err)
		})
	}
}

// TestValuesThatCannotWork checks that values that cannot work together
// fail with what to change.
func TestValuesThatCannotWork(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"metricAllowlist: [a]\nmetricDenylist: [b]", "metricAllowlist and metricDenylist: give one of the two"},
		{"mode: export", `mode "export" needs export.config`},
		{"mode: export\nexport: {profile: kube-state-metrics}\nselfMonitor: {enabled: true}", "selfMonitor.enabled: the export mode has no telemetry port"},
		{"mode: export\nexport: {profile: kube-state-metrics}\nauthFilter: {enabled: true}", "authFilter.enabled: the export mode has no --auth-filter"},
		{"rbac: {useClusterRole: false}", "rbac.useClusterRole: false grants a Role in each of namespaces"},
		{"serve: {enabled: true, watch: [widgets]}", `serve.watch: no API group known for resource "widgets"`},
		{"collectors: [pods, bogus]", `collectors: "bogus" is not a resource kube-state-metrics serves`},
		{"collectors: [events]", `collectors: "events" is not a resource kube-state-metrics serves`},
		{"mode: export\nexport: {config: {resources: [{resource: gadgets}]}}", `export.config: no API group known for resource "gadgets"`},
		{"kubeconfig: {enabled: true}", "kubeconfig.secret"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := renderManifest(t, parseValues(t, tc.values))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rendering with %q: error %v, want %q", tc.values, err, tc.want)
			}
		})
	}
}

// TestNamespacedRBAC checks rbac.useClusterRole: false: a Role and a
// RoleBinding in each namespace watched, and no ClusterRole.
func TestNamespacedRBAC(t *testing.T) {
	objs := render(t, parseValues(t, "rbac: {useClusterRole: false}\nnamespaces: [a, b]\ncollectors: [pods, configmaps]"))
	if got := objs.kind("ClusterRole"); len(got) != 0 {
		t.Errorf("ClusterRoles %s with rbac.useClusterRole: false", got)
	}
	for _, ns := range []string{"a", "b"} {
		var role *rbacv1.Role
		for _, u := range objs.kind("Role") {
			if u.GetNamespace() == ns {
				role = into[rbacv1.Role](t, u)
			}
		}
		if role == nil || !allows(role.Rules, "pods", "watch") || !allows(role.Rules, "configmaps", "list") {
			t.Errorf("no Role granting pods and configmaps in %s: %s", ns, objs.kind("Role"))
		}
		found := false
		for _, u := range objs.kind("RoleBinding") {
			found = found || u.GetNamespace() == ns
		}
		if !found {
			t.Errorf("no RoleBinding in %s", ns)
		}
	}
}

func checkPorts(t testing.TB, c *corev1.Container, want map[string]int32) {
	t.Helper()
	got := map[string]int32{}
	for _, p := range c.Ports {
		got[p.Name] = p.ContainerPort
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("container %s ports %v, want %v", c.Name, got, want)
	}
}

func checkProbe(t testing.TB, what string, p *corev1.Probe, path, port string, scheme corev1.URIScheme) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("no %s probe", what)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != port || p.HTTPGet.Scheme != scheme {
		t.Errorf("%s probe %s %s on %s, want %s %s on %s", what, p.HTTPGet.Scheme, p.HTTPGet.Path, p.HTTPGet.Port.String(), scheme, path, port)
	}
}

// allows tells whether rules grant verb on resource, in any group.
func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// allowsIn tells whether rules grant something on resource in group.
func allowsIn(rules []rbacv1.PolicyRule, group, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.APIGroups, group) {
			return true
		}
	}
	return false
}

// mounted tells whether file lies under a volume mount of c.
func mounted(c *corev1.Container, file string) bool {
	for _, m := range c.VolumeMounts {
		if file != "" && strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return true
		}
	}
	return false
}

// ignored tells whether kube-rbac-proxy's args let path pass without
// authorization.
func ignored(args []string, path string) bool {
	for _, a := range args {
		if list, ok := strings.CutPrefix(a, "--ignore-paths="); ok && slices.Contains(strings.Split(list, ","), path) {
			return true
		}
	}
	return false
}

// TestKubeStateMetricsChartValues checks that this chart's schema declares
// each value of kube-state-metrics' chart by the same name: a values file
// written for kube-state-metrics' chart is a values file of this one.
func TestKubeStateMetricsChartValues(t *testing.T) {
	b, err := os.ReadFile("testdata/kube-state-metrics-chart-values.txt")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{}
	if err := json.Unmarshal(b2, &schema); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		s := schema
		for _, key := range strings.Split(line, ".") {
			props, ok := s["properties"].(map[string]any)
			if !ok {
				break // an object of Kubernetes' own, such as resources
			}
			sub, ok := props[key].(map[string]any)
			if !ok {
				// An object that takes any key, such as a pod's
				// securityContext, declares only some.
				if s["additionalProperties"] == false {
					t.Errorf("kube-state-metrics' chart has the value %s, this chart has none", line)
				}
				break
			}
			s = sub
		}
	}
	if n < 100 {
		t.Errorf("checked %d values of kube-state-metrics' chart, want them all", n)
	}
}

// TestOptionalObjects checks the objects values add: a PodDisruptionBudget
// and a VerticalPodAutoscaler for the exporter, a ScrapeConfig for its
// Service, the custom resource state ConfigMap, extra manifests, and no
// ServiceAccount when one is named instead.
func TestOptionalObjects(t *testing.T) {
	objs := render(t, parseValues(t, `
podDisruptionBudget: {minAvailable: 1}
verticalPodAutoscaler: {enabled: true, controlledResources: [memory]}
prometheus: {scrapeconfig: {enabled: true}}
customResourceState: {enabled: true, config: {kind: CustomResourceStateMetrics, spec: {resources: []}}}
extraManifests:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: "{{ .Release.Name }}-extra"}, data: {a: b}}
serviceAccount: {create: false, name: monitoring-reader}`), "autoscaling.k8s.io/v1")
	tmpl, c := exporterContainer(t, objs, "Deployment", dropIn)
	pdb := objs.find(t, "PodDisruptionBudget", dropIn)
	sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
	if !selector(t, sel).Matches(labels.Set(tmpl.Labels)) {
		t.Errorf("the PodDisruptionBudget selects %v, not the exporter's pods", sel)
	}
	vpa := objs.find(t, "VerticalPodAutoscaler", dropIn)
	target, _, _ := unstructured.NestedStringMap(vpa.Object, "spec", "targetRef")
	policies, _, _ := unstructured.NestedSlice(vpa.Object, "spec", "resourcePolicy", "containerPolicies")
	if target["kind"] != "Deployment" || target["name"] != dropIn || len(policies) != 1 || policies[0].(map[string]any)["containerName"] != c.Name {
		t.Errorf("the VerticalPodAutoscaler targets %v with policies %v, want the Deployment's container %s", target, policies, c.Name)
	}
	sc := objs.find(t, "ScrapeConfig", dropIn)
	targets, _, _ := unstructured.NestedSlice(sc.Object, "spec", "staticConfigs")
	job, _, _ := unstructured.NestedString(sc.Object, "spec", "jobName")
	if want := dropIn + "." + releaseNamespace + ".svc:8080"; job != "kube-state-metrics" || !strings.Contains(fmt.Sprint(targets), want) {
		t.Errorf("the ScrapeConfig scrapes %v as job %q, want %s as kube-state-metrics", targets, job, want)
	}
	cm := into[corev1.ConfigMap](t, objs.find(t, "ConfigMap", dropIn+"-customresourcestate-config"))
	if !strings.Contains(cm.Data["config.yaml"], "kind: CustomResourceStateMetrics") {
		t.Errorf("the custom resource state ConfigMap holds %q", cm.Data)
	}
	objs.find(t, "ConfigMap", releaseName+"-extra")
	if got := objs.kind("ServiceAccount"); len(got) != 0 || tmpl.Spec.ServiceAccountName != "monitoring-reader" {
		t.Errorf("ServiceAccounts %s, the pod runs as %q: want none created and monitoring-reader", got, tmpl.Spec.ServiceAccountName)
	}
	binding := into[rbacv1.ClusterRoleBinding](t, objs.find(t, "ClusterRoleBinding", dropIn))
	if binding.Subjects[0].Name != "monitoring-reader" {
		t.Errorf("the ClusterRoleBinding binds %v", binding.Subjects)
	}

	// Without autoscaling.k8s.io/v1 in the cluster, no VerticalPodAutoscaler.
	objs = render(t, parseValues(t, "verticalPodAutoscaler: {enabled: true}"))
	if got := objs.kind("VerticalPodAutoscaler"); len(got) != 0 {
		t.Errorf("a VerticalPodAutoscaler on a cluster without its API: %s", got)
	}
}

// TestServiceValues checks the Service's values: its type, node ports,
// dual stack and annotations.
func TestServiceValues(t *testing.T) {
	objs := render(t, parseValues(t, `
service:
  type: NodePort
  nodePort: 30080
  ipDualStack: {enabled: true}
  annotations: {team: metrics}
selfMonitor: {enabled: true, telemetryNodePort: 30081}`))
	svc := into[corev1.Service](t, objs.find(t, "Service", dropIn))
	nodePorts := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		nodePorts[p.Name] = p.NodePort
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || nodePorts["http"] != 30080 || nodePorts["metrics"] != 30081 {
		t.Errorf("Service of type %s with node ports %v", svc.Spec.Type, nodePorts)
	}
	if svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack || len(svc.Spec.IPFamilies) != 2 {
		t.Errorf("dual stack: policy %v, families %v", svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies)
	}
	if svc.Annotations["team"] != "metrics" || svc.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("Service annotations %v", svc.Annotations)
	}
}

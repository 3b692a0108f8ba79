package node

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// upstreamChart is kube-state-metrics' own Helm chart as published, and
// upstreamValues the values this test installs it with: the project's
// image, an allowlist of every pod label, and the chart's suggested
// resources (limits 64Mi and 100m).
const (
	upstreamChart  = "testdata/upstream-kube-state-metrics/kube-state-metrics"
	upstreamValues = "testdata/upstream-kube-state-metrics-values.yaml"
)

// TestUpstreamChart installs kube-state-metrics' own chart, unchanged but
// for its image (the project's, as imported on the node), with a label
// allowlist and a 64Mi memory limit, as a user swaps the image of a
// kube-state-metrics release, on a cluster whose policy grants the release
// no access to secrets: its ClusterRole has every default collector but
// secrets (removed by a post-renderer, helm install --post-renderer), while
// the container still watches secrets, as kube-state-metrics' default
// resources include them.
//
// helm install --wait must return: the pod Ready under the chart's own
// probes though listing secrets is forbidden. Prometheus, scraping the
// chart's Service, must read kube_pod_labels with one series per pod and
// its labels as label_*; the telemetry port, read through the API
// server's pod proxy, must count failed lists of secrets; and the
// container must never be OOM-killed nor restarted.
func TestUpstreamChart(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "upstream")
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	// The release is named after the namespace, and so are its
	// ClusterRole and binding. Whatever fails, installing included, say how
	// the exporter's pod fared before uninstalling the release (a failed
	// install leaves it recorded as failed).
	release := ns
	t.Cleanup(func() {
		if t.Failed() {
			logPods(t, ns)
		}
		cluster.HelmUninstall(t, release, ns)
	})
	cluster.HelmInstallChart(t, upstreamChart, release, ns, framework.ValuesFile(t, upstreamValues), withoutSecrets{})

	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release}
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, selector)
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("want the release's one pod: %v, %v", pods, err)
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != framework.NodeName || pod.Status.PodIP == "" || podCondition(&pod, corev1.PodReady) != corev1.ConditionTrue {
		t.Fatalf("pod %s runs on %q at %q, ready %s; want Ready on the node %s", pod.Name, pod.Spec.NodeName, pod.Status.PodIP, podCondition(&pod, corev1.PodReady), framework.NodeName)
	}
	exporter := pod.Spec.Containers[0]
	if exporter.Image != framework.ProjectImage {
		t.Fatalf("the container runs %s, want %s", exporter.Image, framework.ProjectImage)
	}
	// The container watches secrets; its ClusterRole does not grant them.
	if !slices.ContainsFunc(exporter.Args, func(a string) bool {
		list, ok := strings.CutPrefix(a, "--resources=")
		return ok && slices.Contains(strings.Split(list, ","), "secrets")
	}) {
		t.Fatalf("the container's args %q do not watch secrets", exporter.Args)
	}
	roles, err := cluster.Client.RbacV1().ClusterRoles().List(ctx, selector)
	if err != nil || len(roles.Items) != 1 {
		t.Fatalf("want the release's one ClusterRole: %v, %v", roles, err)
	}
	for _, r := range roles.Items[0].Rules {
		if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*") {
			t.Fatalf("ClusterRole %s grants secrets: %+v", roles.Items[0].Name, r)
		}
	}

	// The telemetry port, which the chart probes for readiness but puts in
	// no Service without selfMonitor, through the API server's pod proxy.
	telemetry := ""
	for _, p := range exporter.Ports {
		if p.Name == "metrics" {
			telemetry = strconv.Itoa(int(p.ContainerPort))
		}
	}
	if telemetry == "" {
		t.Fatalf("the container has no port named metrics: %+v", exporter.Ports)
	}
	var last string
	framework.Eventually(t, `kube_state_metrics_list_total{resource="*v1.Secret",result="error"} > 0 on the telemetry port`, func() bool {
		n, err := secretListErrors(ctx, ns, pod.Name, telemetry)
		if err != nil && err.Error() != last {
			last = err.Error()
			t.Log(err)
		}
		return err == nil && n > 0
	})

	prom := scrapePrometheus(t, ns, "kube-state-metrics", []string{"http"})
	prom.WaitFor(t, `up{job="kube-state-metrics"}`, func(v model.Vector) error {
		if len(v) != 1 || v[0].Value != 1 || string(v[0].Metric["pod"]) != pod.Name {
			return fmt.Errorf("targets %v, want the pod %s's http port up", v, pod.Name)
		}
		return nil
	})
	// One series per pod of the namespace, with every label of the pod.
	prom.WaitFor(t, fmt.Sprintf(`kube_pod_labels{job="kube-state-metrics",namespace=%q}`, ns), func(v model.Vector) error {
		current, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		want := map[string]model.LabelSet{}
		for _, p := range current.Items {
			ls := model.LabelSet{}
			for k, val := range p.Labels {
				ls[model.LabelName("label_"+sanitizeLabel(k))] = model.LabelValue(val)
			}
			want[p.Name] = ls
		}
		got := map[string]model.LabelSet{}
		for _, s := range v {
			name := string(s.Metric["pod"])
			if _, dup := got[name]; dup {
				return fmt.Errorf("pod %s has more than one series: %v", name, v)
			}
			ls := model.LabelSet{}
			for k, val := range s.Metric {
				if strings.HasPrefix(string(k), "label_") {
					ls[k] = val
				}
			}
			got[name] = ls
		}
		if !maps.EqualFunc(got, want, func(a, b model.LabelSet) bool { return a.Equal(b) }) {
			return fmt.Errorf("kube_pod_labels' label_* labels by pod %v, want the pods' labels %v", got, want)
		}
		return nil
	})

	// The container ran through it all: the same one, never restarted, no
	// OOM kill.
	p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != pod.UID || len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("pod %s is not the one installed (uid %s, was %s) or has %d container statuses", p.Name, p.UID, pod.UID, len(p.Status.ContainerStatuses))
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.LastTerminationState.Terminated != nil || cs.State.Running == nil || !cs.Ready {
		t.Errorf("container %s: restarts %d, last state %+v, state %+v, ready %v; want running and ready since it started",
			cs.Name, cs.RestartCount, cs.LastTerminationState.Terminated, cs.State, cs.Ready)
	}
	if oom := oomKills(t, containerCgroup(t, p, cs)); oom != 0 {
		t.Errorf("the container's cgroup counts %d OOM kills", oom)
	}
}

// withoutSecrets is a post-renderer (helm install --post-renderer) that
// removes secrets from the rules of every ClusterRole rendered, dropping a
// rule left with no resource: the release's ClusterRole as a cluster that
// grants nobody secrets has it.
type withoutSecrets struct{}

// Run edits the manifests Helm rendered, as helm install runs a
// post-renderer.
func (withoutSecrets) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	var out bytes.Buffer
	docs := utilyaml.NewYAMLReader(bufio.NewReader(rendered))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return &out, nil
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		if obj["kind"] == "ClusterRole" {
			rules, _ := obj["rules"].([]any)
			kept := []any{}
			for _, r := range rules {
				rule, _ := r.(map[string]any)
				resources, _ := rule["resources"].([]any)
				resources = slices.DeleteFunc(resources, func(r any) bool { return r == "secrets" })
				if len(resources) > 0 {
					rule["resources"] = resources
					kept = append(kept, rule)
				}
			}
			obj["rules"] = kept
			if doc, err = yaml.Marshal(obj); err != nil {
				return nil, err
			}
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
}

// secretListErrors scrapes port of pod namespace/name through the API
// server's pod proxy and returns kube_state_metrics_list_total of failed
// lists of secrets.
func secretListErrors(ctx context.Context, namespace, name, port string) (float64, error) {
	b, err := cluster.Client.CoreV1().Pods(namespace).ProxyGet("http", name, port, "metrics", nil).DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	f, ok := families["kube_state_metrics_list_total"]
	if !ok {
		return 0, fmt.Errorf("no kube_state_metrics_list_total on port %s", port)
	}
	var n float64
	for _, m := range f.GetMetric() {
		if labelValue(m, "resource") == "*v1.Secret" && labelValue(m, "result") == "error" {
			n += m.GetCounter().GetValue()
		}
	}
	return n, nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// invalidLabelChars are what kube-state-metrics replaces with _ in a
// Kubernetes label's key to name its label_ label.
var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func sanitizeLabel(key string) string { return invalidLabelChars.ReplaceAllString(key, "_") }

// logPods logs the status of every pod of namespace, and the last lines of
// the log of each of their containers, the previous run's too.
func logPods(t *testing.T, namespace string) {
	ctx := context.Background()
	pods, err := cluster.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing the pods of %s: %v", namespace, err)
		return
	}
	tail := int64(40)
	for _, p := range pods.Items {
		t.Logf("pod %s: phase %s, conditions %+v", p.Name, p.Status.Phase, p.Status.Conditions)
		for _, cs := range p.Status.ContainerStatuses {
			t.Logf("container %s: ready %v, restarts %d, state %+v, last state %+v", cs.Name, cs.Ready, cs.RestartCount, cs.State, cs.LastTerminationState)
			for _, previous := range []bool{false, true} {
				log, err := cluster.Client.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: cs.Name, TailLines: &tail, Previous: previous}).DoRaw(ctx)
				if err == nil && len(log) > 0 {
					t.Logf("container %s's log (previous run: %v):\n%s", cs.Name, previous, log)
				}
			}
		}
	}
}

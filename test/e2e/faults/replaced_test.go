package faults_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestExporterPodReplacedDuringRelist deletes a pod and creates another of
// the same name on another node while the exporter's watch is down: the
// kube-apiserver is killed, the pod is replaced in etcd, and the new
// server's watch cache answers the exporter's resumed watch with 410 Gone,
// so the informer lists again and delivers the new pod as an update of
// the old one, under the same namespace/name. The exporter serves the
// kube-state-metrics profile's pod families and an aggregate of its own:
// afterwards every series of the pod is the new pod's, once (no family
// holds a series of the old UID, none has a series twice), and the
// aggregate counts the pod once, on its new node.
func TestExporterPodReplacedDuringRelist(t *testing.T) {
	ns := cluster.NewNamespace(t, "replaced")
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-a",
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
	old, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pods_per_node
    help: Pods per node.
    type: gauge
    aggregate: count
    labels:
      node: object.spec.nodeName
`, "--profile", "kube-state-metrics", "--resources", "pods", "--namespaces", ns)
	// info is the node and uid labels of each kube_pod_info series of the
	// namespace.
	info := func() []string {
		_, body := get(url + "/metrics")
		var out []string
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "kube_pod_info{") && strings.Contains(line, fmt.Sprintf("namespace=%q", ns)) {
				out = append(out, labelValue(line, "node")+" "+labelValue(line, "uid"))
			}
		}
		return out
	}
	waitFor(t, x, "kube_pod_info of the pod on node-a", func() bool {
		return slices.Equal(info(), []string{"node-a " + string(old.UID)})
	})
	waitSeries(t, x, url, "test_pods_per_node", `{node="node-a"}`)

	newUID := types.UID("00000000-0000-0000-0000-0000000000b2")
	key := "/registry/pods/" + ns + "/web"
	err = cluster.RestartAPIServer(func() error {
		obj, err := cluster.EtcdGet(ctx, key)
		if err != nil {
			return err
		}
		if err := cluster.EtcdDelete(ctx, key); err != nil {
			return err
		}
		recreated := obj.(*corev1.Pod)
		recreated.UID = newUID
		recreated.Spec.NodeName = "node-b"
		recreated.Status.Phase = corev1.PodRunning
		return cluster.EtcdPut(ctx, key, recreated)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, x, "kube_pod_info of the new pod on node-b alone", func() bool {
		return slices.Equal(info(), []string{"node-b " + string(newUID)})
	})
	waitSeries(t, x, url, "test_pods_per_node", `{node="node-b"}`)
	labels := fmt.Sprintf(`namespace=%q,resource="pods"`, ns)
	if v := telemetry(url, "relists_total", labels); v < 1 {
		t.Errorf("kubectl_informer_relists_total{%s} = %v, want at least 1: the pod must come through a relist", labels, v)
	}

	_, body := get(url + "/metrics")
	mfs := uniqueSeries(t, body)
	var families int
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "kube_pod_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			byName := map[string]string{}
			for _, l := range m.GetLabel() {
				byName[l.GetName()] = l.GetValue()
			}
			if byName["namespace"] != ns {
				continue
			}
			families++
			if byName["uid"] != "" && byName["uid"] != string(newUID) {
				t.Errorf("%s has a series of the old pod: %v", name, byName)
			}
		}
	}
	if families == 0 {
		t.Fatalf("no kube_pod_* series of namespace %s:\n%s", ns, body)
	}
	var phases []string
	for _, m := range mfs["kube_pod_status_phase"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "phase" && m.GetGauge().GetValue() == 1 {
				phases = append(phases, l.GetValue())
			}
		}
	}
	if !slices.Equal(phases, []string{"Running"}) {
		t.Errorf("kube_pod_status_phase is 1 for phases %v, want [Running] alone:\n%s", phases, grepLines(body, "kube_pod_status_phase"))
	}
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

// labelValue returns the value of label name in a line of the text
// format, "" when it has none.
func labelValue(line, name string) string {
	i := strings.Index(line, ","+name+`="`)
	if i < 0 {
		i = strings.Index(line, "{"+name+`="`)
	}
	if i < 0 {
		return ""
	}
	rest := line[i+len(name)+3:]
	return rest[:strings.IndexByte(rest, '"')]
}

// uniqueSeries parses a text exposition and has client_golang gather it,
// which fails on a series written twice (the same name and labels); it
// returns the families by name.
func uniqueSeries(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	gathered := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var out []*dto.MetricFamily
		for _, mf := range mfs {
			out = append(out, mf)
		}
		return out, nil
	})
	if _, err := (prometheus.Gatherers{gathered}).Gather(); err != nil {
		t.Fatalf("/metrics has a series twice: %v", err)
	}
	return mfs
}

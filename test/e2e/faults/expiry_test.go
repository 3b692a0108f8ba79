package faults_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestExporterWatchExpired makes the watch of a running exporter expire:
// etcd compacted past the resourceVersion it would resume from. Pod
// templates are served without a watch cache here (see framework.Start), so
// their watches are etcd's: a watch cache would serve a watch from the
// events it holds, whatever etcd compacted.
//
// The API server is restarted twice, to break the watch; while it is down,
// a pod template is deleted in etcd. The first time, the watch resumes from
// its resourceVersion and receives the deletion from etcd's history: no
// list. The second time etcd is also compacted: the watch gets 410 Gone,
// the informer lists again (kubectl_informer_relists_total), and the series
// converge on what the list says.
func TestExporterWatchExpired(t *testing.T) {
	ns := cluster.NewNamespace(t, "expired")
	createPodTemplate(t, ns, "a")
	createPodTemplate(t, ns, "b")
	x, url := startExporter(t, `- resource: podtemplates
  namespaces: [`+ns+`]
  metrics:
  - name: test_podtemplate_info
    help: One series per pod template.
    type: gauge
    labels:
      podtemplate: object.metadata.name
`)
	waitSeries(t, x, url, "test_podtemplate_info", `{podtemplate="a"}`, `{podtemplate="b"}`)
	// A watch that ends within a second of its start without an event
	// counts as failed, and the informer lists again: give it one.
	createPodTemplate(t, ns, "c")
	waitSeries(t, x, url, "test_podtemplate_info", `{podtemplate="a"}`, `{podtemplate="b"}`, `{podtemplate="c"}`)
	labels := fmt.Sprintf(`namespace=%q,resource="podtemplates"`, ns)
	key := func(name string) string { return "/registry/podtemplates/" + ns + "/" + name }

	err := cluster.RestartAPIServer(func() error { return cluster.EtcdDelete(context.Background(), key("b")) })
	if err != nil {
		t.Fatal(err)
	}
	waitSeries(t, x, url, "test_podtemplate_info", `{podtemplate="a"}`, `{podtemplate="c"}`)
	deletes := `resource="podtemplates",type="delete"`
	if v := telemetry(url, "resource_events_total", deletes); v != 1 {
		t.Errorf("kubectl_informer_resource_events_total{%s} = %v, want 1: the deletion, from the resumed watch", deletes, v)
	}
	if v := telemetry(url, "relists_total", labels); v != 0 {
		t.Errorf("kubectl_informer_relists_total{%s} = %v after a watch resumed, want 0", labels, v)
	}

	var rev int64
	err = cluster.RestartAPIServer(func() error {
		if err := cluster.EtcdDelete(context.Background(), key("c")); err != nil {
			return err
		}
		var err error
		rev, err = cluster.EtcdCompact(context.Background())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d", rev)
	waitSeries(t, x, url, "test_podtemplate_info", `{podtemplate="a"}`)
	if v := telemetry(url, "relists_total", labels); v != 1 {
		t.Errorf("kubectl_informer_relists_total{%s} = %v after the watch expired, want 1", labels, v)
	}
	if v := telemetry(url, "resource_healthy", labels); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v after the relist, want 1", labels, v)
	}

	// The new watch goes on.
	createPodTemplate(t, ns, "d")
	waitSeries(t, x, url, "test_podtemplate_info", `{podtemplate="a"}`, `{podtemplate="d"}`)
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

func createPodTemplate(t *testing.T, ns, name string) {
	t.Helper()
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		}},
	}
	if _, err := cluster.Client.CoreV1().PodTemplates(ns).Create(context.Background(), pt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

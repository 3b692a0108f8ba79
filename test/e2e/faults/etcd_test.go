package faults_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestExporterEtcdRestart kills etcd under a running exporter for a few
// seconds and starts it again with its data. Meanwhile /healthz answers 200
// and /metrics keeps the series as last seen. Once etcd is back, pods
// created, changed and deleted through the API server are reflected
// exactly, and /readyz answers 200 ok.
func TestExporterEtcdRestart(t *testing.T) {
	ns := cluster.NewNamespace(t, "etcd")
	cluster.CreatePod(t, ns, "a", nil)
	cluster.CreatePod(t, ns, "b", nil)
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
      track: object.metadata.?labels.?track.orValue("")
`)
	before := []string{`{pod="a",track=""}`, `{pod="b",track=""}`}
	waitSeries(t, x, url, "test_pod_info", before...)

	var readyz []string // what /readyz answered while etcd was down, each once
	err := cluster.RestartEtcd(func() error {
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if code, body := get(url + "/healthz"); code != http.StatusOK {
				return fmt.Errorf("/healthz while etcd is down: %d %q", code, body)
			}
			if got := series(url, "test_pod_info"); !slices.Equal(got, before) {
				return fmt.Errorf("series while etcd is down: %v, want them as last seen: %v", got, before)
			}
			code, body := get(url + "/readyz")
			if s := fmt.Sprintf("%d %s", code, body); !slices.Contains(readyz, s) {
				readyz = append(readyz, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz while etcd was down: %q", readyz)

	// The API server's requests to etcd fail until its client reconnects.
	pods := cluster.Client.CoreV1().Pods(ns)
	retry(t, "deleting pod a", func(ctx context.Context) error {
		err := pods.Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	retry(t, "labelling pod b", func(ctx context.Context) error {
		_, err := pods.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"labels":{"track":"new"}}}`), metav1.PatchOptions{})
		return err
	})
	retry(t, "creating pod c", func(ctx context.Context) error {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		return created(err)
	})
	waitSeries(t, x, url, "test_pod_info", `{pod="b",track="new"}`, `{pod="c",track=""}`)
	waitFor(t, x, "/readyz to answer 200 ok", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && body == "ok\n"
	})
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

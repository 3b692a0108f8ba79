package exporter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestObjectLimitReadyz checks that ObjectLimit keeps that many objects
// of a resource and that /readyz names the resource whose list it cut,
// while one within the limit is not named.
func TestObjectLimitReadyz(t *testing.T) {
	ns := cluster.NewNamespace(t, "objectlimit")
	for i := range 4 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one"}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, url := cluster.ServeExporter(t, nil, exporter.Options{
		Sources:     exporter.Sources{Profile: "kube-state-metrics", Selection: exporter.Selection{Resources: []string{"configmaps", "secrets"}}},
		Namespaces:  []string{ns},
		ObjectLimit: 2,
	})
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	if n := len(mfs["kube_configmap_info"].GetMetric()); n != 2 {
		t.Errorf("%d ConfigMaps served, want the limit, 2", n)
	}
	if n := len(mfs["kube_secret_info"].GetMetric()); n != 1 {
		t.Errorf("%d Secrets served, want 1", n)
	}
	_, body := framework.Get(t, url+"/readyz")
	if !strings.Contains(body, "cut at the object limit (2)") || !strings.Contains(body, "configmaps in "+ns) || strings.Contains(body, "secrets") {
		t.Errorf("/readyz says\n%s\nwant the list of configmaps named as cut at the limit, and no other", body)
	}
}

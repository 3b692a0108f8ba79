package profile_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// TestSecretsNeverLeak serves the whole profile with every label and
// annotation admitted, from the command as users run it with its debug
// logs, and searches everything it says for the value of the
// workload's secrets and of one written by kubectl apply, whose
// last-applied annotation holds its data.
func TestSecretsNeverLeak(t *testing.T) {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := workload.NamespaceName(1)
	applied := base64.StdEncoding.EncodeToString([]byte(workload.SecretValue))
	_, err = cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "applied", Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","data":{"password":"` + applied + `"},"kind":"Secret"}`,
			"owner": "ops"}},
		StringData: map[string]string{"password": workload.SecretValue},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--web.listen-address", addr, "-v", "6",
		"--metric-labels-allowlist", "*=[*]", "--metric-annotations-allowlist", "*=[*]")
	url := "http://" + addr
	// Ready once every resource of the profile is synced.
	framework.WaitReady(t, url)
	metrics := scrapeText(t, url)
	// The secret is there, with its annotations but the last-applied one.
	want := `kube_secret_annotations{namespace="` + ns + `",secret="applied",annotation_owner="ops"} 1`
	if !strings.Contains(metrics, want+"\n") {
		t.Errorf("/metrics has no %s", want)
	}
	said := map[string]string{"/metrics": metrics}
	for _, path := range []string{"/readyz?verbose", "/healthz", "/"} {
		_, said[path] = framework.Get(t, url+path)
	}
	if code := run.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, run.ErrOut)
	}
	said["stdout"], said["stderr"] = run.Out.String(), run.ErrOut.String()
	if !strings.Contains(said["stderr"], "level=DEBUG") {
		t.Errorf("stderr has no debug line, so it cannot show what the most verbose logs say:\n%s", said["stderr"])
	}
	for where, text := range said {
		for _, v := range []string{workload.SecretValue, applied} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the value of a secret (%q)", where, v)
			}
		}
	}
}

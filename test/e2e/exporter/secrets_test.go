package exporter_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestLogsHoldNoObjectContents runs the exporter, logging at debug level,
// on a config whose expressions fail on the data of a Secret and of a
// ConfigMap: the failures are logged and counted, and neither the logs
// nor the query's warnings show the values, plain or base64-encoded.
func TestLogsHoldNoObjectContents(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "secrets")
	const secretValue, configValue = "S3CRET-VALUE-42", "CONFIG-VALUE-42"
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{"app": "db"}},
		Data:       map[string][]byte{"password": []byte(secretValue)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"token": configValue},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	config := `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
allowSecretData: true
resources:
- resource: secrets
  namespaces: [` + ns + `]
  metrics:
  - name: test_secret_password
    help: "Fails: a password is not a number."
    type: gauge
    labels:
      secret: object.metadata.name
    value: int(string(object.data.password))
- resource: configmaps
  namespaces: [` + ns + `]
  metrics:
  - name: test_configmap_token
    help: "Fails: a token does not parse as a number."
    type: gauge
    labels:
      configmap: object.metadata.name
    value: double(object.data.token)
`
	var logs framework.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, srv, _ := startWith(t, config, exporter.Options{Logger: logger, ErrorLogInterval: 100 * time.Millisecond})

	deadline := time.Now().Add(framework.HangTimeout)
	for !strings.Contains(logs.String(), "test_secret_password") || !strings.Contains(logs.String(), "test_configmap_token") {
		if time.Now().After(deadline) {
			t.Fatalf("the evaluation errors were not logged within %s:\n%s", framework.HangTimeout, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, body := framework.Get(t, srv+"/metrics")
	for _, m := range []string{"test_secret_password", "test_configmap_token"} {
		if !strings.Contains(body, `kubectl_informer_metric_evaluation_errors_total{metric="`+m+`"} 1`) {
			t.Errorf("the evaluation error of %s is not counted", m)
		}
	}

	// The query's warnings about the same failures.
	r := cluster.StartPlugin(t, "query", "secrets", "-n", ns, "--where", "int(string(object.data.password)) > 0")
	code := r.Wait(t)
	warnings := r.ErrOut.String()
	if code != 0 || !strings.Contains(warnings, "1 of 1 object failed") {
		t.Errorf("query: exit code %d, stderr:\n%s", code, warnings)
	}

	for name, text := range map[string]string{"exporter logs": logs.String(), "query stderr": warnings, "/metrics": body} {
		for _, v := range []string{secretValue, configValue} {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(text, form) {
					t.Errorf("%s show %q:\n%s", name, form, text)
				}
			}
		}
	}
}

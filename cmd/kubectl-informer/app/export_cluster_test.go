package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestExportInterruptedWhileResolving cancels export while the server it
// resolves the config's resources with never answers: it ends at once,
// as interrupted, instead of waiting for client-go's timeouts.
func TestExportInterruptedWhileResolving(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: test_pod_info
    help: Pods.
    type: gauge
    labels:
      pod: object.metadata.name
`), 0o600); err != nil {
		t.Fatal(err)
	}
	server, requests := askedServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() {
		done <- runCtx(ctx, t, "export", "--kubeconfig", kubeconfigFor(t, server), "--config", config, "--web.listen-address", "127.0.0.1:0")
	}()
	waitRequests(t, requests, 1)
	expectInterrupted(t, cancel, done)
}

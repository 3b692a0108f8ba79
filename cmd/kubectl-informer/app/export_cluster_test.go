package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExportInterruptedWhileResolving cancels export while the server it
// resolves the config's resources with never answers: it ends at once,
// as interrupted, instead of waiting for client-go's timeouts.
func TestExportInterruptedWhileResolving(t *testing.T) {
	config := writeExportConfig(t)
	server, requests := askedServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() {
		done <- runCtx(ctx, t, "export", "--kubeconfig", kubeconfigFor(t, server), "--config", config, "--web.listen-address", "127.0.0.1:0")
	}()
	waitRequests(t, requests, 1)
	cancel()
	select {
	case r := <-done:
		// The exporter listens from the start: its log line about it
		// comes before the interruption.
		if r.code != ExitInterrupted || !strings.HasSuffix(r.errOut, "\nerror: interrupted\n") {
			t.Errorf("exit code %d, stderr %q; want %d and the interruption last", r.code, r.errOut, ExitInterrupted)
		}
	case <-time.After(hangTimeout):
		t.Fatalf("the command did not end within %s of its cancellation", hangTimeout)
	}
}

// TestExportCheckSilentServer checks a config with a kubeconfig whose
// server accepts connections and never answers: the first request that
// gets no answer within --request-timeout ends the check's contact with
// the cluster, so the server reads one request, not one per discovery
// request, and the check passes with a warning that it was not checked
// against the cluster.
func TestExportCheckSilentServer(t *testing.T) {
	config := writeExportConfig(t)
	server, requests := askedServer(t)
	r := runCtx(context.Background(), t, "export", "--kubeconfig", kubeconfigFor(t, server), "--config", config, "--check", "--request-timeout", "1s")
	if r.code != 0 || !strings.Contains(r.errOut, "warning: not checked against a cluster: ") {
		t.Errorf("exit code %d, stderr %q; want 0 and a warning that the config was not checked against the cluster", r.code, r.errOut)
	}
	if got := requests(); len(got) != 1 {
		t.Errorf("the silent server read %d requests, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// writeExportConfig writes a config of one family of pods.
func writeExportConfig(t *testing.T) string {
	t.Helper()
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
	return config
}

package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// exportConfig exports a family of pods, one with a node lookup and an
// aggregate, so that the exporter runs every kind of goroutine it has.
const exportConfig = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: test_pod_info
    help: Pods.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      scheduled: 'string(has(object.spec.nodeName) && get("nodes", object.spec.nodeName) != null)'
  - name: test_pods_per_phase
    help: Pods per phase.
    type: gauge
    aggregate: count
    labels:
      phase: object.status.?phase.orValue("")
`

// TestNoGoroutineLeaks runs query, query --watch, watch, indexes and export
// in process against the cluster, ends them every way they end (answered,
// stopped as Ctrl-C stops them, failed, timed out, interrupted) and checks
// that no goroutine they started is left: the informers, their reflectors
// and handlers, the watch loops, the signal handling and the bounds on
// discovery requests all end with the command.
//
// Only the goroutines of connections kept open by client-go are ignored:
// client-go caches its HTTP transports for the whole process (keyed by TLS
// configuration) so that every client of a cluster shares its connections,
// and an idle connection keeps its reader goroutine until the transport
// closes it (after 90 seconds). They belong to the process, not to a
// command, and the next command reuses them.
func TestNoGoroutineLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ns := workload.NamespaceName(0)
	t.Run("query", func(t *testing.T) {
		query(t, "pods", "-A", "--count").ok(t)
		// get() starts an informer of nodes besides that of pods.
		query(t, "pods", "-n", ns, "--where", `has(object.spec.nodeName) && get("nodes", object.spec.nodeName) != null`, "-o", "name").ok(t)
		// -i with its input at its end answers nothing and ends.
		query(t, "pods", "-n", ns, "-i").ok(t)
	})
	t.Run("indexes", func(t *testing.T) {
		run(t, "indexes", "--kubeconfig", cluster.Kubeconfig, "pods", "-A", "--index", "byPhase=object.status.phase").ok(t)
	})
	t.Run("query --watch", func(t *testing.T) {
		r := cluster.StartPlugin(t, "query", "pods", "-n", ns, "--count", "--watch")
		r.WaitLines(t, 1)
		if code := r.Stop(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("watch", func(t *testing.T) {
		r := cluster.StartPlugin(t, "watch", "pods", "-n", ns, "--diff")
		r.WaitLines(t, 1)
		if code := r.Stop(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("export", func(t *testing.T) {
		config := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(config, []byte(exportConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cluster.StartPlugin(t, "export", "--config", config, "--web.listen-address", "127.0.0.1:0")
		framework.Eventually(t, "the exporter is ready", func() bool { return strings.Contains(r.ErrOut.String(), "ready: caches synced") })
		if code := r.Stop(t); code != 0 {
			t.Errorf("exit code %d, want 0\n%s", code, r.ErrOut)
		}
	})
	t.Run("export of a config refused at load", func(t *testing.T) {
		// The labels do not tell the pods apart: the config is refused
		// once the resources are resolved, after the engine was made.
		refused := strings.Replace(exportConfig, "      namespace: object.metadata.namespace\n", "", 1)
		config := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(config, []byte(refused), 0o600); err != nil {
			t.Fatal(err)
		}
		r := run(t, "export", "--kubeconfig", cluster.Kubeconfig, "--config", config, "--web.listen-address", "127.0.0.1:0")
		if r.code == 0 || !strings.Contains(r.errOut, "do not tell the objects of pods apart") {
			t.Errorf("exit code %d, stderr %q: want the config refused", r.code, r.errOut)
		}
	})
	t.Run("failures", func(t *testing.T) {
		if r := run(t, "query", "--kubeconfig", cluster.UnprivilegedKubeconfig, "pods", "-n", ns); r.code != 1 {
			t.Errorf("forbidden: exit code %d, want 1", r.code)
		}
		if r := query(t, "podz"); r.code != 2 {
			t.Errorf("unknown resource: exit code %d, want 2", r.code)
		}
		kubeconfig, stalled := stallingProxy(t, podRequests)
		if r := runTimed(context.Background(), t, "query", "--kubeconfig", kubeconfig, "pods", "-A", "--sync-timeout", "1s"); r.code != 1 {
			t.Errorf("sync timeout: exit code %d, want 1", r.code)
		}
		if r := runTimed(context.Background(), t, "query", "--kubeconfig", cluster.KubeconfigFor(t, "https://"+framework.SilentServer(t)), "pods", "--request-timeout", "1s"); r.code != 1 {
			t.Errorf("request timeout: exit code %d, want 1", r.code)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan timed, 1)
		go func() { done <- runTimed(ctx, t, "watch", "--kubeconfig", kubeconfig, "pods", "-A") }()
		<-stalled
		cancel()
		if r := <-done; r.code != 0 {
			t.Errorf("watch interrupted while listing: exit code %d, want 0", r.code)
		}
	})
	verifyNoLeaks(t, before,
		// The reader of an HTTP/2 connection of client-go's transport cache
		// to the API server, which serves HTTP/2 over TLS. It waits in the
		// network poller, so the function to ignore is not at the top of
		// its stack.
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		// And those of an HTTP/1.1 connection kept for reuse.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	)
}

// verifyNoLeaks fails the test if goroutines other than those opts ignore
// are still running after framework.HangTimeout: informers stop
// asynchronously once their context ends.
func verifyNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for goleak.Find(opts...) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := goleak.Find(opts...); err != nil {
		t.Error(fmt.Errorf("goroutines left behind: %w", err))
	}
}

package query_test

import (
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// TestCtrlC runs the plugin's binary, waits until it is at a given point,
// sends it SIGINT (or SIGTERM) and checks that it ends within 2 seconds
// with the documented exit code: 0 for a watch or query --watch, which
// Ctrl-C is how one stops, and 128 + the signal's number for a command
// interrupted before it was done, wherever it waits: for discovery from a
// server that never answers, or for a list that never completes.
func TestCtrlC(t *testing.T) {
	bin := pluginBinary(t)
	proxy, stalled := stallingProxy(t, podRequests)
	// A server that answers nothing, discovery included.
	silent, asked := stallingProxy(t, func(*http.Request) bool { return true })
	ns := workload.NamespaceName(0)

	// Each readiness check returns once the command is where the signal
	// should find it.
	printed := func(t *testing.T, out *framework.SyncBuffer) {
		t.Helper()
		framework.Eventually(t, "the command prints", func() bool { return strings.TrimSpace(out.String()) != "" })
	}
	listing := func(t *testing.T, _ *framework.SyncBuffer) {
		t.Helper()
		select {
		case <-stalled:
		case <-time.After(framework.HangTimeout):
			t.Fatalf("the pods were not asked for within %s", framework.HangTimeout)
		}
	}
	resolving := func(t *testing.T, _ *framework.SyncBuffer) {
		t.Helper()
		select {
		case <-asked:
		case <-time.After(framework.HangTimeout):
			t.Fatalf("discovery was not asked for within %s", framework.HangTimeout)
		}
	}

	tests := []struct {
		name   string
		args   []string
		ready  func(*testing.T, *framework.SyncBuffer)
		sig    syscall.Signal
		code   int
		stderr string
	}{
		{"query --watch", []string{"query", "--kubeconfig", cluster.Kubeconfig, "pods", "-A", "--count", "--watch"}, printed, syscall.SIGINT, 0, ""},
		{"watch", []string{"watch", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", ns}, printed, syscall.SIGINT, 0, ""},
		{"watch while listing", []string{"watch", "--kubeconfig", proxy, "pods", "-A"}, listing, syscall.SIGINT, 0, ""},
		{"query while listing", []string{"query", "--kubeconfig", proxy, "pods", "-A"}, listing, syscall.SIGINT, 130, "error: interrupted\n"},
		{"query --watch while listing", []string{"query", "--kubeconfig", proxy, "pods", "-A", "--watch"}, listing, syscall.SIGINT, 130, "error: interrupted\n"},
		{"query while resolving", []string{"query", "--kubeconfig", silent, "pods"}, resolving, syscall.SIGINT, 130, "error: interrupted\n"},
		{"SIGTERM while listing", []string{"query", "--kubeconfig", proxy, "pods", "-A"}, listing, syscall.SIGTERM, 143, "error: terminated\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for len(stalled) > 0 || len(asked) > 0 { // the requests of commands run before
				select {
				case <-stalled:
				case <-asked:
				}
			}
			var out, errOut framework.SyncBuffer
			cmd := exec.Command(bin, append(tt.args, "--cache-dir", t.TempDir())...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					if err := <-done; err != nil {
						t.Logf("killed: %v", err)
					}
				}
			})
			tt.ready(t, &out)
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			select {
			case err := <-done:
				// A non-zero exit is checked below; any other error is not.
				if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
					t.Fatal(err)
				}
			case <-time.After(framework.HangTimeout):
				t.Fatalf("still running %s after %s\nstdout:\n%s\nstderr:\n%s", framework.HangTimeout, tt.sig, &out, &errOut)
			}
			t.Logf("ended %s after %s", time.Since(sent).Round(time.Millisecond), tt.sig)
			if code := cmd.ProcessState.ExitCode(); code != tt.code || errOut.String() != tt.stderr {
				t.Errorf("exit code %d, stderr %q; want %d and %q", code, errOut.String(), tt.code, tt.stderr)
			}
		})
	}
}

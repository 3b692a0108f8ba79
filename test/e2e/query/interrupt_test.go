package query_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

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
			done := startCommand(t, cmd)
			tt.ready(t, &out)
			signalAndWait(t, cmd, done, tt.sig, &out, &errOut)
			if code := cmd.ProcessState.ExitCode(); code != tt.code || errOut.String() != tt.stderr {
				t.Errorf("exit code %d, stderr %q; want %d and %q", code, errOut.String(), tt.code, tt.stderr)
			}
		})
	}
}

// Expressions whose evaluation on one object runs for a long time: nested
// comprehensions of 1,000 × 1,000 iterations, which the cost limit stops
// after 1,000,000 cost units, a second or so per object.
const (
	longPredicate = `lists.range(1000).all(i, lists.range(1000).all(j, i + j + size(object.metadata.name) >= 0))`
	longValue     = `lists.range(1000).map(i, lists.range(1000).filter(j, i + j + size(object.metadata.name) >= 0).size()).sum()`
	// syncedIndex fails on every object: the warning that says so is
	// printed once the caches have synced, just before the answer is
	// evaluated.
	syncedIndex = `synced=string(int(object.metadata.name))`
)

// TestInterruptEvaluation runs the plugin's binary with expressions that
// take about a second per object, waits until it has synced its caches
// (it warns about an index that failed on every object as it starts
// answering), then sends SIGINT or SIGTERM while it evaluates --where,
// --sort-by, --group-by or --columns. It must stop evaluating and end with
// 130 (143 for SIGTERM) and "interrupted", printing no answer.
func TestInterruptEvaluation(t *testing.T) {
	bin := pluginBinary(t)
	ns := workload.NamespaceName(0)
	tests := []struct {
		name   string
		args   []string
		sig    syscall.Signal
		code   int
		stderr string
	}{
		{"--where", []string{"--count", "--where", longPredicate}, syscall.SIGINT, 130, "error: interrupted\n"},
		{"--where, SIGTERM", []string{"--count", "--where", longPredicate}, syscall.SIGTERM, 143, "error: terminated\n"},
		{"--sort-by", []string{"--sort-by", longValue}, syscall.SIGINT, 130, "error: interrupted\n"},
		{"--group-by", []string{"--count", "--group-by", longValue}, syscall.SIGINT, 130, "error: interrupted\n"},
		{"--columns", []string{"--columns", "n=" + longValue}, syscall.SIGTERM, 143, "error: terminated\n"},
		{"--watch before its first answer", []string{"--count", "--watch", "--where", longPredicate}, syscall.SIGINT, 130, "error: interrupted\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// --cost-limit 0: a query ends at the first evaluation the
			// limit stops, and refuses one it is certain to stop.
			args := append([]string{"query", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", ns, "--index", syncedIndex, "--cache-dir", t.TempDir(), "--cost-limit", "0"}, tt.args...)
			var out, errOut framework.SyncBuffer
			cmd := exec.Command(bin, args...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			done := startCommand(t, cmd)
			framework.Eventually(t, "the caches are synced", func() bool { return strings.Contains(errOut.String(), `warning: index "synced": `) })
			signalAndWait(t, cmd, done, tt.sig, &out, &errOut)
			warning, rest, _ := strings.Cut(errOut.String(), "\n")
			if code := cmd.ProcessState.ExitCode(); code != tt.code || out.String() != "" || !strings.HasPrefix(warning, `warning: index "synced": `) || rest != tt.stderr {
				t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s\nwant %d, no answer and stderr %q after the index warning", code, &out, &errOut, tt.code, tt.stderr)
			}
		})
	}
}

// endless is an expression that no one waits for: 10,000,000,000
// iterations, which only --cost-limit 0 lets run.
const endless = `lists.range(100000).all(i, lists.range(100000).all(j, i + j + size(object.metadata.name) >= 0))`

// TestInterruptWithoutCostLimit runs commands in process with --cost-limit
// 0 and an expression that would run for hours, waits until it is being
// evaluated (in an index function as the informer stores the objects of
// its initial list, or on a watch's events), and cancels the command's
// context as Ctrl-C does: the command ends with its exit code, the
// evaluation stops, and no goroutine is left behind.
func TestInterruptWithoutCostLimit(t *testing.T) {
	ns := workload.NamespaceName(0)
	tests := []struct {
		name string
		args []string
		// in is the function, in the goroutine that evaluates, to wait for.
		in     string
		code   int
		stderr string
	}{
		{"index", []string{"query", "pods", "-n", ns, "--index", "slow=string(" + endless + ")", "--by", "slow=x"}, "/pkg/indexers.IndexFunc.func", 130, "error: interrupted\n"},
		{"query -i index", []string{"query", "pods", "-n", ns, "-i", "--index", "slow=string(" + endless + ")"}, "/pkg/indexers.IndexFunc.func", 130, "error: interrupted\n"},
		{"watch", []string{"watch", "pods", "-n", ns, "--where", endless}, "/pkg/query/watch.(*emitter).matchLocked", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan result, 1)
			go func() {
				args := append(append(tt.args[:1:1], "--kubeconfig", cluster.Kubeconfig, "--cost-limit", "0"), tt.args[1:]...)
				code, out, errOut := framework.RunPlugin(ctx, nil, args...)
				done <- result{code: code, out: out, errOut: errOut}
			}()
			framework.Eventually(t, "the expression is evaluated", func() bool {
				select {
				case r := <-done:
					t.Fatalf("the command ended before evaluating: exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
				default:
				}
				buf := make([]byte, 1<<22)
				return strings.Contains(string(buf[:runtime.Stack(buf, true)]), tt.in)
			})
			cancel()
			select {
			case r := <-done:
				if r.code != tt.code || r.out != "" || r.errOut != tt.stderr {
					t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s\nwant %d, no output and stderr %q", r.code, r.out, r.errOut, tt.code, tt.stderr)
				}
			case <-time.After(framework.HangTimeout):
				t.Fatalf("the command did not end within %s of its cancellation", framework.HangTimeout)
			}
			// Connections kept for reuse, HTTP/2's and HTTP/1.1's, are the
			// transport's.
			verifyNoLeaks(t, before, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
				goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"), goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
		})
	}
}

// startCommand starts cmd and returns the channel that receives what its
// Wait returns; a process still running when the test ends is killed.
func startCommand(t *testing.T, cmd *exec.Cmd) chan error {
	t.Helper()
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
	return done
}

// signalAndWait sends sig to cmd, started by startCommand with done, and
// waits for it to end; it fails the test if cmd still runs after
// framework.HangTimeout, or if it ends with an error other than a
// non-zero exit (which the caller checks).
func signalAndWait(t *testing.T, cmd *exec.Cmd, done <-chan error, sig os.Signal, out, errOut fmt.Stringer) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-done:
		if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(framework.HangTimeout):
		t.Fatalf("still running %s after %s\nstdout:\n%s\nstderr:\n%s", framework.HangTimeout, sig, out, errOut)
	}
	t.Logf("ended %s after %s", time.Since(sent).Round(time.Millisecond), sig)
}

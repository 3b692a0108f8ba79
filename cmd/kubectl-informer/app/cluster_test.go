package app

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// askedServer listens on loopback, reads the HTTP requests sent to it and
// never answers them, until the test ends. It returns its URL and a
// function returning the request lines read so far.
func askedServer(t *testing.T) (string, func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex // guards conns and lines
		conns []net.Conn
		lines []string
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(line, "GET ") {
						mu.Lock()
						lines = append(lines, strings.TrimSpace(line))
						mu.Unlock()
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + l.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// kubeconfigFor writes a kubeconfig for server, without credentials.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: `+server+`
users:
- name: test
  user: {}
contexts:
- name: test
  context: {cluster: test, user: test, namespace: default}
current-context: test
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// hangTimeout is how long a test waits for something that must happen:
// long enough that only a hang reaches it on a busy machine running the
// race detector.
const hangTimeout = 3 * time.Minute

// result is what one in-process run of the plugin did.
type result struct {
	code   int
	errOut string
}

// runCtx runs the plugin in process with ctx as its command's context
// and a discovery cache of its own: the shared one may hold what another
// server on the same port answered.
func runCtx(ctx context.Context, t *testing.T, args ...string) result {
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	cmd := NewRootCommand(streams)
	cmd.SetArgs(append(args, "--cache-dir", t.TempDir()))
	cmd.SetContext(ctx)
	code := Execute(cmd, streams)
	return result{code: code, errOut: errOut.String()}
}

// waitRequests waits until the server has read n requests.
func waitRequests(t *testing.T, requests func() []string, n int) {
	t.Helper()
	for deadline := time.Now().Add(hangTimeout); len(requests()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server read %d requests in %s, want %d", len(requests()), hangTimeout, n)
		}
	}
}

// TestSilentServerSyncTimeout checks that --sync-timeout bounds resource
// resolution too: a server that accepts connections and never answers
// ends query, watch and indexes, with a message naming the flag (without
// the bound, client-go's discovery timeout would end them, twice).
func TestSilentServerSyncTimeout(t *testing.T) {
	server, _ := askedServer(t)
	kubeconfig := kubeconfigFor(t, server)
	for _, verb := range []string{"query", "watch", "indexes"} {
		t.Run(verb, func(t *testing.T) {
			r := runCtx(context.Background(), t, verb, "--kubeconfig", kubeconfig, "pods", "--sync-timeout", "1s")
			if r.code != ExitRuntime {
				t.Errorf("exit code %d, want %d", r.code, ExitRuntime)
			}
			want := ": no answer within 1s\nthe API server did not answer within --sync-timeout (1s): check that it is running and healthy and that the kubeconfig (--kubeconfig, --context) points at it; raise --sync-timeout if it is only slow\n"
			if !failedRequest(r.errOut, server, want) {
				t.Errorf("stderr %q, want an error naming %s, then %q", r.errOut, server, want)
			}
		})
	}
}

// TestSilentServerRequestTimeout checks that a request that timed out is
// not made again while the caches fill: the command ends after one
// --request-timeout, not one per discovery attempt.
func TestSilentServerRequestTimeout(t *testing.T) {
	server, requests := askedServer(t)
	r := runCtx(context.Background(), t, "query", "--kubeconfig", kubeconfigFor(t, server), "pods", "--request-timeout", "1s")
	if r.code != ExitRuntime {
		t.Errorf("exit code %d, want %d", r.code, ExitRuntime)
	}
	want := `: no answer within 1s
the API server did not answer within --request-timeout (1s): check that it is running and healthy and that the kubeconfig (--kubeconfig, --context) points at it; raise --request-timeout if it is only slow
`
	if !failedRequest(r.errOut, server, want) {
		t.Errorf("stderr:\n%s\nwant an error naming %s, then:\n%s", r.errOut, server, want)
	}
	if got := requests(); len(got) != 1 {
		t.Errorf("the server was asked %d times, want once: %q", len(got), got)
	}
}

// failedRequest reports whether errOut is one line "error: …" naming
// server and ending with end, which may go on over more lines. What the
// request was is client-go's wording and is not checked.
func failedRequest(errOut, server, end string) bool {
	first, _, _ := strings.Cut(errOut, "\n")
	return strings.HasPrefix(errOut, "error: ") && strings.Contains(first, server) && strings.HasSuffix(errOut, end) &&
		!strings.Contains(strings.TrimSuffix(errOut, end), "\n")
}

// TestInterrupted checks that a command waiting for a silent server ends
// at once when its context is cancelled (as Ctrl-C cancels it), with
// ExitInterrupted.
func TestInterrupted(t *testing.T) {
	server, requests := askedServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runCtx(ctx, t, "query", "--kubeconfig", kubeconfigFor(t, server), "pods") }()
	waitRequests(t, requests, 1)
	expectInterrupted(t, cancel, done)
}

// expectInterrupted cancels a command's context and checks that it ends,
// as interrupted: the server never answers, so nothing else could end it.
func expectInterrupted(t *testing.T, cancel context.CancelFunc, done <-chan result) {
	t.Helper()
	cancel()
	select {
	case r := <-done:
		if r.code != ExitInterrupted || r.errOut != "error: interrupted\n" {
			t.Errorf("exit code %d, stderr %q; want %d and the interruption", r.code, r.errOut, ExitInterrupted)
		}
	case <-time.After(hangTimeout):
		t.Fatalf("the command did not end within %s of its cancellation", hangTimeout)
	}
}

// TestSignals sends SIGINT, then SIGTERM, to the test process while a
// query waits for a silent server: each ends the query at once with
// 128 + the signal's number. The signal is sent only once the query
// waits, so its handler is installed.
func TestSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			server, requests := askedServer(t)
			done := make(chan result, 1)
			go func() {
				done <- runCtx(context.Background(), t, "query", "--kubeconfig", kubeconfigFor(t, server), "pods")
			}()
			waitRequests(t, requests, 1)
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			want := map[syscall.Signal]string{syscall.SIGINT: "interrupted", syscall.SIGTERM: "terminated"}[sig]
			select {
			case r := <-done:
				if r.code != 128+int(sig) || r.errOut != "error: "+want+"\n" {
					t.Errorf("exit code %d, stderr %q; want %d and %q", r.code, r.errOut, 128+int(sig), want)
				}
			case <-time.After(hangTimeout):
				t.Fatalf("the query did not end within %s of %s", hangTimeout, sig)
			}
		})
	}
}

func TestInterruptedErrorExitCodes(t *testing.T) {
	for _, tt := range []struct {
		err  *InterruptedError
		code int
		msg  string
	}{
		{&InterruptedError{}, 130, "interrupted"},
		{&InterruptedError{Signal: os.Interrupt}, 130, "interrupted"},
		{&InterruptedError{Signal: syscall.SIGTERM}, 143, "terminated"},
	} {
		if tt.err.ExitCode() != tt.code || tt.err.Error() != tt.msg {
			t.Errorf("%#v: exit code %d, message %q; want %d, %q", tt.err, tt.err.ExitCode(), tt.err.Error(), tt.code, tt.msg)
		}
	}
}

// TestNoGoroutineLeaks runs commands that end every way a command against
// an unhealthy server ends (refused, timed out, interrupted) and checks
// that none leaves a goroutine behind: the signal handler, the request
// bounds and the informers all end with the command.
func TestNoGoroutineLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	_ = l.Close()
	t.Run("refused", func(t *testing.T) {
		if r := runCtx(context.Background(), t, "query", "--kubeconfig", kubeconfigFor(t, refused), "pods"); r.code != ExitRuntime {
			t.Errorf("exit code %d, want %d; stderr %q", r.code, ExitRuntime, r.errOut)
		}
	})
	t.Run("timeouts", func(t *testing.T) {
		server, _ := askedServer(t)
		kubeconfig := kubeconfigFor(t, server)
		for _, args := range [][]string{
			{"query", "pods", "--sync-timeout", "500ms"},
			{"watch", "pods", "--sync-timeout", "500ms"},
			{"query", "pods", "--request-timeout", "500ms"},
		} {
			if r := runCtx(context.Background(), t, append(args, "--kubeconfig", kubeconfig)...); r.code != ExitRuntime {
				t.Errorf("%q: exit code %d, want %d; stderr %q", args, r.code, ExitRuntime, r.errOut)
			}
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		server, requests := askedServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() {
			done <- runCtx(ctx, t, "query", "--kubeconfig", kubeconfigFor(t, server), "pods", "--watch").code
		}()
		waitRequests(t, requests, 1)
		cancel()
		if code := <-done; code != ExitInterrupted {
			t.Errorf("exit code %d, want %d", code, ExitInterrupted)
		}
	})
	verifyNoLeaks(t, before)
}

// verifyNoLeaks fails the test if goroutines other than those opts ignore
// are still running after hangTimeout.
func verifyNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(hangTimeout)
	for goleak.Find(opts...) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := goleak.Find(opts...); err != nil {
		t.Error(fmt.Errorf("goroutines left behind: %w", err))
	}
}

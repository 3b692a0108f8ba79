package faults_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestExporterUnreachableAtStart starts the exporter against an API server
// that cannot be reached: an address where nothing listens (refused), and
// a listener that accepts connections and never answers (silent). Either
// way it listens and serves: /healthz answers 200, /readyz 503 naming the
// cause and the fix, /metrics its own metrics, with the failed attempts
// counted, while it tries again with a backoff, logging the failure once.
// Once the refused address forwards to the real kube-apiserver, the
// exporter loads its config, becomes ready and serves its families.
func TestExporterUnreachableAtStart(t *testing.T) {
	ns := cluster.NewNamespace(t, "unreachable")
	cluster.CreatePod(t, ns, "a", nil)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
`), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, server string) (*framework.Run, string) {
		addr := framework.ClosedPort(t)
		x := cluster.StartPlugin(t, "export", "--kubeconfig", cluster.KubeconfigFor(t, "https://"+server), "--config", config,
			"--web.listen-address", addr)
		return x, "http://" + addr
	}
	// unready waits until /readyz answers 503 after a failed attempt, and
	// checks what the exporter serves meanwhile: /readyz names one of
	// causes.
	unready := func(t *testing.T, x *framework.Run, url string, causes ...string) {
		t.Helper()
		var body string
		waitFor(t, x, "/readyz to name a failed attempt", func() bool {
			var code int
			code, body = get(url + "/readyz")
			return code == http.StatusServiceUnavailable && strings.Contains(body, "attempts failed")
		})
		for _, want := range []string{"the API server cannot be reached", "kubeconfig"} {
			if !strings.Contains(body, want) {
				t.Errorf("/readyz body lacks %q:\n%s", want, body)
			}
		}
		if !slices.ContainsFunc(causes, func(cause string) bool { return strings.Contains(body, cause) }) {
			t.Errorf("/readyz body names none of %q:\n%s", causes, body)
		}
		if code, body := get(url + "/healthz"); code != http.StatusOK {
			t.Errorf("/healthz: %d %q, want 200", code, body)
		}
		if v := ownMetric(url, "api_server_reachable"); v != 0 {
			t.Errorf("kubectl_informer_api_server_reachable = %v, want 0", v)
		}
		if v := ownMetric(url, "api_server_contact_errors_total"); v < 1 {
			t.Errorf("kubectl_informer_api_server_contact_errors_total = %v, want at least 1", v)
		}
		if _, body := get(url + "/metrics"); !strings.Contains(body, "\nkubectl_informer_build_info{") || !strings.Contains(body, "\ngo_goroutines ") {
			t.Errorf("/metrics lacks the exporter's own metrics (kubectl_informer_build_info, go_goroutines):\n%s", body)
		}
	}

	t.Run("refused, then the server comes", func(t *testing.T) {
		server := framework.ClosedPort(t)
		x, url := start(t, server)
		unready(t, x, url, "connection refused")
		// A few attempts more, with the backoff.
		waitFor(t, x, "three failed attempts", func() bool { return ownMetric(url, "api_server_contact_errors_total") >= 3 })

		forward(t, server, apiServerAddress(t))
		waitFor(t, x, "the exporter to be ready", func() bool {
			code, _ := get(url + "/readyz")
			return code == http.StatusOK
		})
		waitSeries(t, x, url, "test_pod_info", `{pod="a"}`)
		if v := ownMetric(url, "api_server_reachable"); v != 1 {
			t.Errorf("kubectl_informer_api_server_reachable = %v once ready, want 1", v)
		}
		logs := x.ErrOut.String()
		if n := strings.Count(logs, "the API server cannot be reached"); n != 1 {
			t.Errorf("the failure is logged %d times, want once (its cause did not change):\n%s", n, logs)
		}
		if !strings.Contains(logs, "the API server answered") {
			t.Errorf("the recovery is not logged:\n%s", logs)
		}
		if code := x.Stop(t); code != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", code, logs)
		}
	})

	// The server answers, and refuses the credentials: that is no failure
	// to reach it, and the exporter exits at once, with an error that says
	// why first, not after the names of the profile's files.
	t.Run("credentials refused, with the profile", func(t *testing.T) {
		kubeconfig, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, user := range kubeconfig.AuthInfos {
			*user = clientcmdapi.AuthInfo{Token: "not-a-token"}
		}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := framework.RunPlugin(context.Background(), nil, "export", "--kubeconfig", path, "--profile", "kube-state-metrics",
			"--resources", "pods", "--web.listen-address", framework.ClosedPort(t), "--cache-dir", t.TempDir())
		msg := errOut[max(strings.LastIndex(errOut, "error: "), 0):]
		if code != 1 || !strings.HasPrefix(msg, "error: ") || !strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, ".yaml") {
			t.Errorf("exit code %d, error %q; want 1 and an error saying 401 Unauthorized without the profile's file names\nstderr:\n%s", code, msg, errOut)
		}
	})

	t.Run("silent", func(t *testing.T) {
		x, url := start(t, framework.SilentServer(t))
		// The attempt's deadline and the TLS handshake's timeout are both
		// 10s: whichever ends first is the cause.
		unready(t, x, url, "deadline exceeded", "TLS handshake timeout")
		if code := x.Stop(t); code != app.ExitInterrupted {
			t.Errorf("exit code %d, want %d: stopped before the config was loaded; stderr:\n%s", code, app.ExitInterrupted, x.ErrOut)
		}
	})
}

// ownMetric returns the value of the exporter's own series
// kubectl_informer_NAME, without labels, or -1 when there is none.
func ownMetric(url, name string) float64 {
	_, body := get(url + "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "kubectl_informer_"+name+" "); ok {
			if v, err := strconv.ParseFloat(rest, 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// apiServerAddress is the host:port of the test cluster's kube-apiserver.
func apiServerAddress(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(cluster.Config.Host)
	if err != nil || u.Host == "" {
		return cluster.Config.Host
	}
	return u.Host
}

// forward listens on addr and forwards each connection to target, byte
// for byte (TLS passes through), until the test ends.
func forward(t *testing.T, addr, target string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex // guards conns and closed
		conns  []net.Conn
		closed bool
	)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				_, _ = in.Close(), out.Close()
				return
			}
			conns = append(conns, in, out)
			mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range conns {
			_ = c.Close()
		}
	})
}

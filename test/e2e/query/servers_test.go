package query_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// stallingProxy serves the test cluster's API on a loopback HTTP address
// with the admin's credentials, except that the requests stall selects are
// never answered: they wait until the client gives up or the test ends. It
// returns a kubeconfig for the proxy, without credentials, and a channel
// that receives the URL of each stalled request.
func stallingProxy(t *testing.T, stall func(*http.Request) bool) (string, <-chan string) {
	t.Helper()
	rt, err := rest.TransportFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cluster.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	if target.Scheme == "" {
		target, _ = url.Parse("https://" + cluster.Config.Host)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorHandler:  func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	}
	stalled := make(chan string, 100)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !stall(r) {
			proxy.ServeHTTP(w, r)
			return
		}
		select {
		case stalled <- r.URL.String():
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	// Cleanups run last first: the stalled requests are released before
	// the server waits for its requests to end.
	t.Cleanup(func() {
		srv.Close()
		utilnet.CloseIdleConnectionsFor(rt)
	})
	t.Cleanup(func() { close(release) })

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy", Namespace: "default"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, stalled
}

// podRequests selects the list and watch requests of pods.
func podRequests(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/pods") }

// timed is what one run of the plugin did and how long it took.
type timed struct {
	result
	elapsed time.Duration
}

// runTimed runs the plugin in process, with a discovery cache of its own:
// the shared one may hold what another server once answered on the same
// port.
func runTimed(ctx context.Context, t *testing.T, args ...string) timed {
	t.Helper()
	start := time.Now()
	code, out, errOut := framework.RunPlugin(ctx, nil, append(args, "--cache-dir", t.TempDir())...)
	return timed{result{code: code, out: out, errOut: errOut}, time.Since(start)}
}

// pluginBinary builds the plugin's binary into a directory of the test.
func pluginBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-informer")
	build := exec.Command("go", "build", "-o", bin, "github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestRequestTimeoutNamed checks that lists cut short by --request-timeout,
// which the informers retry until --sync-timeout, are reported as the
// request timeout's doing: kubectl names --request-timeout for its own.
func TestRequestTimeoutNamed(t *testing.T) {
	proxy, _ := stallingProxy(t, podRequests)
	for _, verb := range []string{"query", "watch"} {
		t.Run(verb, func(t *testing.T) {
			r := runTimed(context.Background(), t, verb, "--kubeconfig", proxy, "pods", "-A", "--request-timeout", "1s", "--sync-timeout", "4s")
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.errOut)
			}
			if !strings.Contains(r.errOut, "raise --request-timeout") || strings.Contains(r.errOut, "raise --sync-timeout") {
				t.Errorf("stderr %q: want it to name --request-timeout, not --sync-timeout", r.errOut)
			}
		})
	}
}

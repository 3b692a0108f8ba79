package query_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// slack is what a run may take beyond the timeout that ends it: starting
// the command, and a loaded machine running the race detector.
const slack = 2500 * time.Millisecond

// checkRun checks a run's exit code, that its stderr starts with prefix and
// ends with suffix, and that it took at least min and at most max.
func checkRun(t *testing.T, r timed, code int, prefix, suffix string, min, max time.Duration) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d", r.code, code)
	}
	if !strings.HasPrefix(r.errOut, prefix) || !strings.HasSuffix(r.errOut, suffix) {
		t.Errorf("stderr:\n%s\nwant it to start with:\n%s\nand end with:\n%s", r.errOut, prefix, suffix)
	}
	if r.elapsed < min || r.elapsed > max {
		t.Errorf("took %s, want between %s and %s", r.elapsed, min, max)
	}
}

// The hints that follow a request that got no answer.
const (
	checkServer     = "check that it is running and healthy and that the kubeconfig (--kubeconfig, --context) points at it"
	unreachableHint = "\nthe API server could not be reached: check that the cluster is running and that the kubeconfig (--kubeconfig, --context) points at it\n"
)

// TestUnreachableServer checks that a server where nothing listens fails a
// query at once, as kubectl would, with exit code 1.
func TestUnreachableServer(t *testing.T) {
	addr := framework.ClosedPort(t)
	r := runTimed(t, context.Background(), "query", "--kubeconfig", cluster.KubeconfigFor(t, "https://"+addr), "pods", "-A")
	checkRun(t, r, 1, `error: Get "https://`+addr+`/api?timeout=32s": dial tcp `+addr+": connect: connection refused", unreachableHint, 0, slack)
}

// TestSilentServer checks that a server that accepts connections and never
// answers ends a query within --request-timeout or --sync-timeout,
// whichever is shorter, with a message naming the flag that bounded the
// wait. Before the caches are filled, a request that timed out is not made
// again: client-go's REST mapper would ask twice.
func TestSilentServer(t *testing.T) {
	addr := framework.SilentServer(t)
	server := "https://" + addr
	tests := []struct {
		name     string
		args     []string
		prefix   string
		suffix   string
		min, max time.Duration
	}{
		{"request timeout", []string{"--request-timeout", "3s"},
			`error: Get "` + server + `/api?timeout=3s": no answer within 3s` + "\n",
			"the API server did not answer within --request-timeout (3s): " + checkServer + "; raise --request-timeout if it is only slow\n",
			3 * time.Second, 3*time.Second + slack},
		{"sync timeout", []string{"--sync-timeout", "3s"},
			`error: Get "` + server + `/api?timeout=32s": no answer within 3s` + "\n",
			"the API server did not answer within --sync-timeout (3s): " + checkServer + "; raise --sync-timeout if it is only slow\n",
			3 * time.Second, 3*time.Second + slack},
		{"sync timeout first", []string{"--sync-timeout", "2s", "--request-timeout", "20s"},
			`error: Get "` + server + `/api?timeout=20s": no answer within 2s` + "\n",
			"the API server did not answer within --sync-timeout (2s): " + checkServer + "; raise --sync-timeout if it is only slow\n",
			2 * time.Second, 2*time.Second + slack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"query", "--kubeconfig", cluster.KubeconfigFor(t, server), "pods", "-A"}, tt.args...)
			checkRun(t, runTimed(t, context.Background(), args...), 1, tt.prefix, tt.suffix, tt.min, tt.max)
		})
	}
}

// TestStalledList checks that a server that answers discovery but never
// answers the list of pods ends query and watch within --sync-timeout,
// naming the resource that did not sync and the flag.
func TestStalledList(t *testing.T) {
	kubeconfig, stalled := stallingProxy(t, podRequests)
	const want = "error: timed out after 3s waiting for the cache of pods to sync\n"
	const hint = "raise --sync-timeout for very large clusters, or check the API server's health\n"
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"query", []string{"query", "pods", "-A"}},
		{"query, requests timing out", []string{"query", "pods", "-A", "--request-timeout", "1s"}},
		{"watch", []string{"watch", "pods", "-A"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runTimed(t, context.Background(), append(tt.args, "--kubeconfig", kubeconfig, "--sync-timeout", "3s")...)
			checkRun(t, r, 1, want, hint, 3*time.Second, 3*time.Second+slack)
			select {
			case u := <-stalled:
				if !strings.Contains(u, "pods") {
					t.Errorf("stalled %s", u)
				}
			default:
				t.Error("the pods were never asked for: the command did not get past discovery")
			}
		})
	}
}

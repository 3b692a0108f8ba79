package query_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// checkRun checks a run's exit code, that the first line of its stderr
// matches first (a regular expression) and that stderr ends with suffix, the
// hint, and that it took at least minElapsed: a run ended by a timeout cannot end
// before it. How much longer it took depends on the machine and is not
// checked.
func checkRun(t *testing.T, r timed, code int, first, suffix string, minElapsed time.Duration) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d", r.code, code)
	}
	line, _, _ := strings.Cut(r.errOut, "\n")
	if !regexp.MustCompile("^(?:"+first+")$").MatchString(line) || !strings.HasSuffix(r.errOut, suffix) {
		t.Errorf("stderr:\n%s\nwant a first line matching:\n%s\nand it to end with:\n%s", r.errOut, first, suffix)
	}
	if r.elapsed < minElapsed {
		t.Errorf("took %s, want at least %s", r.elapsed, minElapsed)
	}
}

// failedRequest matches the first line of the error of a request to server
// that failed with the message end: what the request was is client-go's
// wording and is not checked.
func failedRequest(server, end string) string {
	return "error: .*" + regexp.QuoteMeta(server) + ".*: " + regexp.QuoteMeta(end)
}

// The hints that follow a request that got no answer.
const (
	checkServer     = "check that it is running and healthy and that the kubeconfig (--kubeconfig, --context) points at it"
	unreachableHint = "\nthe API server could not be reached: check that the cluster is running and that the kubeconfig and its context point at it\n"
)

// TestUnreachableServer checks that a server where nothing listens fails a
// query at once, as kubectl would, with exit code 1.
func TestUnreachableServer(t *testing.T) {
	addr := framework.ClosedPort(t)
	r := runTimed(context.Background(), t, "query", "--kubeconfig", cluster.KubeconfigFor(t, "https://"+addr), "pods", "-A")
	checkRun(t, r, 1, "error: .*"+regexp.QuoteMeta("https://"+addr)+".*", unreachableHint, 0)
}

// TestSilentServer checks that a server that accepts connections and never
// answers ends a query within --request-timeout or --sync-timeout,
// whichever is shorter, with a message naming the flag that bounded the
// wait. Before the caches are filled, a request that timed out is not made
// again: client-go's REST mapper would ask twice.
func TestSilentServer(t *testing.T) {
	addr, accepted := framework.SilentServerCounting(t)
	server := "https://" + addr
	tests := []struct {
		name   string
		args   []string
		first  string
		suffix string
		min    time.Duration
	}{
		{"request timeout", []string{"--request-timeout", "3s"},
			failedRequest(server, "no answer within 3s"),
			"the API server did not answer within --request-timeout (3s): " + checkServer + "; raise --request-timeout if it is only slow\n",
			3 * time.Second},
		{"sync timeout", []string{"--sync-timeout", "3s"},
			failedRequest(server, "no answer within 3s"),
			"the API server did not answer within --sync-timeout (3s): " + checkServer + "; raise --sync-timeout if it is only slow\n",
			3 * time.Second},
		{"sync timeout first", []string{"--sync-timeout", "2s", "--request-timeout", "20s"},
			failedRequest(server, "no answer within 2s"),
			"the API server did not answer within --sync-timeout (2s): " + checkServer + "; raise --sync-timeout if it is only slow\n",
			2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"query", "--kubeconfig", cluster.KubeconfigFor(t, server), "pods", "-A"}, tt.args...)
			before := accepted()
			checkRun(t, runTimed(context.Background(), t, args...), 1, tt.first, tt.suffix, tt.min)
			// The server may accept the connection after the run ended.
			framework.Eventually(t, "the server accepted the request's connection", func() bool { return accepted() > before })
			if n := accepted() - before; n != 1 {
				t.Errorf("%d requests, want 1: a request that got no answer was made again", n)
			}
		})
	}
}

// TestStalledList checks that a server that answers discovery but never
// answers the list of pods ends query and watch within --sync-timeout,
// naming the resource that did not sync and the flag.
func TestStalledList(t *testing.T) {
	kubeconfig, stalled := stallingProxy(t, podRequests)
	const want = `error: timed out after 3s waiting for the cache of pods to sync`
	const hint = "raise --sync-timeout for very large clusters, or check the API server's health\n"
	// A --request-timeout shorter than --sync-timeout cut each list: it
	// is the flag to raise.
	const requestHint = "raise --request-timeout if the API server is only slow, or check its health\n"
	for _, tt := range []struct {
		name string
		args []string
		hint string
	}{
		{"query", []string{"query", "pods", "-A"}, hint},
		{"query, requests timing out", []string{"query", "pods", "-A", "--request-timeout", "1s"}, requestHint},
		{"watch", []string{"watch", "pods", "-A"}, hint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runTimed(context.Background(), t, append(tt.args, "--kubeconfig", kubeconfig, "--sync-timeout", "3s")...)
			checkRun(t, r, 1, regexp.QuoteMeta(want), tt.hint, 3*time.Second)
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

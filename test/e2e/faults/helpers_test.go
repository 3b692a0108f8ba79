package faults_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// startExporter runs "kubectl informer export" with the config whose
// resources are given (YAML, indented as under "resources:") and the extra
// flags, and waits until /readyz answers 200. It returns the run and the
// exporter's base URL.
func startExporter(t *testing.T, resources string, flags ...string) (*framework.Run, string) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config.yaml")
	body := "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n" + resources
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	x := cluster.StartPlugin(t, append([]string{"export", "--config", config, "--web.listen-address", addr}, flags...)...)
	url := "http://" + addr
	waitFor(t, x, "the exporter to be ready", func() bool {
		code, _ := get(url + "/readyz")
		return code == http.StatusOK
	})
	return x, url
}

// series returns the labels of every series of metric on /metrics as
// written there, `{a="x",b="y"}`, sorted; a series there twice is there
// twice.
func series(url, metric string) []string {
	_, body := get(url + "/metrics")
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, metric+"{"); ok {
			if end := strings.LastIndex(rest, "} "); end >= 0 {
				out = append(out, "{"+rest[:end+1])
			}
		}
	}
	slices.Sort(out)
	return out
}

// waitSeries waits until the series of metric are exactly want, failing
// the test after framework.HangTimeout.
func waitSeries(t *testing.T, x *framework.Run, url, metric string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	if !poll(framework.HangTimeout, func() bool {
		got = series(url, metric)
		return slices.Equal(got, want)
	}) {
		t.Fatalf("after %s, the series of %s are\n  %s\nwant\n  %s\nstderr:\n%s", framework.HangTimeout, metric,
			strings.Join(got, "\n  "), strings.Join(want, "\n  "), x.ErrOut)
	}
}

// telemetry returns the value of the exporter's own series
// kubectl_informer_NAME{LABELS}, labels as written on /metrics (sorted by
// name), or -1 when there is none.
func telemetry(url, name, labels string) float64 {
	_, body := get(url + "/metrics")
	prefix := "kubectl_informer_" + name + "{" + labels + "} "
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				return -1
			}
			return v
		}
	}
	return -1
}

// poll calls cond every 100 ms until it holds or timeout passes, and
// reports whether it held. Unlike waitFor it does not end the test: it is
// for functions that run while a control plane process is down, which must
// return so that it is started again.
func poll(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// retry calls fn until it returns nil, for up to framework.HangTimeout:
// requests made just after a fault may fail while the control plane
// recovers.
func retry(t *testing.T, what string, fn func(ctx context.Context) error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(framework.HangTimeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = fn(ctx)
		cancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

// created is the error of a create request, nil when the object exists
// already: a retried request may have succeeded before its answer was lost.
func created(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

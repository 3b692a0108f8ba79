package framework

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Prometheus is a real Prometheus server, built by `make prometheus` into
// the directory of the control plane's binaries, with its storage in a
// directory of its own.
type Prometheus struct {
	// URL is where it serves its API.
	URL string
	api promv1.API
	cmd *exec.Cmd
	log *SyncBuffer
}

// Promtool returns the path of the promtool `make prometheus` built, or
// fails the test saying how to build it.
func (c *Cluster) Promtool(t testing.TB) string {
	t.Helper()
	return c.prometheusBinary(t, "promtool")
}

func (c *Cluster) prometheusBinary(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(c.BinDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not built: run make prometheus (it builds prometheus and promtool from hack/prometheus into %s): %v", name, c.BinDir, err)
	}
	return p
}

// StartPrometheus starts a Prometheus server whose prometheus.yml is
// config, waits until it is ready and stops it when the test ends.
func (c *Cluster) StartPrometheus(t *testing.T, config string) *Prometheus {
	t.Helper()
	bin := c.prometheusBinary(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := ClosedPort(t)
	p := &Prometheus{URL: "http://" + addr, log: &SyncBuffer{}}
	p.cmd = exec.Command(bin, //nolint:gosec // G204: the Prometheus the project builds
		"--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	// exited is closed once the process has ended, with its error in
	// exitErr.
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			if exitErr != nil {
				t.Errorf("prometheus ended with %v on SIGTERM", exitErr)
			}
		case <-time.After(HangTimeout):
			_ = p.cmd.Process.Kill()
			<-exited
			t.Errorf("prometheus did not stop within %s of SIGTERM", HangTimeout)
		}
		if t.Failed() {
			t.Logf("prometheus' log:\n%s", p.log)
		}
	})
	client, err := api.NewClient(api.Config{Address: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	p.api = promv1.NewAPI(client)
	Eventually(t, "prometheus answers /-/ready with 200", func() bool {
		select {
		case <-exited:
			t.Fatalf("prometheus exited before it was ready: %v\n%s", exitErr, p.log)
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready") //nolint:gosec,noctx // G107: the test's own Prometheus
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// Query evaluates the PromQL expression q at the current time and returns
// its answer, which must be an instant vector.
func (p *Prometheus) Query(q string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, warnings, _, err := p.api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("query %s: warnings %v", q, warnings)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: answered a %s, want a vector", q, v.Type())
	}
	return vec, nil
}

// Answer is an instant vector as a map from each sample's labels, written
// as by Key, to its value.
type Answer map[string]float64

// Key writes the values of labels, in that order, joined by "/": the key of
// a sample in an Answer.
func Key(labels ...string) string { return strings.Join(labels, "/") }

// AnswerOf keys the samples of v by the values of labels; samples with
// the same values add up.
func AnswerOf(v model.Vector, labels ...string) Answer {
	a := Answer{}
	for _, s := range v {
		vals := make([]string, len(labels))
		for i, l := range labels {
			vals[i] = string(s.Metric[model.LabelName(l)])
		}
		a[Key(vals...)] += float64(s.Value)
	}
	return a
}

// String writes a in key order, one sample a line.
func (a Answer) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(a)) {
		fmt.Fprintf(&b, "  %s = %s\n", k, FormatValue(a[k]))
	}
	return b.String()
}

// errAnswer is the mismatch of an answer and what was wanted.
func errAnswer(q string, got, want Answer) error {
	return fmt.Errorf("%s answered\n%swant\n%s", q, got, want)
}

// WaitAnswer waits until q, keyed by labels, answers want, and fails the
// test with the last answer if it does not within HangTimeout. Prometheus
// scrapes and evaluates on its own schedule: the answer is right once the
// scrapes after the change have been ingested.
func (p *Prometheus) WaitAnswer(t testing.TB, q string, want Answer, labels ...string) {
	t.Helper()
	p.WaitFor(t, q, func(v model.Vector) error {
		if got := AnswerOf(v, labels...); !maps.Equal(got, want) {
			return errAnswer(q, got, want)
		}
		return nil
	})
}

// WaitFor waits until check accepts the answer of q, and fails the test
// with check's last error if it does not within HangTimeout.
func (p *Prometheus) WaitFor(t testing.TB, q string, check func(model.Vector) error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(HangTimeout); ; time.Sleep(100 * time.Millisecond) {
		v, err := p.Query(q)
		if err == nil {
			err = check(v)
		}
		if err == nil {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", HangTimeout, last)
		}
	}
}

// LabelValues returns the values of label on the series that match
// selects (a series selector), as Grafana's label_values() asks.
func (p *Prometheus) LabelValues(label, match string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vals, _, _, err := p.api.LabelValues(ctx, label, []string{match}, time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out, nil
}

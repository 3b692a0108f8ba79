// Package ksm_test runs the plugin's binary under the name
// kube-state-metrics against a real kube-apiserver, with kube-state-metrics'
// command line, and checks what its flags do.
package ksm_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) { os.Exit(framework.Main(m, &cluster)) }

// process is the binary running as kube-state-metrics.
type process struct {
	cmd    *exec.Cmd
	stderr *framework.SyncBuffer
	// url is the main listener's.
	url  string
	done chan error
}

// freePort returns a port nothing listens on, for the binary to listen on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startKSM runs kube-state-metrics ARGS with env added to the
// environment, listening on 127.0.0.1 on a free main port (unless args
// give --port or --config) and any telemetry port, until the test ends.
func startKSM(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	port := freePort(t)
	all := []string{"--kubeconfig", cluster.Kubeconfig, "--host=127.0.0.1", "--telemetry-host=127.0.0.1", "--telemetry-port=0"}
	if !hasFlag(args, "--port") {
		all = append(all, "--port="+strconv.Itoa(port))
	}
	cmd := exec.Command(cluster.DropInBinary(t), append(all, args...)...) //nolint:gosec // G204: the test's own binary
	p := &process{cmd: cmd, stderr: &framework.SyncBuffer{}, url: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// stop ends the process with SIGTERM, unless it has ended, and waits
// for it.
func (p *process) stop(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(framework.HangTimeout):
		_ = p.cmd.Process.Kill()
		t.Errorf("kube-state-metrics did not stop on SIGTERM\n%s", p.stderr)
	}
}

// scrape returns the families of url's /metrics; nil while it does not
// answer 200. A process that has exited fails the test.
func (p *process) scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("kube-state-metrics exited: %v\n%s", err, p.stderr)
	default:
	}
	return scrapeURL(t, url)
}

// scrapeURL returns the families of url's /metrics; nil while it does not
// answer 200 (an exporter still starting refuses).
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics") //nolint:gosec,noctx // G107: the test's own exporter
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s/metrics does not parse: %v", url, err)
	}
	return mfs
}

// labelValues returns the values of label of the series of family in mfs
// whose namespace is ns, sorted.
func labelValues(mfs map[string]*dto.MetricFamily, family, ns, label string) []string {
	var out []string
	for _, m := range mfs[family].GetMetric() {
		var inNS bool
		var value string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				inNS = l.GetValue() == ns
			case label:
				value = l.GetValue()
			}
		}
		if inNS {
			out = append(out, value)
		}
	}
	slices.Sort(out)
	return out
}

// waitServed waits until family's series of namespace ns at url have the
// values want of label, and fails with what was served last.
func (p *process) waitServed(t *testing.T, url, family, ns, label string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	p.waitFor(t, func() bool {
		mfs := p.scrape(t, url)
		if mfs == nil {
			return false
		}
		got = labelValues(mfs, family, ns, label)
		return slices.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("%s of namespace %s at %s: %s %v, want %v", family, ns, url, label, got, want)
	})
}

// waitFor waits until cond holds, and fails with what says what was seen
// last and the process's logs.
func (p *process) waitFor(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s\nstderr:\n%s", what(), p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package framework

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// Resolver resolves resource names with the admin's kubeconfig and a
// discovery cache of the test's own.
func (c *Cluster) Resolver(t testing.TB) *factory.Resolver {
	t.Helper()
	kubeconfig, cacheDir := c.Kubeconfig, t.TempDir()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.CacheDir = &kubeconfig, &cacheDir
	resolver, err := factory.NewResolverFor(flags)
	if err != nil {
		t.Fatal(err)
	}
	return resolver
}

// ServeExporter starts the real exporter with opts against the API server
// of cfg (nil: the cluster's, as its admin) and serves its handler until
// the test ends. It returns the exporter and the handler's URL without
// waiting for it to be ready (see WaitReady).
func (c *Cluster) ServeExporter(t testing.TB, cfg *rest.Config, opts exporter.Options) (*exporter.Exporter, string) {
	t.Helper()
	if cfg == nil {
		cfg = c.Config
	}
	x, err := exporter.New(cfg, c.Resolver(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := x.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := x.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return x, srv.URL
}

// Get fetches url and returns its status code and body.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, req)
}

// Do sends req and returns the status code and body of its response.
func Do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	resp, body := Fetch(t, req)
	return resp.StatusCode, body
}

// Fetch sends req and returns its response, whose body it has read and
// closed, and that body.
func Fetch(t testing.TB, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req) //nolint:gosec // G704: a test asks the servers it started
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// WaitReady waits until the exporter at url answers /readyz with 200; an
// exporter not listening yet (a process just started) is not ready yet.
func WaitReady(t testing.TB, url string) {
	t.Helper()
	Eventually(t, url+"/readyz answers 200", func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Scrape fetches url's /metrics in the text format and parses it; a body
// that does not parse fails the test.
func Scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	_, body := Get(t, url+"/metrics")
	return ParseText(t, body)
}

// ParseText parses an exposition in the text format; one that does not
// parse fails the test.
func ParseText(t testing.TB, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return mfs
}

// SeriesLines returns the series of mfs whose labels keep accepts (nil:
// all) as sorted lines name{labels} value, the labels in alphabetical
// order as the text format writes them and the value as
// strconv.FormatFloat(v, 'g', -1, 64) writes it.
func SeriesLines(mfs map[string]*dto.MetricFamily, keep func(labels map[string]string) bool) []string {
	var lines []string
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			byName := map[string]string{}
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
				byName[l.GetName()] = l.GetValue()
			}
			if keep != nil && !keep(byName) {
				continue
			}
			slices.Sort(labels)
			lines = append(lines, name+"{"+strings.Join(labels, ",")+"} "+FormatValue(SampleValue(m)))
		}
	}
	slices.Sort(lines)
	return lines
}

// SampleValue is the value of a gauge, counter or untyped sample.
func SampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return m.GetGauge().GetValue()
}

// FormatValue writes v as SeriesLines does.
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WaitRunReady waits until the exporter that r runs answers url's /readyz
// with 200, tolerating refused connections while it starts; it fails the
// test with r's stderr if r exits first.
func WaitRunReady(t *testing.T, r *Run, url string) {
	t.Helper()
	Eventually(t, url+"/readyz answers 200", func() bool {
		select {
		case code := <-r.done:
			r.stopped, r.code = true, code
			t.Fatalf("the exporter exited with %d before it was ready\nstderr:\n%s", code, r.ErrOut.String())
		default:
		}
		resp, err := http.Get(url + "/readyz") //nolint:gosec,noctx // G107: the test's own exporter
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

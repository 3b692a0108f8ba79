package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// testExporter is an Exporter serving engine e, without a cluster: no
// informers, so it is ready and the telemetry has no resources.
func testExporter(t *testing.T, e *Engine, log *slog.Logger) *Exporter {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &activeConfig{engine: e}
	for _, rs := range e.resources {
		a.names = append(a.names, rs.name)
	}
	x := &Exporter{log: log, active: a}
	x.tel = newTelemetry(x)
	return x
}

// fetch GETs path from x's handler with the headers given as name, value
// pairs, and returns the response with its body, gunzipped if need be.
func fetch(t *testing.T, x *Exporter, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	h, err := x.Handler()
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestHelpEscaping checks the HELP text of each format: the text format
// escapes a backslash and a newline, OpenMetrics a double quote too, as
// expfmt writes them.
func TestHelpEscaping(t *testing.T) {
	const help = `Says "hi", with a back\slash` + "\nand a newline."
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := &Compiled{Resources: []*CompiledResource{{
		Config:   ResourceConfig{Resource: "pods"},
		Families: []*Family{family(t, env, "quoted_info", TypeInfo, help, map[string]string{"pod": "object.metadata.name"}, "", "", "")},
	}}}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running"))

	for _, tc := range []struct {
		name        string
		openMetrics bool
		want        string
	}{
		{"text", false, `# HELP quoted_info Says "hi", with a back\\slash\nand a newline.
# TYPE quoted_info gauge
quoted_info{pod="web-1"} 1
`},
		{"OpenMetrics", true, `# HELP quoted Says \"hi\", with a back\\slash\nand a newline.
# TYPE quoted info
quoted_info{pod="web-1"} 1
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exposition(e, tc.openMetrics)
			if got != tc.want {
				t.Errorf("exposition:\n%s\nwant:\n%s", got, tc.want)
			}
			// The HELP line is the one expfmt writes for the same family.
			mf := &dto.MetricFamily{Name: proto.String("quoted_info"), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum(),
				Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(1)}}}}
			var ref bytes.Buffer
			if tc.openMetrics {
				_, err = expfmt.MetricFamilyToOpenMetrics(&ref, mf)
			} else {
				_, err = expfmt.MetricFamilyToText(&ref, mf)
			}
			if err != nil {
				t.Fatal(err)
			}
			// "# HELP name text": compare the text.
			helpText := func(s string) string {
				line, _, _ := strings.Cut(s, "\n")
				if f := strings.SplitN(line, " ", 4); len(f) == 4 {
					return f[3]
				}
				return ""
			}
			if got, want := helpText(got), helpText(ref.String()); got != want || want == "" {
				t.Errorf("HELP text %q, expfmt writes %q", got, want)
			}
		})
	}
}

// TestMetricsVary checks that /metrics says its body depends on Accept and
// Accept-Encoding, whether or not this response is compressed, and that a
// gzip response is the same exposition.
func TestMetricsVary(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running", 2))
	x := testExporter(t, e, nil)
	const want = `# HELP pod_info Pod information.
# TYPE pod_info gauge
pod_info{namespace="shop",pod="web-1",cluster="c1",node="n1"} 1
# HELP pod_status_phase The pod's phase.
# TYPE pod_status_phase gauge
pod_status_phase{namespace="shop",pod="web-1",phase="Pending"} 0
pod_status_phase{namespace="shop",pod="web-1",phase="Running"} 1
# HELP pod_restarts_total Container restarts.
# TYPE pod_restarts_total counter
pod_restarts_total{namespace="shop",pod="web-1",container="c0"} 2
# HELP pods_per_node Pods per node and phase.
# TYPE pods_per_node gauge
pods_per_node{node="n1",phase="Running"} 1
# HELP restarts_per_node_max Most restarts of a pod per node.
# TYPE restarts_per_node_max gauge
restarts_per_node_max{node="n1"} 2
# HELP bad_value A value that is a string.
# TYPE bad_value gauge
`
	// Accept-Encoding as clients send it → the Content-Encoding served.
	for accept, encoding := range map[string]string{
		"":                 "",
		"gzip":             "gzip",
		"br, gzip;q=0.5":   "gzip",
		"gzip;q=0":         "",
		"identity":         "",
		"deflate, gzip, *": "gzip",
	} {
		resp, body := fetch(t, x, "/metrics", "Accept-Encoding", accept)
		if got := resp.Header.Get("Content-Encoding"); got != encoding {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", accept, got, encoding)
		}
		if got := slices.Sorted(slices.Values(resp.Header.Values("Vary"))); !slices.Equal(got, []string{"Accept", "Accept-Encoding"}) {
			t.Errorf("Accept-Encoding %q: Vary %q, want Accept and Accept-Encoding", accept, got)
		}
		if !strings.HasPrefix(body, want) {
			t.Errorf("Accept-Encoding %q: body does not start with the families:\n%s", accept, body)
		}
	}
}

// TestPprof: /debug/pprof/ is served only when Options.Pprof asks for it.
func TestPprof(t *testing.T) {
	x := testExporter(t, testEngine(t, EngineOptions{}), nil)
	if resp, _ := fetch(t, x, "/debug/pprof/heap"); resp.StatusCode == http.StatusOK {
		t.Errorf("without Pprof, /debug/pprof/heap answered %d", resp.StatusCode)
	}
	x.opts.Pprof = true
	resp, body := fetch(t, x, "/debug/pprof/heap?debug=1")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("with Pprof, /debug/pprof/heap?debug=1 answered %d:\n%.200s", resp.StatusCode, body)
	}
}

package main

import (
	"bytes"
	"compress/gzip"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/memcg"
)

// exposition is a /metrics body of two pods.
const exposition = `# HELP kube_pod_info [STABLE] Information about pod.
# TYPE kube_pod_info gauge
kube_pod_info{namespace="a",pod="p1",uid="1"} 1
kube_pod_info{namespace="a",pod="p2",uid="2"} 1
# TYPE kube_pod_container_status_restarts_total counter
kube_pod_container_status_restarts_total{container="app",namespace="a",pod="p1",uid="1"} 3
# EOF
`

// metricsServer serves exposition, gzip-compressed when asked as
// kube-state-metrics and the exporter do, and records the request headers.
func metricsServer(t *testing.T, got *http.Header) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			_, _ = gz.Write([]byte(exposition))
			_ = gz.Close()
			return
		}
		_, _ = w.Write([]byte(exposition))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScraperAsPrometheus(t *testing.T) {
	for _, tc := range []struct {
		plain        bool
		wantEncoding string
	}{
		{plain: false, wantEncoding: "gzip"},
		{plain: true, wantEncoding: "identity"},
	} {
		var got http.Header
		srv := metricsServer(t, &got)
		sc := &scraper{base: srv.URL, plain: tc.plain}
		// Twice: the second scrape reuses the buffer and gzip reader of
		// the first.
		for range 2 {
			b, st, err := sc.scrape()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != exposition {
				t.Errorf("plain=%v: body %q, want %q", tc.plain, b, exposition)
			}
			if got.Get("Accept") != prometheusAccept || got.Get("Accept-Encoding") != tc.wantEncoding {
				t.Errorf("plain=%v: sent Accept %q, Accept-Encoding %q; want %q, %q", tc.plain, got.Get("Accept"), got.Get("Accept-Encoding"), prometheusAccept, tc.wantEncoding)
			}
			if st.body != len(exposition) {
				t.Errorf("plain=%v: body size %d, want %d", tc.plain, st.body, len(exposition))
			}
			if tc.plain && (st.wire != st.body || st.encoding != "") {
				t.Errorf("plain: %d bytes sent, %d decompressed, encoding %q; want the same, no encoding", st.wire, st.body, st.encoding)
			}
			if !tc.plain && (st.wire == st.body || st.encoding != "gzip") {
				t.Errorf("gzip: %d bytes sent, %d decompressed, encoding %q; want compressed bytes, gzip", st.wire, st.body, st.encoding)
			}
		}
	}
}

func TestSeriesCounts(t *testing.T) {
	if n := countSeries([]byte(exposition)); n != 3 {
		t.Errorf("countSeries = %d, want 3", n)
	}
	if n := podInfoSeries([]byte(exposition)); n != 2 {
		t.Errorf("podInfoSeries = %d, want 2", n)
	}
}

func TestKubeStateMetricsArgsFromProfile(t *testing.T) {
	target, err := profileTarget([]string{"pods"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(target.families, "kube_pod_info") || !slices.Contains(target.families, "kube_pod_status_phase") {
		t.Fatalf("the profile's pod families %q lack kube_pod_info or kube_pod_status_phase", target.families)
	}
	args := kubeStateMetricsArgs(target, "/k/config", "127.0.0.1:8080", "127.0.0.1:8081")
	want := []string{
		"--kubeconfig=/k/config",
		"--resources=pods",
		"--metric-allowlist=" + strings.Join(target.families, ","),
		"--host=127.0.0.1", "--port=8080",
		"--telemetry-host=127.0.0.1", "--telemetry-port=8081",
		"--enable-gzip-encoding",
	}
	if !slices.Equal(args, want) {
		t.Errorf("args:\n%q\nwant\n%q", args, want)
	}
}

func TestRenderQueriesAgainstProtobufTransfer(t *testing.T) {
	mk := func(name string, wall time.Duration) row {
		return row{name: name, samples: []sample{{wall: wall, rss: 64 << 20}}}
	}
	out := renderQueries([]row{
		mk(protobufFloor, 500*time.Millisecond),
		mk(jsonFloor, 800*time.Millisecond),
		mk(whereCount, time.Second),
		{name: groupCount, samples: []sample{{wall: 2 * time.Second, cpu: time.Second}, {wall: 4 * time.Second, cpu: 2 * time.Second}, {wall: 3 * time.Second, cpu: 4 * time.Second}}},
		{name: groupAggregates, samples: []sample{{wall: 2500 * time.Millisecond, cpu: 1500 * time.Millisecond}, {wall: 4400 * time.Millisecond, cpu: 2200 * time.Millisecond}, {wall: 3900 * time.Millisecond, cpu: 4 * time.Second}}},
		mk(deploymentsPlain, 400*time.Millisecond),
		mk(deploymentsSelected, time.Second),
	})
	for _, want := range []string{
		"| `" + protobufFloor + "` | 1.00× | 0.50 s",
		"| `" + jsonFloor + "` | 1.60× | 0.80 s",
		"| `" + whereCount + "` | 2.00× | 1.00 s",
		"`" + whereCount + "`: 2.00× the protobuf transfer, 1.25× the JSON transfer, peak RSS 64 MiB.",
		// Medians 3.9 s and 3 s; the rounds' ratios 1.25, 1.10 and 1.30.
		"Two aggregates per node: 1.30× the same groups counted (`" + groupCount + "`); the ratio of each round, median 1.25× (1.10×–1.30×). " +
			// CPU medians 2.2 s and 2 s; the rounds' ratios 1.5, 1.1 and 1.
			"CPU time: 1.10× (2.20 s against 2.00 s); the ratio of each round, median 1.10× (1.00×–1.50×).",
		"2.50× the wall time and 1.00× the peak RSS of the same Deployments without it (`" + deploymentsPlain + "`).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// TestRenderWithoutKubeStateMetrics: without -ksm, the kube-state-metrics
// column says it was not measured, and holds no figure.
func TestRenderWithoutKubeStateMetrics(t *testing.T) {
	start := startStats{ready: 700 * time.Millisecond, full: 720 * time.Millisecond, hwm: 140 << 20}
	st := scrapeStat{took: 6 * time.Millisecond, wire: 1 << 20, body: 12 << 20, contentType: "application/openmetrics-text", encoding: "gzip"}
	r := exporterResult{
		exp: side{
			starts:    []startStats{start, start, start},
			rssSynced: 98 << 20,
			gzipped:   []scrapeStat{st}, plain: []scrapeStat{st},
			series: 80000,
			churn:  []sideChurn{{cpu: 0.05, rss: []int64{120 << 20, 131 << 20, 140 << 20}}},
		},
		floor:  []startStats{start, start, start},
		churns: []churnResult{{rate: 100, achieved: 100, seconds: 30}},
	}
	out := r.render(exporterTarget{name: "the kube-state-metrics profile", args: []string{"--profile=kube-state-metrics"}}, "")
	// The exporter's table, before that of the bare informer.
	table, _, _ := strings.Cut(out, "\nThe least a client-go program")
	var ksmColumn []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) == 3 && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| measure") {
			ksmColumn = append(ksmColumn, strings.TrimSuffix(cells[2], " |"))
		}
	}
	if len(ksmColumn) == 0 {
		t.Fatalf("no exporter table in:\n%s", out)
	}
	for _, cell := range ksmColumn {
		if cell != "not measured" && !strings.HasPrefix(cell, "–") {
			t.Errorf("kube-state-metrics cell %q, want %q, in:\n%s", cell, "not measured", out)
		}
	}
	// The headline is the RSS under updates: the first row.
	if !strings.Contains(out, "| **RSS under 100 pod updates/s**: median of samples every second over 30 s (max) | 131 MiB (140 MiB) | not measured |") {
		t.Errorf("the first row is not the RSS under updates:\n%s", out)
	}
	if !bytes.Contains([]byte(out), []byte("make bench KSM=")) {
		t.Errorf("no word of how to measure kube-state-metrics:\n%s", out)
	}
}

func TestCompareSeries(t *testing.T) {
	exp := []byte(`# HELP kube_a A.
# TYPE kube_a gauge
kube_a{pod="p",namespace="n"} 1
# HELP kube_b B.
# TYPE kube_b gauge
kube_b{pod="p"} 2
`)
	ksm := []byte(`# HELP kube_a A.
# TYPE kube_a gauge
kube_a{namespace="n",pod="p"} 1
# HELP kube_b B.
# TYPE kube_b gauge
kube_b{pod="p"} 3
# HELP kube_c C.
# TYPE kube_c gauge
`)
	c, err := compareSeries(exp, ksm, []string{"kube_a", "kube_b", "kube_c"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.summary(), "2 of 3 (1 series); differing: kube_b: 1 series only in the exporter's, 1 only in kube-state-metrics'"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestRestarts reads the restart count of each pod's "app" container from
// expositions whose labels come in any order, and nothing from other
// containers or families.
func TestRestarts(t *testing.T) {
	body := []byte(`kube_pod_container_status_restarts_total{container="app",namespace="a",pod="p1",uid="1"} 3
kube_pod_container_status_restarts_total{namespace="a",pod="p2",uid="2",container="app"} 5
kube_pod_container_status_restarts_total{namespace="a",pod="p2",uid="2",container="sidecar"} 9
kube_pod_container_status_restarts_total{namespace="a",pod="p3",container="apps",uid="3"} 4
kube_pod_container_status_ready{namespace="a",pod="p4",uid="4",container="app"} 1
`)
	got := restarts(body)
	want := map[string]int32{"1": 3, "2": 5}
	if !maps.Equal(got, want) {
		t.Errorf("restarts = %v, want %v", got, want)
	}
}

// TestRenderLimitedStarts: the starts under a memory limit are summed up
// beside the peak, and each is listed with its limit, derived from the
// RSS under updates, and what ended it.
func TestRenderLimitedStarts(t *testing.T) {
	start := startStats{ready: 700 * time.Millisecond, full: 720 * time.Millisecond, hwm: 300 << 20}
	st := scrapeStat{took: 6 * time.Millisecond, wire: 1 << 20, body: 12 << 20}
	const steady = 100 << 20
	limit := int64(limitFactor * steady)
	r := exporterResult{
		exp: side{
			starts:  []startStats{start},
			gzipped: []scrapeStat{st}, plain: []scrapeStat{st},
			churn: []sideChurn{{cpu: 0.05, rss: []int64{90 << 20, steady, 110 << 20}}},
			limited: []limitedStart{
				{limit: limit, ready: 2 * time.Second, full: 2500 * time.Millisecond, served: 10, hwm: 140 << 20,
					cg: memcg.Stats{Limit: limit, Peak: 120 << 20}},
				{limit: limit, served: 0, ended: "signal: killed", stderr: "listening",
					cg: memcg.Stats{Limit: limit, Peak: limit, OOMKills: 1}},
				{limit: limit, ready: 30 * time.Second, full: 31 * time.Second, served: 10, hwm: 150 << 20,
					cg: memcg.Stats{Limit: limit, Peak: limit}},
			},
		},
		churns: []churnResult{{rate: 100, achieved: 100, seconds: 30}},
	}
	out := r.render(exporterTarget{name: "the kube-state-metrics profile"}, "")
	for _, want := range []string{
		"| **started under a memory limit of 1.5× the RSS under 100 pod updates/s**, `GOMEMLIMIT` set to it (starts below) | **2 of 3** starts ready with a full `/metrics` (median 31.00 s); 1 OOM kills; the cgroup's peak 150 MiB of its 150 MiB limit | not measured |",
		"| exporter 1 | 150 MiB (157286400 bytes: 1.5× 100 MiB) | 2.00 s | 2.50 s | 120 MiB (80%) | 0 | 140 MiB | ready, full |",
		"| exporter 2 | 150 MiB (157286400 bytes: 1.5× 100 MiB) | – | – | 150 MiB (100%) | 1 | – | **ended before it was full: signal: killed** |",
		"| exporter 3 | 150 MiB (157286400 bytes: 1.5× 100 MiB) | 30.00 s | 31.00 s | 150 MiB (100%) | 0 | 150 MiB | ready, full, **the cgroup at its limit** |",
		"```text\nlistening\n```",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

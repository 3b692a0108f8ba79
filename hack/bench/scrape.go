package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"time"
)

// prometheusAccept is the Accept header Prometheus 3 sends with a scrape
// by default: scrape_protocols defaults to OpenMetricsText1.0.0,
// OpenMetricsText0.0.1, PrometheusText1.0.0, PrometheusText0.0.4, weighted
// in that order, and metric_name_escaping_scheme to allow-utf-8 (function
// acceptHeader in prometheus/prometheus scrape/scrape.go, the defaults in
// config/config.go). With scrape_native_histograms it asks for protobuf
// first, which neither exporter measured here serves.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6," +
	"application/openmetrics-text;version=0.0.1;q=0.5," +
	"text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4," +
	"text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// scraper reads an exporter's /metrics as Prometheus does: its Accept
// header, gzip asked for (enable_compression defaults to true) unless
// plain, and the body, decompressed, read into a buffer kept from the
// previous scrape, so that a scrape of the same size allocates nothing.
// What scrape returns is valid until the next scrape.
type scraper struct {
	base  string
	plain bool // Accept-Encoding: identity
	// text asks for the text format alone (version 0.0.4), which the
	// comparison of series parses, instead of what Prometheus asks for.
	text bool
	buf  []byte
	gz   *gzip.Reader
}

// scrapeStat is what one scrape measured.
type scrapeStat struct {
	took time.Duration // from the request to the whole body read and decompressed
	// wire is the bytes of the body as sent, body once decompressed.
	wire, body            int
	contentType, encoding string
}

// prometheusHeaders sets the headers of a Prometheus scrape on req.
func prometheusHeaders(req *http.Request, plain bool) {
	req.Header.Set("Accept", prometheusAccept)
	if plain {
		req.Header.Set("Accept-Encoding", "identity")
	} else {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
}

func (s *scraper) scrape() ([]byte, scrapeStat, error) {
	var st scrapeStat
	req, err := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		return nil, st, err
	}
	prometheusHeaders(req, s.plain)
	if s.text {
		req.Header.Set("Accept", "text/plain;version=0.0.4")
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, st, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, st, fmt.Errorf("GET %s/metrics: %s", s.base, resp.Status)
	}
	st.contentType, st.encoding = resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding")
	wire := &countingReader{r: resp.Body}
	var body io.Reader = wire
	if st.encoding == "gzip" {
		if s.gz == nil {
			if s.gz, err = gzip.NewReader(wire); err != nil {
				return nil, st, err
			}
		} else if err := s.gz.Reset(wire); err != nil {
			return nil, st, err
		}
		body = s.gz
	}
	b := s.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, err
		}
	}
	st.took = time.Since(start)
	st.wire, st.body = wire.n, len(b)
	s.buf = b
	return b, st, nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// countSeries returns the number of sample lines of families named kube_*
// in an exposition.
func countSeries(b []byte) int {
	n := bytes.Count(b, []byte("\nkube_"))
	if bytes.HasPrefix(b, []byte("kube_")) {
		n++
	}
	return n
}

// podInfoSeries returns the number of kube_pod_info samples in an
// exposition: one per pod once every pod is there.
func podInfoSeries(b []byte) int { return bytes.Count(b, []byte("\nkube_pod_info{")) }

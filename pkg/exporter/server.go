package exporter

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/kubectl-informer/kubectl-informer/internal/serving"
	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// Handler returns the exporter's HTTP handler: /metrics, /healthz, /readyz,
// /debug/pprof/ when Options.Pprof is set, and a landing page at /.
func (x *Exporter) Handler() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", compressed(http.HandlerFunc(x.serveMetrics)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", x.serveReadyz)
	if x.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "kubectl-informer exporter",
		Description: "Prometheus metrics computed by CEL from Kubernetes informer caches",
		Version:     version.Get().String(),
		Links: []web.LandingLinks{
			{Address: "metrics", Text: "Metrics"},
			{Address: "readyz", Text: "Readiness"},
			{Address: "healthz", Text: "Health"},
		},
	})
	if err != nil {
		return nil, err
	}
	mux.Handle("/", landing)
	return mux, nil
}

// serveReadyz answers 200 when the exporter is ready (see Ready), "ok"
// followed by a line per resource whose requests fail, if any; otherwise
// 503 with why.
//
// A failed write to the client cannot be reported to it: write errors are
// ignored here and in /healthz.
func (x *Exporter) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	failing, err := x.readiness()
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintln(w, err)
		return
	}
	capped := x.capped()
	limited := x.limited()
	x.mu.RLock()
	unavailable := x.unavailable
	x.mu.RUnlock()
	if len(failing) == 0 && len(capped) == 0 && len(unavailable) == 0 && len(limited) == 0 {
		_, _ = fmt.Fprintln(w, "ok")
		return
	}
	if len(failing) > 0 {
		what := "the list and watch requests of 1 resource fail; its series are as last seen:"
		if len(failing) > 1 {
			what = fmt.Sprintf("the list and watch requests of %d resources fail; their series are as last seen:", len(failing))
		}
		_, _ = fmt.Fprintf(w, "ok, but %s\n%s\n", what, strings.Join(failing, "\n"))
	}
	if len(capped) > 0 {
		what := "1 metric is capped by --max-series-per-metric (raise it, or set it to 0 for no cap):"
		if len(capped) > 1 {
			what = fmt.Sprintf("%d metrics are capped by --max-series-per-metric (raise it, or set it to 0 for no cap):", len(capped))
		}
		if len(failing) == 0 {
			_, _ = fmt.Fprint(w, "ok, but ")
		} else {
			_, _ = fmt.Fprint(w, "and ")
		}
		_, _ = fmt.Fprintf(w, "%s\n%s\n", what, strings.Join(capped, "\n"))
	}
	if len(unavailable) > 0 {
		if len(failing)+len(capped) == 0 {
			_, _ = fmt.Fprint(w, "ok, but ")
		} else {
			_, _ = fmt.Fprint(w, "and ")
		}
		_, _ = fmt.Fprintf(w, "the API server does not have these resources of the %s profile, whose families are not served:\n%s\n", x.opts.Profile, strings.Join(unavailable, "\n"))
	}
	if len(limited) > 0 {
		if len(failing)+len(capped)+len(unavailable) == 0 {
			_, _ = fmt.Fprint(w, "ok, but ")
		} else {
			_, _ = fmt.Fprint(w, "and ")
		}
		_, _ = fmt.Fprintf(w, "the lists of these resources were cut at the object limit (%d), and the objects beyond it are not served:\n%s\n", x.opts.ObjectLimit, strings.Join(limited, "\n"))
	}
}

// capped returns a line per family of the active config whose cap keeps
// series from being served now: "kube_pod_info: 100000 of 130000 series
// served".
func (x *Exporter) capped() []string {
	e := x.engine()
	if e == nil {
		return nil
	}
	var out []string
	for _, rs := range e.resources {
		for _, fs := range rs.families {
			if h := fs.health(); h.unserved > 0 {
				out = append(out, fmt.Sprintf("%s: %d of %d series served", fs.f.Name, h.series, h.series+h.unserved))
			}
		}
	}
	return out
}

// gzipLevel is the compression of /metrics: the fastest. An exposition is
// repetitive text that any level compresses to about a seventh; the
// fastest level spends a fifth of the CPU of the standard library's
// default for about 15% more bytes, and the time to compress is most of a
// large scrape's.
const gzipLevel = gzip.BestSpeed

// responseWriters buffer the writes of /metrics.
var responseWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// compressed wraps the handler of /metrics with the negotiation of gzip
// (Accept-Encoding with its q-values; Vary: Accept-Encoding) and pooled
// compressors at gzipLevel.
var compressed = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzipLevel))
	if err != nil {
		panic(err) // a valid level: no error
	}
	return wrap
}()

// serveMetrics writes the configured families, already rendered, and the
// exporter's own metrics, in the text format or OpenMetrics as negotiated;
// the handler of /metrics compresses it (see compressed).
func (x *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	openMetrics := format.FormatType() == expfmt.TypeOpenMetrics
	if !openMetrics {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	mfs, err := x.tel.registry.Gather()
	if err != nil {
		x.log.Warn("gathering the exporter's own metrics", "err", err)
	}
	w.Header().Set("Content-Type", string(format))
	// The body depends on Accept (the format): caches must key on it.
	w.Header().Add("Vary", "Accept")
	// The series are streamed as they are copied (see Engine.WriteFamilies):
	// memory does not grow with the size of the response. Writers are
	// reused.
	bw := responseWriters.Get().(*bufio.Writer)
	defer responseWriters.Put(bw)
	bw.Reset(w)
	defer bw.Reset(nil)
	if e := x.engine(); e != nil {
		_ = e.WriteFamilies(bw, openMetrics)
		writeFamilyStats(bw, openMetrics, e.familyStats())
	}
	enc := expfmt.NewEncoder(bw, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			x.log.Warn("encoding the exporter's own metrics", "err", err)
			break
		}
	}
	if openMetrics {
		_, _ = expfmt.FinalizeOpenMetrics(bw)
	}
	if err := bw.Flush(); err != nil {
		x.log.Debug("writing /metrics", "err", err)
	}
	x.tel.scrape.Observe(time.Since(start).Seconds())
}

// ServeConfig is where and how the exporter listens: the flags of
// github.com/prometheus/exporter-toolkit.
type ServeConfig struct {
	// ListenAddresses are the addresses to listen on (--web.listen-address).
	ListenAddresses []string
	// WebConfigFile configures TLS and basic auth (--web.config.file).
	WebConfigFile string
	// TelemetryAddresses, when set, are the addresses of a second
	// listener, as kube-state-metrics' --telemetry-host and
	// --telemetry-port: it serves the exporter's own metrics on /metrics,
	// and /readyz, /healthz and /livez.
	TelemetryAddresses []string
	// Timeouts are the server's; zero fields take the defaults.
	Timeouts ServerTimeouts
	// NoGzip serves /metrics uncompressed whatever the client accepts, as
	// kube-state-metrics does without --enable-gzip-encoding.
	NoGzip bool
	// AuthFilter requires every request to the metrics endpoints to carry
	// a bearer token that the API server authenticates (TokenReview) and
	// authorizes (SubjectAccessReview) for get on the path requested, as
	// kube-state-metrics' --auth-filter.
	AuthFilter bool
}

// ServerTimeouts are the timeouts of the exporter's HTTP servers, as
// kube-state-metrics' --server-*-timeout flags.
type ServerTimeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// Serve serves Handler until ctx ends.
func (x *Exporter) Serve(ctx context.Context, cfg ServeConfig, logger *slog.Logger) error {
	h, err := x.Handler()
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	systemd := false
	flags := &web.FlagConfig{WebListenAddresses: &cfg.ListenAddresses, WebSystemdSocket: &systemd, WebConfigFile: &cfg.WebConfigFile}
	return serving.Until(ctx, srv, func() error { return web.ListenAndServe(srv, flags, logger) })
}

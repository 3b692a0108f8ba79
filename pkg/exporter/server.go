package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/exporter-toolkit/web"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/internal/delegatedauth"
	"github.com/kubectl-informer/kubectl-informer/internal/serving"
	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// Handler returns the exporter's HTTP handler: /metrics, /healthz, /readyz,
// /livez, /debug/pprof/ when Options.Pprof is set, and a landing page at
// /; as Handlers' main handler for a ServeConfig without a telemetry
// listener, gzip off or auth filter.
func (x *Exporter) Handler() (http.Handler, error) {
	main, _, err := x.Handlers(context.Background(), ServeConfig{})
	return main, err
}

// Handlers returns the handlers of the main listener and, with
// cfg.TelemetryAddresses, of the telemetry listener (nil without), as
// cfg configures them (see ServeConfig). ctx bounds what the auth filter
// runs in the background.
//
// The main handler serves /metrics (the configured families and the
// exporter's own metrics; kube-state-metrics' own are on the telemetry
// listener when there is one), /healthz, /readyz, /livez, /debug/pprof/
// with Options.Pprof, and a landing page. The telemetry handler serves the
// exporter's own metrics on /metrics, the same /healthz, /readyz and
// /livez, and /debug/pprof/ with Options.Pprof. With cfg.AuthFilter, the
// metrics and profiles of both need a caller allowed to get their path;
// the probes and landing pages stay open, as kube-state-metrics leaves
// them.
func (x *Exporter) Handlers(ctx context.Context, cfg ServeConfig) (main, telemetry http.Handler, err error) {
	livez, err := x.livez()
	if err != nil {
		return nil, nil, err
	}
	guard := func(h http.Handler) http.Handler { return h }
	if cfg.AuthFilter {
		if guard, err = x.authFilter(ctx); err != nil {
			return nil, nil, err
		}
	}
	metrics := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.serveMetrics(w, r, len(cfg.TelemetryAddresses) > 0)
	}))
	if !cfg.NoGzip {
		metrics = compressed(metrics)
	}
	if x.ksm != nil {
		metrics = promhttp.InstrumentHandlerDuration(x.ksm.durations, metrics)
	}
	links := []web.LandingLinks{
		{Address: "metrics", Text: "Metrics"},
		{Address: "readyz", Text: "Readiness"},
		{Address: "healthz", Text: "Health"},
		{Address: "livez", Text: "Liveness"},
	}
	main, err = x.mux(guard(metrics), guard, livez, "Prometheus metrics computed by CEL from Kubernetes informer caches", links)
	if err != nil || len(cfg.TelemetryAddresses) == 0 {
		return main, nil, err
	}
	// The telemetry listener compresses whatever NoGzip says, as
	// kube-state-metrics' does.
	telemetryMetrics := http.Handler(compressed(http.HandlerFunc(x.serveTelemetry)))
	if x.ksm != nil {
		telemetryMetrics = x.ksmTelemetryHandler()
	}
	telemetry, err = x.mux(guard(telemetryMetrics), guard, livez, "The exporter's own metrics", links)
	return main, telemetry, err
}

// ksmTelemetryHandler returns the handler of the telemetry listener's
// /metrics in kube-state-metrics' mode: what serveTelemetry writes, served
// as kube-state-metrics serves its telemetry registry, by client_golang's
// promhttp.HandlerFor with its default options. That negotiates the text
// format or protobuf, never OpenMetrics (an OpenMetrics Accept gets the
// text format), compresses with gzip when accepted, and writes the
// families sorted by name. A collector that fails is logged and the
// others' metrics served, where kube-state-metrics answers 500: its
// registry has its own metrics only, this one the plugin's too.
func (x *Exporter) ksmTelemetryHandler() http.Handler {
	stats := prometheus.NewRegistry()
	stats.MustRegister(familyStatsCollector{stats: func() []familyStats {
		if a := x.current(); a != nil {
			return a.engine.familyStats()
		}
		return nil
	}})
	gatherers := prometheus.Gatherers{x.tel.registry, x.ksm.registry, stats}
	return promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{ErrorLog: promLogger{x.log}, ErrorHandling: promhttp.ContinueOnError})
}

// promLogger logs promhttp's errors as warnings.
type promLogger struct{ log *slog.Logger }

func (l promLogger) Println(v ...any) { l.log.Warn(strings.TrimSuffix(fmt.Sprintln(v...), "\n")) }

// mux returns a handler serving metrics on /metrics, the probes, the
// profiles with Options.Pprof (behind guard), livez on /livez and a
// landing page.
func (x *Exporter) mux(metrics http.Handler, guard func(http.Handler) http.Handler, livez http.HandlerFunc, description string, links []web.LandingLinks) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", x.serveReadyz)
	mux.HandleFunc("/livez", livez)
	if x.opts.Pprof {
		mux.Handle("/debug/pprof/", guard(http.HandlerFunc(pprof.Index)))
		mux.Handle("/debug/pprof/cmdline", guard(http.HandlerFunc(pprof.Cmdline)))
		mux.Handle("/debug/pprof/profile", guard(http.HandlerFunc(pprof.Profile)))
		mux.Handle("/debug/pprof/symbol", guard(http.HandlerFunc(pprof.Symbol)))
		mux.Handle("/debug/pprof/trace", guard(http.HandlerFunc(pprof.Trace)))
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "kubectl-informer exporter",
		Description: description,
		Version:     version.Get().String(),
		Links:       links,
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

// serveMetrics writes the configured families, already rendered, in the
// text format or OpenMetrics as negotiated; the handler of /metrics
// compresses it (see compressed). Without a telemetry listener
// (telemetryListener false) the exporter's own metrics follow them: with
// one, they are its alone, as kube-state-metrics' main port serves its
// families only, so that a job scraping both ports counts each of them
// once.
//
// With Options.KubeStateMetrics, the ?resources= and ?exclude_resources=
// parameters choose the families written by their resource (see
// resourceFilter).
func (x *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request, telemetryListener bool) {
	var keep func(string) bool
	if x.ksm != nil {
		keep = resourceFilter(r.URL.Query())
	}
	if telemetryListener {
		x.writeMetrics(w, r, true, false, keep, nil)
		return
	}
	gatherers := prometheus.Gatherers{x.tel.registry}
	if x.ksm != nil {
		gatherers = append(gatherers, x.ksm.registry)
	}
	x.writeMetrics(w, r, true, true, keep, gatherers)
}

// serveTelemetry writes the exporter's own metrics, kube-state-metrics'
// with Options.KubeStateMetrics, and the telemetry of each configured
// metric: what the telemetry listener serves on /metrics.
func (x *Exporter) serveTelemetry(w http.ResponseWriter, r *http.Request) {
	gatherers := prometheus.Gatherers{x.tel.registry}
	if x.ksm != nil {
		gatherers = append(gatherers, x.ksm.registry)
	}
	x.writeMetrics(w, r, false, true, nil, gatherers)
}

// writeMetrics writes, in the text format or OpenMetrics as negotiated,
// the configured families when families is set (those of the resources
// keep accepts, nil: all; in kube-state-metrics' mode as it writes them,
// see writeStyle), the telemetry of each configured metric when
// stats is set, and what gatherers gather.
func (x *Exporter) writeMetrics(w http.ResponseWriter, r *http.Request, families, stats bool, keep func(resource string) bool, gatherers prometheus.Gatherers) {
	start := time.Now()
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	openMetrics := format.FormatType() == expfmt.TypeOpenMetrics
	if !openMetrics {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	mfs, err := gatherers.Gather()
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
	if a := x.current(); a != nil {
		if families {
			a.engine.writeFamiliesOf(bw, writeStyle{openMetrics: openMetrics, ksm: x.ksm != nil}, a.keeping(keep))
		}
		if stats {
			writeFamilyStats(bw, openMetrics, a.engine.familyStats())
		}
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
	if families {
		x.tel.scrape.Observe(time.Since(start).Seconds())
	}
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

// DefaultReadHeaderTimeout is the default of ServerTimeouts.ReadHeader:
// the time a request's headers must arrive within. The other timeouts are
// off by default.
const DefaultReadHeaderTimeout = 10 * time.Second

// server returns an http.Server of h with the timeouts of t.
func (t ServerTimeouts) server(h http.Handler) *http.Server {
	readHeader := t.ReadHeader
	if readHeader <= 0 {
		readHeader = DefaultReadHeaderTimeout
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle}
}

// servers returns the main server and, with cfg.TelemetryAddresses, the
// telemetry one (nil without), of Handlers, with cfg's timeouts.
func (x *Exporter) servers(ctx context.Context, cfg ServeConfig) (main, telemetry *http.Server, err error) {
	mh, th, err := x.Handlers(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	main = cfg.Timeouts.server(mh)
	if th != nil {
		telemetry = cfg.Timeouts.server(th)
	}
	return main, telemetry, nil
}

// Serve serves Handlers on cfg's listeners, each with the web config
// (TLS, basic auth) of cfg.WebConfigFile, until ctx ends or one of them
// fails, which stops the other. logger receives the listeners' logs; nil:
// Options.Logger.
func (x *Exporter) Serve(ctx context.Context, cfg ServeConfig, logger *slog.Logger) error {
	if logger == nil {
		logger = x.log
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	main, telemetry, err := x.servers(ctx, cfg)
	if err != nil {
		return err
	}
	listen := func(srv *http.Server, addresses []string) error {
		systemd := false
		flags := &web.FlagConfig{WebListenAddresses: &addresses, WebSystemdSocket: &systemd, WebConfigFile: &cfg.WebConfigFile}
		err := serving.Until(ctx, srv, func() error { return web.ListenAndServe(srv, flags, logger) })
		cancel()
		return err
	}
	if telemetry == nil {
		return listen(main, cfg.ListenAddresses)
	}
	errc := make(chan error, 1)
	go func() { errc <- listen(telemetry, cfg.TelemetryAddresses) }()
	err = listen(main, cfg.ListenAddresses)
	if terr := <-errc; err == nil {
		err = terr
	}
	return err
}

// AuthFilterCacheTTLs are how long the auth filter reuses a TokenReview's
// answer, a SubjectAccessReview that allowed and one that did not: those
// of kube-state-metrics' --auth-filter.
var AuthFilterCacheTTLs = struct{ Token, Allow, Deny time.Duration }{time.Minute, 5 * time.Minute, 30 * time.Second}

// authFilter returns what ServeConfig.AuthFilter wraps the metrics and
// profiles in: bearer tokens only, reviewed by the API server the
// exporter reaches, with the answers cached for AuthFilterCacheTTLs.
func (x *Exporter) authFilter(ctx context.Context) (func(http.Handler) http.Handler, error) {
	if x.restConfig == nil {
		return nil, errors.New("the auth filter needs an API server to review tokens")
	}
	client, err := kubernetes.NewForConfig(x.restConfig)
	if err != nil {
		return nil, fmt.Errorf("the auth filter's client: %w", err)
	}
	an, az, err := delegatedauth.New(ctx, client, delegatedauth.Options{
		NoClientCertificates: true,
		TokenCacheTTL:        AuthFilterCacheTTLs.Token, AllowCacheTTL: AuthFilterCacheTTLs.Allow, DenyCacheTTL: AuthFilterCacheTTLs.Deny,
	}, x.log)
	if err != nil {
		return nil, fmt.Errorf("the auth filter: %w", err)
	}
	return func(h http.Handler) http.Handler { return delegatedauth.Filter(an, az, h) }, nil
}

// livez returns the handler of /livez, which answers as
// kube-state-metrics' does: 200 when the API server's own /livez does,
// else 503. The request to the API server ends with the probe's.
func (x *Exporter) livez() (http.HandlerFunc, error) {
	var client rest.Interface
	if x.restConfig != nil {
		cs, err := kubernetes.NewForConfig(x.restConfig)
		if err != nil {
			return nil, fmt.Errorf("the client of /livez: %w", err)
		}
		client = cs.CoreV1().RESTClient()
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		err := errors.New("no API server to ask")
		if client != nil {
			err = client.Get().AbsPath("/livez").Do(r.Context()).Error()
		}
		if err != nil {
			x.log.Warn("the API server's /livez failed", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "the API server's /livez failed: %v\n", err)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	}, nil
}

package queryserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/kubectl-informer/kubectl-informer/internal/delegatedauth"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Defaults of [Options].
const (
	DefaultMaxInflightPerUser = 4
	DefaultMaxCostPerRequest  = 100 * indexers.DefaultCostLimit
	DefaultMaxRequestDuration = time.Minute
	// DefaultWriteTimeout is how long one write of an answer may wait for
	// its client to read.
	DefaultWriteTimeout = 30 * time.Second
	// maxBodyBytes bounds the body of a request: a query is a few
	// expressions.
	maxBodyBytes = 1 << 20
)

// WatchDeniedSummary says what a watch RBAC denies while allowing the list
// means for the caches: the log says it, then names each (/readyz, which
// anyone may read, says how many).
const WatchDeniedSummary = "RBAC denies the watch of these resources while allowing their list: their caches follow the cluster only by listing again; grant the watch verb"

// Answerer answers a query from warm caches; *Fleet is one.
type Answerer interface {
	Answer(a Asked, out, errOut io.Writer) error
	Synced() bool
}

// Options configures a [Server].
type Options struct {
	// Answerer answers the queries.
	Answerer Answerer
	// Authenticator identifies the caller of each request; Authorizer
	// decides what it may list (see NewDelegated).
	Authenticator authenticator.Request
	Authorizer    authorizer.Authorizer
	// MaxInflightPerUser bounds the queries one user runs at a time; the
	// next get 429. Default DefaultMaxInflightPerUser.
	MaxInflightPerUser int
	// MaxCostPerRequest bounds the CEL cost of one query, in Kubernetes'
	// cost units, over every object it evaluates; a query that exceeds it
	// gets 429. Default DefaultMaxCostPerRequest.
	MaxCostPerRequest uint64
	// MaxRequestDuration bounds the evaluation of one query. Default
	// DefaultMaxRequestDuration.
	MaxRequestDuration time.Duration
	// Memory, when not nil, bounds the process's memory and is told of
	// each query being answered (see MemoryBound.Answering). Without one,
	// the memory a large answer took is returned to the operating system
	// once it is written (debug.FreeOSMemory).
	Memory *MemoryBound
	// WriteTimeout bounds each write of an answer: a client that reads
	// nothing of it for that long has its request ended, and the slot it
	// held freed. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Registry holds the server's own metrics (authorization decisions,
	// the resource names cached, and what the caller registers there,
	// such as a ReviewCounter's), served on /metrics to callers the
	// Authorizer allows get on the non-resource URL /metrics, as the API
	// server serves its own. Default: a new registry.
	Registry *prometheus.Registry
	// Logger logs one line per request: who, what, the outcome, never an
	// object; what the caller wrote is shortened to 256 bytes. Default:
	// discard.
	Logger *slog.Logger
}

// Server serves queries over HTTP; see the package documentation. Serve it
// over TLS (see ServingTLS).
type Server struct {
	o Options
	// mu guards inflight.
	mu sync.Mutex
	// inflight counts the queries running per user.
	inflight map[string]int
	// releasing is set while releaseMemory runs.
	releasing atomic.Bool
}

// New returns a Server. Options.Answerer, Authenticator and Authorizer
// are required.
func New(o Options) (*Server, error) {
	if o.Answerer == nil || o.Authenticator == nil || o.Authorizer == nil {
		return nil, errors.New("queryserver: an Answerer, an Authenticator and an Authorizer are required")
	}
	if o.MaxInflightPerUser <= 0 {
		o.MaxInflightPerUser = DefaultMaxInflightPerUser
	}
	if o.MaxCostPerRequest == 0 {
		o.MaxCostPerRequest = DefaultMaxCostPerRequest
	}
	if o.MaxRequestDuration <= 0 {
		o.MaxRequestDuration = DefaultMaxRequestDuration
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	decisions := prometheus.NewCounter(prometheus.CounterOpts{
		Name: decisionsMetric,
		Help: "Authorization decisions the server asked for (SubjectAccessReviews, sent or answered from the cache).",
	})
	cs := []prometheus.Collector{decisions}
	if n, ok := o.Answerer.(interface{ namesCached() int }); ok {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: namesMetric,
			Help: "Resource type names kept resolved, over the clusters served; bounded.",
		}, func() float64 { return float64(n.namesCached()) }))
	}
	for _, c := range cs {
		if err := o.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("queryserver: %w", err)
		}
	}
	o.Authorizer = countedAuthorizer{Authorizer: o.Authorizer, decisions: decisions}
	return &Server{o: o, inflight: map[string]int{}}, nil
}

// Handler returns the server's handler: POST /v1/query, GET /metrics
// (Options.Registry, for callers allowed to get it), and /healthz and /readyz, which need no
// authentication and say only "ok" or what is not ready.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(QueryPath, s.serveQuery)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !s.o.Answerer.Synced() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "the caches have not synced\n")
			return
		}
		if d, ok := s.o.Answerer.(interface{ WatchDenied() []string }); ok {
			// Anyone may ask: the count only; the log names each,
			// with the API server's message.
			switch n := len(d.WatchDenied()); n {
			case 0:
			case 1:
				_, _ = io.WriteString(w, "ok, but RBAC denies the watch of 1 served resource while allowing its list: its cache follows the cluster only by listing again; the server's log names it\n")
				return
			default:
				_, _ = fmt.Fprintf(w, "ok, but RBAC denies the watch of %d served resources while allowing their list: their caches follow the cluster only by listing again; the server's log names them\n", n)
				return
			}
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc(MetricsPath, s.serveMetrics)
	return mux
}

func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	log := s.o.Logger.With("remote", r.RemoteAddr)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "use POST "+QueryPath)
		return
	}
	resp, ok, err := s.o.Authenticator.AuthenticateRequest(r)
	if err != nil || !ok {
		msg := delegatedauth.Unauthorized
		if err != nil {
			log.Info("authentication failed", "error", err)
		}
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, msg)
		return
	}
	u := resp.User
	log = log.With("user", shorten(u.GetName(), logFieldLength))
	if !s.acquire(u.GetName()) {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			fmt.Sprintf("user %q already runs %d queries on this server, its limit: retry when one has ended", u.GetName(), s.o.MaxInflightPerUser))
		log.Info("query refused", "code", http.StatusTooManyRequests, "reason", "inflight")
		return
	}
	defer s.release(u.GetName())
	if s.o.Memory != nil {
		defer s.o.Memory.Answering()()
	}
	if err := checkImpersonation(r.Header); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		log.Info("query refused", "code", http.StatusBadRequest, "reason", "impersonation", "error", shorten(err.Error(), logFieldLength))
		return
	}
	// --as and --as-group: the query is answered as the impersonated user,
	// once the caller may impersonate it, as the API server decides.
	// Limits stay the caller's.
	if acting, err := impersonate(r.Context(), s.o.Authorizer, u, r.Header); err != nil {
		var forbidden *ImpersonationForbiddenError
		code, reason := http.StatusBadRequest, metav1.StatusReasonBadRequest
		switch {
		case errors.As(err, &forbidden):
			code, reason = http.StatusForbidden, metav1.StatusReasonForbidden
		case !errors.Is(err, errImpersonationWithoutUser):
			code, reason = http.StatusInternalServerError, metav1.StatusReasonInternalError
		}
		writeStatus(w, code, reason, err.Error())
		log.Info("query refused", "code", code, "reason", "impersonation", "error", shorten(firstLine(err.Error()), logFieldLength))
		return
	} else if acting != u {
		log = log.With("as", shorten(acting.GetName(), logFieldLength))
		u = acting
	}
	if !s.o.Answerer.Synced() {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "the server's caches have not synced yet: retry shortly")
		return
	}
	q, err := DecodeQuery(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return
	}
	if err := checkBounds(&q); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		log.Info("query refused", "code", http.StatusBadRequest, "reason", "bounds", "error", shorten(err.Error(), logFieldLength))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.MaxRequestDuration)
	defer cancel()
	budget := indexers.NewBudget(ctx, s.o.MaxCostPerRequest)
	asked := Asked{
		Request: q.Request(), Clusters: q.Clusters, AllClusters: q.AllClusters, Budget: budget,
		May: func(ctx context.Context, res factory.Resource, namespace string) (bool, error) {
			return s.may(ctx, u, res, namespace)
		},
		MayReadAll: func(ctx context.Context) (bool, error) { return s.mayReadAll(ctx, u) },
	}
	out := &lazyWriter{w: w, contentType: contentType(q.Output), rc: http.NewResponseController(w), timeout: s.o.WriteTimeout}
	var errOut bytes.Buffer
	err = s.o.Answerer.Answer(asked, out, &errOut)
	code := http.StatusOK
	var partial *plan.PartialError
	if !out.started {
		if err != nil && !errors.As(err, &partial) {
			code = s.refuse(w, u, err)
		} else {
			out.start()
		}
	}
	if s.o.Memory == nil && out.written >= largeAnswer {
		defer s.releaseMemory()
	}
	if out.started {
		_ = out.flush()
		w.Header().Set(StderrTrailer, base64.StdEncoding.EncodeToString(errOut.Bytes()))
		switch {
		case errors.As(err, &partial):
			w.Header().Set(PartialTrailer, encodePartial(partial))
		case err != nil:
			w.Header().Set(ErrorTrailer, base64.StdEncoding.EncodeToString([]byte(err.Error())))
		}
	}
	attrs := []any{"resources", shorten(strings.Join(q.Resources, ","), logFieldLength), "namespace", shorten(q.Namespace, logFieldLength), "code", code,
		"cost", budget.Used(), "duration", time.Since(start).Round(time.Microsecond)}
	if err != nil {
		attrs = append(attrs, "error", shorten(firstLine(err.Error()), logFieldLength))
	}
	log.Info("query", attrs...)
}

// refuse writes the status of a query that failed before its answer
// started and returns its code.
func (s *Server) refuse(w http.ResponseWriter, u user.Info, err error) int {
	var (
		usage            *query.UsageError
		forbidden        *ForbiddenError
		clusterForbidden *ClusterForbiddenError
		unserved         *UnservedError
	)
	switch {
	case errors.Is(err, indexers.ErrBudgetExceeded):
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			fmt.Sprintf("%s: narrow the query (an index, a namespace, a cheaper predicate) or ask for a higher cost limit per request", err))
		return http.StatusTooManyRequests
	case errors.Is(err, indexers.ErrInterrupted):
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonTimeout,
			fmt.Sprintf("the query did not finish within the server's longest request duration (%s): narrow it", s.o.MaxRequestDuration))
		return http.StatusServiceUnavailable
	case errors.As(err, &forbidden):
		forbidden.User = u.GetName()
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, forbidden.Error())
		return http.StatusForbidden
	case errors.As(err, &clusterForbidden):
		clusterForbidden.User = u.GetName()
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, clusterForbidden.Error())
		return http.StatusForbidden
	case errors.As(err, &unserved):
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, unserved.Error())
		return http.StatusServiceUnavailable
	case errors.As(err, &usage):
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return http.StatusBadRequest
	default:
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return http.StatusInternalServerError
	}
}

// may asks the authorizer whether u may list res in namespace ("" for the
// cluster scope), as the API server would for a list request.
func (s *Server) may(ctx context.Context, u user.Info, res factory.Resource, namespace string) (bool, error) {
	decision, _, err := s.o.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "list", Namespace: namespace,
		APIGroup: res.GVR.Group, APIVersion: res.GVR.Version, Resource: res.GVR.Resource,
		ResourceRequest: true,
	})
	if err != nil && decision != authorizer.DecisionAllow {
		return false, fmt.Errorf("asking the API server whether %q may list %s: %w", u.GetName(), res, err)
	}
	return decision == authorizer.DecisionAllow, nil
}

// mayReadAll asks the authorizer whether u may do everything: every verb
// on every resource of every group, at the cluster scope, as
// cluster-admin may. An authorizer allows it only by rules that give
// every verb on every resource.
func (s *Server) mayReadAll(ctx context.Context, u user.Info) (bool, error) {
	decision, _, err := s.o.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "*", APIGroup: "*", APIVersion: "*", Resource: "*", ResourceRequest: true,
	})
	if err != nil && decision != authorizer.DecisionAllow {
		return false, fmt.Errorf("asking the API server whether %q may do everything: %w", u.GetName(), err)
	}
	return decision == authorizer.DecisionAllow, nil
}

// largeAnswer is the size of an answer after which the memory it took
// (the objects converted for printing, the printed text) is returned to the
// operating system, so that the server's RSS reflects its caches again.
const largeAnswer = 16 << 20

// releaseMemory returns freed memory to the operating system, in the
// background and once at a time: it costs a garbage collection.
func (s *Server) releaseMemory() {
	if !s.releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.releasing.Store(false)
		debug.FreeOSMemory()
	}()
}

func (s *Server) acquire(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[name] >= s.o.MaxInflightPerUser {
		return false
	}
	s.inflight[name]++
	return true
}

func (s *Server) release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[name]--; s.inflight[name] <= 0 {
		delete(s.inflight, name)
	}
}

// writeStatus writes a metav1.Status, as the API server does for a failed
// request.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code), //nolint:gosec // G115: an HTTP status code
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

func contentType(output string) string {
	switch output {
	case "json":
		return "application/json"
	case "yaml":
		return "application/yaml"
	}
	return "text/plain; charset=utf-8"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lazyWriter starts a 200 answer, with its trailers declared, at the first
// write, so that a query that fails before printing can still get a status
// of its own. Writes are buffered; each write to the client must be done
// within timeout (through rc), else it fails, and so do those after it.
type lazyWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
	buf         *bufio.Writer
	written     int
	rc          *http.ResponseController
	timeout     time.Duration
}

func (l *lazyWriter) start() {
	h := l.w.Header()
	h.Set("Content-Type", l.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Trailer", StderrTrailer+", "+ErrorTrailer+", "+PartialTrailer)
	l.deadline()
	l.w.WriteHeader(http.StatusOK)
	l.buf = bufio.NewWriterSize(writerFunc(func(p []byte) (int, error) {
		l.deadline()
		return l.w.Write(p)
	}), 32<<10)
	l.started = true
}

// deadline gives the next write to the client timeout from now. The last
// one set also bounds what the server writes once the handler returns.
func (l *lazyWriter) deadline() {
	if l.rc != nil && l.timeout > 0 {
		_ = l.rc.SetWriteDeadline(time.Now().Add(l.timeout))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.start()
	}
	l.written += len(p)
	return l.buf.Write(p)
}

func (l *lazyWriter) flush() error {
	if l.buf == nil {
		return nil
	}
	return l.buf.Flush()
}

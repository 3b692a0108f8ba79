package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/internal/serving"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
)

// ServeOptions runs a query server.
type ServeOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	scopeFlags
	fleetFlags
	// HomeContext names, among several contexts, the home cluster: the
	// one that authenticates and authorizes callers.
	HomeContext        string
	Indexes            []string
	ConfigFile         string
	SyncTimeout        time.Duration
	ListenAddress      string
	TLSCertFile        string
	TLSKeyFile         string
	CertDir            string
	TLSSANs            []string
	ClientCAFile       string
	Anonymous          bool
	MaxInflightPerUser int
	MaxCostPerRequest  uint64
	CostLimit          uint64
	MaxRequestDuration time.Duration
	MemoryHeadroom     string
	AnswerCache        string
	AuthnCacheTTL      time.Duration
	AuthzCacheTTL      time.Duration
	AuthzDenyCacheTTL  time.Duration
	AuthorizationQPS   float32
	ReadHeaderTimeout  time.Duration
	ReadTimeout        time.Duration
	WriteTimeout       time.Duration
	IdleTimeout        time.Duration
	Verbosity          int
	LogFormat          string

	// Set by Complete.
	resources []string
	namespace string
	// memoryHeadroom is MemoryHeadroom in bytes.
	memoryHeadroom uint64
	// answerCache is AnswerCache in bytes.
	answerCache int64
	// home is the home cluster's context among several (o.contexts).
	home    string
	config  *plan.Config
	request plan.Request
	// ready, when not nil, is called with the address served once the
	// caches have synced (for tests).
	ready func(addr string)
}

// NewServeCommand returns the "serve" verb.
func NewServeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ServeOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "serve RESOURCE[,RESOURCE...] [flags]",
		Short: "Answer queries of many users from one warm cache, over HTTPS",
		Long: `serve lists and watches the named resources into informer caches, with the
indexes of --index and --config, and answers queries sent with
"kubectl informer query ... --query-server URL" from them, for as long as it runs:
each query costs the API server nothing, however many users ask.

Callers are authenticated and authorized by the API server, as it would
authenticate and authorize them: a bearer token is validated with a
TokenReview, a client certificate against the cluster's client CA, and a
query reads only what its caller may list, asked with SubjectAccessReviews
(list on each resource it reads, at the cluster scope or, failing that, in each
namespace; a query across namespaces by a caller who may list only some gets
the objects of those). A query sent with --as or --as-group is answered as
the user impersonated, once the caller may impersonate it (SubjectAccessReviews
on impersonate, as the API server asks them), else refused with 403. Answers
are cached for --authentication-cache-ttl and --authorization-cache-ttl
(--authorization-deny-cache-ttl when denied); reviews are sent unthrottled,
or at --authorization-qps. Requests without credentials get 401 unless
--anonymous-auth is set. The server's service account needs list and watch on
the served resources, create on tokenreviews and subjectaccessreviews, and get,
list and watch on the ConfigMap kube-system/extension-apiserver-authentication
(the client CA, followed).

The server speaks HTTPS only: with --tls-cert-file and --tls-private-key-file,
or a self-signed certificate generated in --cert-dir, which clients trust with
--server-ca. Each user runs at most --max-inflight-per-user queries at a time,
each evaluating at most --max-cost-per-request CEL cost units; beyond, 429.
Before a query is authorized, its resource type names are held to 253
characters and 64 types (else 400), and only names that resolve are cached.
Connections are closed after --idle-timeout idle, and a client that stops
reading an answer for --write-timeout has its request ended.
The server reads no files for its callers: -o go-template-file, templatefile,
jsonpath-file and custom-columns-file are refused (query --query-server reads such
a file itself and sends its text), and printing a template stops once
--max-request-duration is spent.
/healthz and /readyz (200 once the caches have synced) need no credentials;
/metrics (the server's own: reviews, names cached, the answer cache) needs
get on the non-resource URL /metrics.

With several contexts (--context a,b or --all-contexts) one server holds the
caches of several clusters, filled in parallel, and answers queries over any
of them ("query --query-server URL --server-clusters a,b" or --server-all-clusters),
merged with a CLUSTER column as a local query over several contexts is. The home
cluster (--home-context; by default the first context given, or the current
context with --all-contexts) authenticates every caller and authorizes
the queries of its own objects as above; the objects of the other clusters are
served, read-only, only to callers whom the home cluster allows every verb on
every resource (cluster-admin), and read with the server's own credentials
there. A query naming a cluster the caller may not read, or one the server
could not fill when it started (logged; the others are served), gets the
others' answer, a warning naming it, and exit code 3.

` + exitCodesHelp,
		Example: `  # Serve pods and nodes, with an index, on :8443 with a self-signed certificate
  kubectl informer serve pods,nodes -A --index pods:byNode=object.spec.nodeName --cert-dir /tmp/informer-certs

  # Then ask it, as any user of the cluster
  kubectl informer query pods -A --by byNode=node-001 --query-server https://localhost:8443 --server-ca /tmp/informer-certs/serving.crt

  # Serve the pods of two clusters; east authenticates and authorizes callers
  kubectl informer serve pods -A --context east,west --cert-dir /tmp/informer-certs

  # Then ask it about both, as a cluster-admin of east
  kubectl informer query pods -A --query-server https://localhost:8443 --server-ca /tmp/informer-certs/serving.crt --server-all-clusters --count`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.addScopeFlags(f)
	o.addFleetFlags(f, o.ConfigFlags)
	f.Lookup("context").Usage = "the kubeconfig context to use; several, comma-separated or repeated, serve their clusters from one server (see --home-context)"
	f.Lookup("all-contexts").Usage = "serve the clusters of every context of the kubeconfig (see --context-selector and --home-context)"
	f.StringVar(&o.HomeContext, "home-context", "", "with several contexts: the one whose cluster authenticates and authorizes callers (default: the first of --context; with --all-contexts, the current context)")
	f.StringArrayVar(&o.Indexes, "index", nil, "register an index NAME=CEL on every served resource, or RESOURCE:NAME=CEL on one (repeatable)")
	f.StringVar(&o.ConfigFile, "config", "", "config file with named indexes per resource (default: "+configDefaultHelp()+" when present)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 5*time.Minute, "give up when the caches have not synced within this time")
	f.StringVar(&o.ListenAddress, "listen-address", ":8443", "address to serve HTTPS on")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate (PEM), read again when it changes")
	f.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "the serving certificate's private key (PEM)")
	f.StringVar(&o.CertDir, "cert-dir", "", "without --tls-cert-file: where the self-signed certificate is kept ("+queryserver.SelfSignedCertFile+", "+queryserver.SelfSignedKeyFile+"); default: a new temporary directory")
	f.StringSliceVar(&o.TLSSANs, "tls-san", nil, "names and IP addresses the self-signed certificate is valid for, besides localhost (repeatable)")
	f.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle to verify client certificates (default: the cluster's, from kube-system/extension-apiserver-authentication)")
	f.BoolVar(&o.Anonymous, "anonymous-auth", false, "accept requests without credentials as system:anonymous (then authorized as such)")
	f.IntVar(&o.MaxInflightPerUser, "max-inflight-per-user", queryserver.DefaultMaxInflightPerUser, "queries one user may run at a time; more get 429")
	addCostLimitFlag(f, &o.CostLimit)
	f.Uint64Var(&o.MaxCostPerRequest, "max-cost-per-request", queryserver.DefaultMaxCostPerRequest, "CEL cost units one query may spend over all the objects it evaluates; more get 429")
	f.DurationVar(&o.MaxRequestDuration, "max-request-duration", queryserver.DefaultMaxRequestDuration, "time one query may evaluate")
	f.StringVar(&o.MemoryHeadroom, "memory-headroom", "100Mi", "once the caches have synced, hold the process's memory to this much above what they need while answering (a quarter of it otherwise; a quantity: 100Mi, 1Gi), so that answers being written cannot take more; 0: no bound (GOMEMLIMIT in the environment also replaces it)")
	f.StringVar(&o.AnswerCache, "answer-cache", "", "keep the -o json text of the objects answered, up to this size (a quantity; default 512Mi, or a quarter of the container's memory limit when that is lower), each until the object changes, so that answering it again writes that text rather than encoding the object again; 0: keep none")
	f.DurationVar(&o.AuthnCacheTTL, "authentication-cache-ttl", 10*time.Second, "how long a TokenReview's answer is reused")
	f.DurationVar(&o.AuthzCacheTTL, "authorization-cache-ttl", queryserver.DefaultAllowCacheTTL, "how long a SubjectAccessReview that allowed is reused (the last 8192 decisions are kept)")
	f.DurationVar(&o.AuthzDenyCacheTTL, "authorization-deny-cache-ttl", 10*time.Second, "how long a SubjectAccessReview that did not allow is reused")
	f.Float32Var(&o.AuthorizationQPS, "authorization-qps", 0, "TokenReviews and SubjectAccessReviews sent to the API server per second at most; 0: no limit (a query across namespaces asks one SubjectAccessReview per namespace, 32 at a time)")
	f.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "time a client has to complete the TLS handshake and send a request's headers")
	f.DurationVar(&o.ReadTimeout, "read-timeout", 30*time.Second, "time a client has to send a whole request, its body included")
	f.DurationVar(&o.WriteTimeout, "write-timeout", queryserver.DefaultWriteTimeout, "time a client may take to read each part of an answer; a client that stops reading for longer has its request ended, and its slot (--max-inflight-per-user) freed")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", 90*time.Second, "time a kept-alive connection may stay idle before the server closes it")
	f.IntVarP(&o.Verbosity, "v", "v", 0, "log verbosity: 0 info, 1 and more debug")
	f.StringVar(&o.LogFormat, "log.format", "logfmt", "log format: logfmt or json")
	registerServeCompletions(cmd, o)
	return cmd
}

// Complete reads the config file, the contexts and the home cluster
// among them, and resolves the namespace.
func (o *ServeOptions) Complete(_ *cobra.Command, args []string) error {
	o.resources = args
	cfg, err := loadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	o.config = cfg
	if err := o.completeContexts(o.ConfigFlags); err != nil {
		return err
	}
	if err := o.completeHome(); err != nil {
		return err
	}
	o.namespace, err = namespaceOf(o.ConfigFlags, o.AllNamespaces)
	return err
}

// completeHome chooses the home cluster among several contexts: that of
// --home-context, else the first of --context, else (--all-contexts) the
// kubeconfig's current context.
func (o *ServeOptions) completeHome() error {
	if len(o.contexts) == 0 {
		if o.HomeContext != "" {
			return &UsageError{Err: errors.New("--home-context chooses among several contexts: give them with --context a,b or --all-contexts")}
		}
		return nil
	}
	o.home = o.HomeContext
	switch {
	case o.home != "":
	case o.AllContexts:
		raw, err := rawKubeconfig(o.ConfigFlags)
		if err != nil {
			return err
		}
		o.home = raw.CurrentContext
		if !slices.Contains(o.contexts, o.home) {
			return &UsageError{Err: fmt.Errorf("the current context %q is not among the contexts selected: name the home cluster with --home-context", o.home)}
		}
	default:
		o.home = o.contexts[0]
	}
	if !slices.Contains(o.contexts, o.home) {
		return &UsageError{Err: fmt.Errorf("--home-context %q is not among the contexts served (%s)", o.home, strings.Join(o.contexts, ", "))}
	}
	return nil
}

// Validate checks the flags and compiles the indexes, before any contact
// with the cluster.
func (o *ServeOptions) Validate() error {
	errs := scopeErrors(o.ConfigFlags, o.AllNamespaces, o.SyncTimeout)
	errs = append(errs, o.inputErrors(o.resources)...)
	indexes, flagIndexes, more := parseIndexFlags(o.Indexes)
	errs = append(errs, more...)
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if o.TLSCertFile != "" && (o.CertDir != "" || len(o.TLSSANs) > 0) {
		errs = append(errs, errors.New("--cert-dir and --tls-san are for the self-signed certificate: not with --tls-cert-file"))
	}
	if o.MaxInflightPerUser < 1 {
		errs = append(errs, fmt.Errorf("--max-inflight-per-user must be positive, got %d", o.MaxInflightPerUser))
	}
	if o.MaxCostPerRequest < 1 {
		errs = append(errs, errors.New("--max-cost-per-request must be positive"))
	}
	if o.MaxRequestDuration <= 0 {
		errs = append(errs, fmt.Errorf("--max-request-duration must be positive, got %s", o.MaxRequestDuration))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--read-header-timeout", o.ReadHeaderTimeout}, {"--read-timeout", o.ReadTimeout},
		{"--write-timeout", o.WriteTimeout}, {"--idle-timeout", o.IdleTimeout},
		{"--authentication-cache-ttl", o.AuthnCacheTTL}, {"--authorization-cache-ttl", o.AuthzCacheTTL},
		{"--authorization-deny-cache-ttl", o.AuthzDenyCacheTTL},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.flag, d.v))
		}
	}
	if o.AuthorizationQPS < 0 {
		errs = append(errs, fmt.Errorf("--authorization-qps must not be negative, got %g: 0 sends reviews without a limit", o.AuthorizationQPS))
	}
	if q, err := resource.ParseQuantity(o.MemoryHeadroom); err != nil || q.Sign() < 0 {
		errs = append(errs, fmt.Errorf("--memory-headroom %q: want a size such as 100Mi or 1Gi, or 0", o.MemoryHeadroom))
	} else {
		o.memoryHeadroom = uint64(q.Value()) //nolint:gosec // G115: not negative
	}
	if o.AnswerCache == "" {
		o.answerCache = queryserver.DefaultAnswerCache()
	} else if q, err := resource.ParseQuantity(o.AnswerCache); err != nil || q.Sign() < 0 {
		errs = append(errs, fmt.Errorf("--answer-cache %q: want a size such as 512Mi or 1Gi, or 0", o.AnswerCache))
	} else {
		o.answerCache = q.Value()
	}
	if o.LogFormat != "logfmt" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log.format %q: want logfmt or json", o.LogFormat))
	}
	if _, _, err := net.SplitHostPort(o.ListenAddress); err != nil {
		errs = append(errs, fmt.Errorf("--listen-address %q: want HOST:PORT or :PORT", o.ListenAddress))
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	o.request = plan.Request{
		Resources: o.resources, Namespace: o.namespace,
		LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		Indexes: indexes, ResourceFlagIndexes: flagIndexes,
		ResourceIndexes: o.config.ResourceIndexes(), ConfigPath: o.config.Path(), ConfigLine: o.config.IndexLine,
		SyncTimeout: o.SyncTimeout,
	}
	// Compiled here for the errors, with a caret, before any contact.
	_, err := compilePlan(o.request, o.ErrOut, queryEnvOptions(o.CostLimit)...)
	return err
}

func (o *ServeOptions) logger() *slog.Logger { return newLogger(o.ErrOut, o.Verbosity, o.LogFormat) }

// Run fills the caches and serves queries until SIGINT or SIGTERM, then
// exits 0.
func (o *ServeOptions) Run(ctx context.Context) error {
	log := o.logger()
	certDir := o.CertDir
	if o.TLSCertFile == "" && certDir == "" {
		dir, err := os.MkdirTemp("", "kubectl-informer-serving-")
		if err != nil {
			return err
		}
		certDir = dir
	}
	tlsConfig, certFile, err := queryserver.ServingTLS(ctx, o.TLSCertFile, o.TLSKeyFile, certDir, o.TLSSANs)
	if err != nil {
		return &UsageError{Err: err}
	}
	if o.TLSCertFile == "" {
		abs, _ := filepath.Abs(certFile)
		log.Info("serving a self-signed certificate: clients pass --server-ca with it", "certificate", abs)
	}
	ln, err := net.Listen("tcp", o.ListenAddress)
	if err != nil {
		return fmt.Errorf("--listen-address %s: %w", o.ListenAddress, err)
	}
	defer func() { _ = ln.Close() }()
	if len(o.contexts) > 0 {
		return o.runFleet(ctx, log, ln, tlsConfig)
	}
	return withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		return o.serve(ctx, log, ln, tlsConfig, conn, func(ctx context.Context, env *indexers.Env) (*queryserver.Fleet, error) {
			req := o.request
			if isTerminal(o.ErrOut) {
				req.Progress = o.ErrOut
			}
			served, err := queryserver.Serve(ctx, env, conn, req, o.ErrOut)
			if err != nil {
				return nil, err
			}
			return queryserver.NewFleet(conn.Cluster, served), nil
		})
	})
}

// runFleet serves the clusters of o.contexts, o.home authenticating and
// authorizing callers (see queryserver.Fleet).
func (o *ServeOptions) runFleet(ctx context.Context, log *slog.Logger, ln net.Listener, tlsConfig *tls.Config) error {
	ctx, stop := interruptible(ctx)
	defer stop()
	fleet, err := connectFleet(ctx, o.ConfigFlags, o.contexts, o.AllNamespaces)
	if err != nil {
		return err
	}
	var home plan.Conn
	members := make([]queryserver.FleetMember, len(fleet))
	for i, m := range fleet {
		req := o.request
		req.Namespace = m.namespace
		members[i] = queryserver.FleetMember{Name: m.name, Conn: m.conn, Request: req}
		if m.name == o.home {
			home = m.conn
		}
	}
	explain := explainer(ctx, fleet)
	err = o.serve(ctx, log, ln, tlsConfig, home, func(ctx context.Context, env *indexers.Env) (*queryserver.Fleet, error) {
		return queryserver.ServeFleet(ctx, env, o.home, members, o.ErrOut, explain)
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return clusterError(ctx, 0, err)
	}
	// What the home cluster (or the request, everywhere) did wrong, worded
	// as for one cluster.
	return explain(o.home, err)
}

// serve authenticates and authorizes callers with the cluster of home,
// fills the caches with fill, and serves queries on ln until ctx ends.
func (o *ServeOptions) serve(ctx context.Context, log *slog.Logger, ln net.Listener, tlsConfig *tls.Config, home plan.Conn,
	fill func(context.Context, *indexers.Env) (*queryserver.Fleet, error)) error {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reviews, err := queryserver.NewReviewCounter(registry)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(queryserver.ReviewClientConfig(home.Config, o.AuthorizationQPS, reviews))
	if err != nil {
		return err
	}
	authn, authz, err := queryserver.NewDelegated(ctx, client, queryserver.AuthOptions{
		ClientCAFile: o.ClientCAFile, Anonymous: o.Anonymous,
		TokenCacheTTL: o.AuthnCacheTTL, AllowCacheTTL: o.AuthzCacheTTL, DenyCacheTTL: o.AuthzDenyCacheTTL,
	}, log)
	if err != nil {
		return err
	}
	// A client cannot raise the limit: the error it gets says so.
	opts := append(queryEnvOptions(o.CostLimit), indexers.WithCostTracking(),
		indexers.WithCostLimitHint("ask for a higher --cost-limit of the query server"))
	env, err := indexers.NewEnv(opts...)
	if err != nil {
		return err
	}
	fleet, err := fill(ctx, env)
	if err != nil {
		return err
	}
	if o.answerCache > 0 {
		full := func() {
			log.Warn("the answer cache is full: objects beyond it are encoded each time they are answered as -o json; raise --answer-cache to keep them",
				"answer-cache", resource.NewQuantity(o.answerCache, resource.BinarySI).String())
		}
		answers := queryserver.NewAnswerCache(o.answerCache, full)
		if err := fleet.KeepAnswers(answers); err != nil {
			return err
		}
		for _, c := range queryserver.AnswerCacheCollectors(answers) {
			registry.MustRegister(c)
		}
	}
	fleet.OnNameCacheFull(func() {
		log.Warn("the cache of resource type names is full: names beyond it are resolved on each request; " +
			"so many spellings of the served types come from a client that makes them up: the query log names its user")
	})
	go logWatchDenied(ctx, log, fleet)
	bound := queryserver.NewMemoryBound(o.memoryHeadroom)
	if bound != nil {
		go bound.Run(ctx, time.Second)
	}
	names := make([]string, 0)
	for _, r := range fleet.Resources() {
		names = append(names, r.String())
	}
	srv, err := queryserver.New(queryserver.Options{
		Answerer: fleet, Authenticator: authn, Authorizer: authz,
		MaxInflightPerUser: o.MaxInflightPerUser, MaxCostPerRequest: o.MaxCostPerRequest,
		MaxRequestDuration: o.MaxRequestDuration, WriteTimeout: o.WriteTimeout,
		Registry: registry, Logger: log, Memory: bound,
	})
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	// The listener is open: connections wait in its backlog until
	// ServeTLS accepts them.
	attrs := []any{"address", ln.Addr().String(), "resources", strings.Join(names, ",")}
	if len(o.contexts) > 0 {
		served, unserved := fleet.Clusters()
		attrs = append(attrs, "home", o.home, "clusters", strings.Join(served, ","))
		if len(unserved) > 0 {
			attrs = append(attrs, "unserved", strings.Join(unserved, ","))
		}
	}
	log.Info("serving queries", attrs...)
	if o.ready != nil {
		o.ready(ln.Addr().String())
	}
	return serving.Until(ctx, hs, func() error { return hs.ServeTLS(ln, "", "") })
}

// logWatchDenied logs once, when it first happens, that RBAC denies the
// watch of served resources while allowing their list (see
// queryserver.Fleet.WatchDenied); /readyz says it for as long as it lasts.
func logWatchDenied(ctx context.Context, log *slog.Logger, fleet *queryserver.Fleet) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if lines := fleet.WatchDenied(); len(lines) > 0 {
			log.Warn(queryserver.WatchDeniedSummary, "denied", strings.Join(lines, "; "))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

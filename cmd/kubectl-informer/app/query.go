package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
)

const queryExample = `  # Pending pods in every namespace
  kubectl informer query pods -A --where 'object.status.phase == "Pending"'

  # Pods on one node, answered from a CEL index
  kubectl informer query pods -A --index byNode=object.spec.nodeName --by byNode=node-001

  # A node and its pods, each resource with an index of its own
  kubectl informer query pods,nodes -A --index 'pods:byNode=object.spec.?nodeName.orValue("")' \
    --index nodes:byNode=object.metadata.name --by byNode=node-001

  # Pods per node and phase
  kubectl informer query pods -A --count --group-by 'object.spec.nodeName + "/" + object.status.phase'

  # Restarts and pods per namespace; CPU requested per namespace, in cores
  kubectl informer query pods -A --group-by object.metadata.namespace \
    --aggregate 'restarts=sum(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())' --aggregate 'n=count()'
  kubectl informer query pods -A --group-by object.metadata.namespace \
    --aggregate 'cpu=sum(object.spec.containers.map(c, quantity(c.resources.?requests.cpu.orValue("0"))))' --sort-by -cpu

  # Pods whose node is in zone-a, with the zone as a column
  kubectl informer query pods -A \
    --where 'get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] == "zone-a"' \
    --columns 'node=object.spec.nodeName'

  # A prompt on filled caches: each line is a filter or a command (:help)
  kubectl informer query pods -A -i

  # Failed pods in every production cluster, one table with a CLUSTER column
  kubectl informer query pods -A --all-contexts --context-selector '^prod-' --where 'object.status.phase == "Failed"'

  # Pods per cluster and phase, over two contexts
  kubectl informer query pods -A --context east,west --group-by 'cluster + " " + object.status.phase'

  # The ten pods with the most restarts
  kubectl informer query pods -A --sort-by '-object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()' --limit 10`

// QueryOptions answers a query from informer caches.
type QueryOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	scopeFlags
	Indexes           []string
	By                []string
	Where             string
	Columns           []string
	SortBy            string
	Reverse           bool
	GroupBy           []string
	Aggregates        []string
	Count             bool
	Limit             int
	Output            string
	NoHeaders         bool
	ShowLabels        bool
	ShowKind          bool
	LabelColumns      []string
	IndexColumns      []string
	Template          string
	AllowMissingKeys  bool
	ShowManagedFields bool
	SyncTimeout       time.Duration
	CostLimit         uint64
	ConfigFile        string
	Watch             bool
	Interactive       bool
	// QueryServer, when set, is the URL of a query server (kubectl informer
	// serve) that answers instead of local caches; ServerCA verifies it.
	QueryServer string
	ServerCA    string
	// ServerClusters and ServerAllClusters choose the query server's
	// clusters to answer from (see queryserver.Query).
	ServerClusters    []string
	ServerAllClusters bool

	fleetFlags

	// Set by Complete.
	resources []string
	namespace string
	config    *plan.Config
	// costLimitSet: --cost-limit was given.
	costLimitSet bool
	// Set by Validate.
	request plan.Request
	plan    *plan.Plan
}

// NewQueryCommand returns the "query" verb.
func NewQueryCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &QueryOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "query (TYPE[,TYPE...] [NAME...] | TYPE/NAME...) [flags]",
		Short: "Answer a query from informer caches, with CEL filters and indexes",
		Long: `Query lists and watches the named resources into informer caches, registers the
CEL index functions given with --index, waits for the caches to sync and
answers from them: --by looks objects up in an index, --where filters with a
CEL predicate, --sort-by, --limit, --count and --group-by shape the answer, and
-o prints it in any of kubectl get's formats. As with kubectl get, objects
may be named: TYPE NAME... or TYPE/NAME...; one that does not exist is
reported as kubectl reports it, with exit code 1. With -i the caches stay
filled and each line read is a new --where filter or a command (:count,
:by INDEX VALUE, :group [NAME=]CEL, :o FORMAT, :help, :quit), with line editing,
history and tab completion of fields when the input is a terminal.

In every expression the variable object is the object as its JSON (as in a
ValidatingAdmissionPolicy), and get("nodes", name), get("configmaps", ns, name)
and byIndex("pods", "byNode", value) read other cached resources.

With --query-server URL the query is sent to a query server (kubectl informer
serve) and answered from its warm caches, with your credentials (--token, or
the kubeconfig's context), which the server checks with the API server: the
output is what the local query prints. --server (-s) is the API server's
address, as in kubectl; the older spelling --server URL given with --server-ca,
--server-clusters or --server-all-clusters still names the query server, with
a deprecation warning.

` + exitCodesHelp,
		Example: queryExample,
		Args:    requireResourceType(streams.ErrOut, "query"),
		RunE:    runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.addFleetFlags(f, o.ConfigFlags)
	o.addScopeFlags(f)
	f.StringArrayVar(&o.Indexes, "index", nil, "register an index NAME=CEL returning a string, a list of strings or null, on every queried resource, or RESOURCE:NAME=CEL on one (repeatable)")
	f.StringArrayVar(&o.By, "by", nil, "answer from an index: NAME=VALUE (repeatable: objects in every index)")
	f.StringVar(&o.Where, "where", "", "keep the objects for which this CEL expression is true")
	f.StringArrayVar(&o.Columns, "columns", nil, "extra table columns NAME=CEL[,NAME=CEL...] (repeatable)")
	f.StringVar(&o.SortBy, "sort-by", "", "order by this CEL expression's value (numbers numerically); -EXPR: in descending order; with --aggregate, by the key or aggregate of this NAME (-NAME: descending)")
	f.BoolVar(&o.Reverse, "reverse", false, "print in descending order: of --sort-by's values, else of namespace/name")
	f.StringArrayVar(&o.GroupBy, "group-by", nil, "count per distinct value of this CEL expression, largest first (implies --count); with --aggregate, a key [NAME=]CEL of the groups (repeatable)")
	f.StringArrayVar(&o.Aggregates, "aggregate", nil, "compute NAME=FUNC(EXPR) per --group-by group, or over the whole answer: count(), sum, avg, min, max, quantile(Q, EXPR), distinct (repeatable)")
	f.BoolVar(&o.Count, "count", false, "print only the number of matching objects (or counts per --group-by value)")
	f.IntVar(&o.Limit, "limit", 0, "print at most this many results after sorting (0: all)")
	f.StringVarP(&o.Output, "output", "o", "", "output format: "+strings.Join(query.AllowedFormats(), "|")+" (default: table)")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "omit table headers")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "show all labels as the last column")
	f.BoolVar(&o.ShowKind, "show-kind", false, "prefix names with the resource type")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "a column per label key")
	f.StringSliceVar(&o.IndexColumns, "index-columns", nil, "a column per index, with each object's values in it (comma-separated or repeated)")
	f.StringVar(&o.Template, "template", "", "template for -o go-template, jsonpath (and their -file forms)")
	f.BoolVar(&o.AllowMissingKeys, "allow-missing-template-keys", true, "ignore missing keys in templates")
	f.BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "keep metadata.managedFields in -o json and yaml (cached objects then keep them too)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 2*time.Minute, "give up when the caches have not synced within this time")
	addCostLimitFlag(f, &o.CostLimit)
	f.BoolVarP(&o.Watch, "watch", "w", false, "after the answer, print it again each time it changes (for --count and --group-by, only the new numbers)")
	f.BoolVarP(&o.Interactive, "interactive", "i", false, "after the caches sync, answer queries typed line by line: a CEL filter or a command such as :count or :by (:help lists them); takes precedence over --watch")
	f.StringVar(&o.QueryServer, "query-server", "", "send the query to this query server (https://HOST:PORT, see kubectl informer serve) instead of filling local caches")
	f.StringVar(&o.ServerCA, "server-ca", "", "with --query-server: the certificate authority that signed the query server's certificate (default: the kubeconfig's)")
	f.StringSliceVar(&o.ServerClusters, "server-clusters", nil, "with --query-server: answer from these of the query server's clusters (its context names; comma-separated or repeated), merged with a CLUSTER column when several (default: its home cluster)")
	f.BoolVar(&o.ServerAllClusters, "server-all-clusters", false, "with --query-server: answer from every cluster of the query server, merged with a CLUSTER column")
	f.StringVar(&o.ConfigFile, "config", "", "config file with named indexes per resource and flag defaults (default: "+configDefaultHelp()+" when present)")
	registerQueryCompletions(cmd, o)
	return cmd
}

func configDefaultHelp() string {
	return "$XDG_CONFIG_HOME/kubectl-informer/config.yaml"
}

// loadConfig reads --config, or the default config file when it exists.
func loadConfig(path string) (*plan.Config, error) {
	optional := path == ""
	if optional {
		path = plan.DefaultConfigPath()
		if path == "" {
			return nil, nil
		}
	}
	cfg, err := plan.LoadConfig(path, optional)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return cfg, nil
}

// Complete reads the config file, applies its defaults to the flags not
// given, and resolves the namespace from the kubeconfig; it does not contact
// the cluster.
func (o *QueryOptions) Complete(cmd *cobra.Command, args []string) error {
	o.resources = args
	if err := emptyValueErrors(cmd.Flags(), "where", "sort-by"); err != nil {
		return err
	}
	for _, g := range o.GroupBy {
		if strings.TrimSpace(g) == "" {
			return &UsageError{Err: errors.New("--group-by is empty: give it a CEL expression, or leave the flag out")}
		}
	}
	o.costLimitSet = cmd.Flags().Changed("cost-limit")
	o.deprecatedServer(cmd)
	cfg, err := loadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	o.config = cfg
	if cfg != nil {
		if !cmd.Flags().Changed("sync-timeout") {
			o.SyncTimeout = cfg.SyncTimeout(o.SyncTimeout)
		}
		// The default output format applies to object listings, not counts.
		if !cmd.Flags().Changed("output") && cfg.Defaults.Output != "" && !o.Count && len(o.GroupBy) == 0 && len(o.Aggregates) == 0 {
			o.Output = cfg.Defaults.Output
		}
	}
	if err := o.completeContexts(o.ConfigFlags); err != nil {
		return err
	}
	o.namespace, err = namespaceOf(o.ConfigFlags, o.AllNamespaces)
	return err
}

// deprecatedServer reads the older spelling of --query-server: --server URL
// given with a flag that only a query server takes (--server-ca,
// --server-clusters, --server-all-clusters) names the query server, with a
// warning. Otherwise --server is the API server's address, as in kubectl.
func (o *QueryOptions) deprecatedServer(cmd *cobra.Command) {
	f := cmd.Flags()
	if !f.Changed("server") || f.Changed("query-server") || o.ConfigFlags.APIServer == nil || *o.ConfigFlags.APIServer == "" {
		return
	}
	if !f.Changed("server-ca") && !f.Changed("server-clusters") && !f.Changed("server-all-clusters") {
		return
	}
	o.QueryServer, *o.ConfigFlags.APIServer = *o.ConfigFlags.APIServer, ""
	_, _ = fmt.Fprintln(o.ErrOut, "Warning: --server with --server-ca, --server-clusters or --server-all-clusters names the query server: this spelling is deprecated and will be removed in a future release; use --query-server, --server is the API server's address as in kubectl")
}

// Validate checks the flags and compiles every expression, before any
// contact with the cluster.
func (o *QueryOptions) Validate() error {
	var errs []error
	req := plan.Request{
		Resources:     o.resources,
		Namespace:     o.namespace,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Where:         o.Where,
		SortBy:        o.SortBy,
		Reverse:       o.Reverse,
		Count:         o.Count,
		Limit:         o.Limit,
		Output:        o.Output,
		SyncTimeout:   o.SyncTimeout,
		WholeObjects:  o.Interactive,
		Remote:        o.QueryServer != "",

		ResourceIndexes: o.config.ResourceIndexes(),
		ConfigPath:      o.config.Path(),
		ConfigLine:      o.config.IndexLine,
		Print: query.PrintOptions{
			NoHeaders:          o.NoHeaders,
			ShowLabels:         o.ShowLabels,
			ShowKind:           o.ShowKind,
			LabelColumns:       o.LabelColumns,
			IndexNames:         o.IndexColumns,
			Template:           o.Template,
			StrictTemplateKeys: !o.AllowMissingKeys,
			ShowManagedFields:  o.ShowManagedFields,
		},
	}
	errs = append(errs, scopeErrors(o.ConfigFlags, o.AllNamespaces, o.SyncTimeout)...)
	errs = append(errs, o.inputErrors(o.resources)...)
	var more []error
	req.Indexes, req.ResourceFlagIndexes, more = parseIndexFlags(o.Indexes)
	errs = append(errs, more...)
	for _, s := range o.By {
		name, value, err := splitNamed(s, "--by", "INDEX=VALUE")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		req.By = append(req.By, query.Selector{Index: name, Value: value})
	}
	if len(o.GroupBy) > 0 {
		req.GroupBy, req.GroupByKeys = o.GroupBy[0], o.GroupBy[1:]
	}
	for _, s := range o.Aggregates {
		name, value, err := splitNamed(s, "--aggregate", "NAME=FUNC(EXPR)")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		req.Aggregates = append(req.Aggregates, plan.NamedExpr{Name: name, Expr: value})
	}
	req.Columns, more = parseColumns(o.Columns)
	errs = append(errs, more...)
	errs = append(errs, countErrors(o)...)
	if o.QueryServer != "" {
		switch {
		case o.Interactive || o.Watch:
			errs = append(errs, errors.New("--query-server answers one query: -i and --watch need local caches"))
		case o.ShowManagedFields:
			errs = append(errs, errors.New("--query-server: a query server does not keep metadata.managedFields; query without --query-server"))
		case o.costLimitSet:
			errs = append(errs, errors.New("--query-server: the query server evaluates with its own --cost-limit; query without --query-server to set yours"))
		}
		if o.ServerAllClusters && len(o.ServerClusters) > 0 {
			errs = append(errs, errors.New("--server-clusters and --server-all-clusters choose the server's clusters both: give one of them"))
		}
	} else {
		for _, flag := range []struct {
			name string
			set  bool
		}{{"--server-ca", o.ServerCA != ""}, {"--server-clusters", len(o.ServerClusters) > 0}, {"--server-all-clusters", o.ServerAllClusters}} {
			if flag.set {
				errs = append(errs, fmt.Errorf("%s is only for --query-server", flag.name))
			}
		}
	}
	if len(o.contexts) > 0 {
		switch {
		case o.QueryServer != "":
			errs = append(errs, errors.New("--query-server: --context names the credentials sent to the query server, one context; choose the server's clusters with --server-clusters or --server-all-clusters"))
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	limit := o.CostLimit
	if o.QueryServer != "" {
		// The query server evaluates with its own limit, and refuses
		// what it would stop.
		limit = 0
	}
	plan, err := compilePlan(req, o.ErrOut, queryEnvOptions(limit)...)
	o.plan, o.request = plan, req
	return err
}

// queryEnvOptions are the options of the CEL environment of the verbs that
// answer queries from local caches: the cost limit, and the variable
// cluster, the context's name.
func queryEnvOptions(limit uint64) []indexers.Option {
	return append(costLimitOptions(limit), indexers.WithClusterVariable())
}

// addCostLimitFlag registers --cost-limit, the cost limit of one
// evaluation (see costLimitOptions).
func addCostLimitFlag(f *pflag.FlagSet, limit *uint64) {
	f.Uint64Var(limit, "cost-limit", indexers.DefaultCostLimit,
		"stop an expression's evaluation on one object after this many CEL cost units, as Kubernetes stops an admission policy's (0: no limit; Ctrl-C still stops it)")
}

// costLimitOptions are the CEL environment's options for --cost-limit
// limit; 0 sets none.
func costLimitOptions(limit uint64) []indexers.Option {
	if limit == 0 {
		limit = indexers.NoCostLimit
	}
	return []indexers.Option{indexers.WithCostLimit(limit), indexers.WithCostLimitHint("raise --cost-limit (0: no limit)")}
}

// compilePlan compiles req with a new CEL environment made with opts;
// progress goes to errOut when it is a terminal. Expression errors are
// usage errors.
func compilePlan(req plan.Request, errOut io.Writer, opts ...indexers.Option) (*plan.Plan, error) {
	env, err := indexers.NewEnv(opts...)
	if err != nil {
		return nil, err
	}
	if isTerminal(errOut) {
		req.Progress = errOut
	}
	plan, err := plan.Compile(env, req)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return plan, nil
}

// Run connects to the cluster, fills the caches and prints the answer; or,
// with --query-server, prints the query server's answer.
func (o *QueryOptions) Run(ctx context.Context) error {
	if o.QueryServer != "" {
		return o.runRemote(ctx)
	}
	if len(o.contexts) > 0 {
		return o.runFleet(ctx)
	}
	return withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		if o.Interactive {
			return o.runInteractive(ctx, conn)
		}
		if o.Watch {
			return o.plan.ExecuteWatch(ctx, conn, o.Out, o.ErrOut, 200*time.Millisecond)
		}
		return o.plan.Execute(ctx, conn, o.Out, o.ErrOut)
	})
}

// runRemote sends the query to the query server with the kubeconfig's
// credentials and prints its answer. A query the server finds wrong is a
// usage error, as it would be locally.
func (o *QueryOptions) runRemote(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return err
	}
	client, err := queryserver.NewClient(cfg, o.QueryServer, o.ServerCA)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("--query-server %w", err)}
	}
	// The server's caches are warm: --sync-timeout bounds the wait for its
	// answer to start.
	client.AnswerTimeout = o.SyncTimeout
	q := queryserver.FromRequest(o.request)
	q.Clusters, q.AllClusters = o.ServerClusters, o.ServerAllClusters
	// The server reads no files: a template file is read here and its
	// text sent.
	q.Output, q.Print.Template, q.Print.NoHeaders, err = query.InlineTemplate(q.Output, q.Print.Template, q.Print.NoHeaders, nil)
	if err != nil {
		return &UsageError{Err: err}
	}
	err = client.Query(ctx, q, o.Out, o.ErrOut)
	var (
		se      *queryserver.StatusError
		na      *queryserver.NoAnswerError
		partial *plan.PartialError
	)
	switch {
	case errors.As(err, &se) && se.Code == http.StatusBadRequest:
		return &UsageError{Err: errors.New(se.Status.Message)}
	case errors.As(err, &na):
		return &timeoutError{err: err, hint: "check that kubectl informer serve runs there and is healthy; raise --sync-timeout if it is only slow"}
	case errors.As(err, &partial):
		return err
	case err != nil && ctx.Err() == nil && isTimeout(err) && cfg.Timeout > 0:
		return &timeoutError{err: err, hint: fmt.Sprintf("the query server did not answer in time (--request-timeout %s): check that kubectl informer serve runs there and is healthy; raise --request-timeout if it is only slow", cfg.Timeout)}
	}
	return clusterError(ctx, cfg.Timeout, err)
}

// withCluster connects with the kubeconfig and flags and calls run with a
// context that ends on Ctrl-C or SIGTERM. Errors are mapped to the exit
// codes: a UsageError stays one, an unknown resource type becomes one, an
// interruption an InterruptedError, and a server that did not answer in
// time gets a message that names the flag bounding the wait.
//
// The requests of resource resolution (discovery, OpenAPI schemas) end
// when the context does, and while a plan fills its caches, when its sync
// timeout runs out (see plan.Conn.Bound): they take no context of their
// own, so a silent server would otherwise hold the command for as long as
// client-go's timeouts allow, and Ctrl-C could not stop it.
func withCluster(ctx context.Context, flags *genericclioptions.ConfigFlags, run func(context.Context, plan.Conn) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	conn, cfg, err := connect(ctx, flags, *flags.Context)
	if err != nil {
		return err
	}
	err = run(ctx, conn)
	if hinted := impersonationHint(flags, err); hinted != nil && ctx.Err() == nil {
		err = hinted
	}
	return clusterError(ctx, cfg.Timeout, err)
}

// clusterError maps the error of a command that contacted the cluster to
// what the user is told; ctx is the command's.
func clusterError(ctx context.Context, requestTimeout time.Duration, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		var ie *InterruptedError
		if errors.As(context.Cause(ctx), &ie) {
			return ie
		}
		return &InterruptedError{}
	}
	var usage *UsageError
	if errors.As(err, &usage) {
		return err
	}
	if factory.IsUnknownResource(err) {
		// A resource type the server does not have is the input's
		// mistake, for every verb and wherever it is named.
		return &UsageError{Err: err}
	}
	const check = "check that it is running and healthy and that the kubeconfig (--kubeconfig, --context) points at it"
	var (
		na *noAnswerError
		se *factory.SyncError
	)
	switch {
	case errors.As(err, &se) && se.Cause == nil && requestTimeout > 0 && requestTimeout < se.Timeout:
		// Each list was cut at --request-timeout and tried again until
		// the sync timeout: the shorter bound is the one to raise.
		return fmt.Errorf("%w\nevery request, each list included, is held to --request-timeout (%s): raise --request-timeout if the API server is only slow, or check its health", err, requestTimeout)
	case errors.As(err, &se) && se.Cause == nil:
		return fmt.Errorf("%w\nraise --sync-timeout for very large clusters, or check the API server's health", err)
	case errors.As(err, &na):
		return &timeoutError{err: err, hint: fmt.Sprintf("the API server did not answer within %s (%s): %s; raise %s if it is only slow", na.flag, na.limit, check, na.flag)}
	case !isTimeout(err):
		return err
	case requestTimeout > 0:
		return &timeoutError{err: err, hint: fmt.Sprintf("the API server did not answer in time (--request-timeout %s): %s; raise --request-timeout if it is only slow", requestTimeout, check)}
	default:
		return &timeoutError{err: err, hint: "the API server did not answer in time: " + check}
	}
}

// isTimeout reports whether err is a request that got no answer in time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// timeoutError is the first line of a request's error (what failed), then
// a hint saying what bounded the wait and what to do.
type timeoutError struct {
	err  error
	hint string
}

func (e *timeoutError) Error() string {
	msg, _, _ := strings.Cut(e.err.Error(), "\n")
	return msg + "\n" + e.hint
}

func (e *timeoutError) Unwrap() error { return e.err }

// noAnswerError is the error of a request cut short by the time flag
// gave it: --sync-timeout or --request-timeout.
type noAnswerError struct {
	limit time.Duration
	flag  string
}

func (e *noAnswerError) Error() string { return fmt.Sprintf("no answer within %s", e.limit) }

// interruptible returns a context that ends, with an *InterruptedError as
// its cause, at the first SIGINT or SIGTERM. Signals are then no longer
// caught: a second Ctrl-C ends the process at once, however the command
// winds down. A SIGINT that a handler set with divertInterrupts handles
// does not end the context. stop releases the signals and ends the
// context. (signal.NotifyContext would end the context at every SIGINT,
// also those the interactive session takes to stop the line under way.)
func interruptible(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	d := &diversion{}
	ctx = context.WithValue(ctx, diversionKey{}, d)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case sig := <-sigs:
				if sig == os.Interrupt && d.handle() {
					continue
				}
				signal.Stop(sigs)
				cancel(&InterruptedError{Signal: sig})
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
		cancel(context.Canceled)
	}
}

// diversion holds the handler that a SIGINT is offered before it ends a
// command's context.
type diversion struct {
	mu sync.Mutex
	// handler reports whether it handled the signal; nil when none is set.
	// Guarded by mu.
	handler func() bool
}

type diversionKey struct{}

func (d *diversion) handle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.handler != nil && d.handler()
}

// divertInterrupts offers each SIGINT that the command of ctx (a context of
// interruptible) receives to handle first: one that handle handles (it
// returns true) does not end the command. The function returned removes
// handle. Without interruptible, it does nothing.
func divertInterrupts(ctx context.Context, handle func() bool) (restore func()) {
	d, ok := ctx.Value(diversionKey{}).(*diversion)
	if !ok {
		return func() {}
	}
	d.mu.Lock()
	d.handler = handle
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		d.handler = nil
		d.mu.Unlock()
	}
}

// boundRequests bounds the requests of a transport it wraps: each ends
// when base does, and while a contact phase is open (see bound), when the
// phase's context does. In a phase, a request that got no answer in time
// makes the ones after it fail at once with the same error: asking a
// silent server again only multiplies the wait (client-go's REST mapper
// asks for the same discovery document twice before it gives up).
type boundRequests struct {
	base context.Context
	// requestTimeout is --request-timeout, for messages; 0 when not given.
	requestTimeout time.Duration

	// mu guards the fields below.
	mu sync.Mutex
	// phase is the context of the open phase; nil when none is.
	phase context.Context
	// limit is the time the phase was given, for messages.
	limit time.Duration
	// failed is the first timeout of the phase.
	failed error
}

// bound opens a contact phase bounded by ctx, which ends limit after the
// phase began (plan.Conn.Bound); the function returned closes it.
func (b *boundRequests) bound(ctx context.Context, limit time.Duration) func() {
	b.mu.Lock()
	b.phase, b.limit, b.failed = ctx, limit, nil
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.phase == ctx {
			b.phase, b.failed = nil, nil
		}
	}
}

func (b *boundRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return &boundTransport{b: b, rt: rt}
}

type boundTransport struct {
	b  *boundRequests
	rt http.RoundTripper
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b := t.b
	b.mu.Lock()
	phase, limit, failed := b.phase, b.limit, b.failed
	b.mu.Unlock()
	if failed != nil {
		return nil, failed
	}
	bound := b.base
	if phase != nil {
		bound = phase
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(bound, cancel)
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel()
		if phase == nil {
			return nil, err
		}
		// The request's own timeout ended it: client-go's context, or the
		// HTTP client's timer (--request-timeout), which cancels it as the
		// deadline it gives the request's context passes, whichever of the
		// two ends it first.
		ownTimeout := errors.Is(req.Context().Err(), context.DeadlineExceeded) ||
			(phase.Err() == nil && b.base.Err() == nil && deadlinePassed(req.Context()))
		switch {
		case phase.Err() != nil && b.base.Err() == nil:
			err = &noAnswerError{limit: limit, flag: "--sync-timeout"}
		case ownTimeout && b.requestTimeout > 0:
			err = &noAnswerError{limit: b.requestTimeout, flag: "--request-timeout"}
		}
		if _, ok := err.(*noAnswerError); ok || ownTimeout || isTimeout(err) {
			b.mu.Lock()
			if b.phase == phase && b.failed == nil {
				b.failed = err
			}
			b.mu.Unlock()
		}
		return nil, err
	}
	resp.Body = &boundBody{ReadCloser: resp.Body, release: func() {
		stop()
		cancel()
	}}
	return resp, nil
}

// deadlinePassed reports whether ctx has a deadline and it has passed.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// boundBody releases the bound of its request when closed.
type boundBody struct {
	io.ReadCloser
	release func()
}

func (b *boundBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// splitNamed splits NAME=VALUE at the first "=".
func splitNamed(s, flag, form string) (string, string, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(value) == "" {
		return "", "", fmt.Errorf("%s %q: want %s", flag, s, form)
	}
	return name, strings.TrimSpace(value), nil
}

// isTerminal reports whether w is a terminal, for progress reports.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

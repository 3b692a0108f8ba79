package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/interactive"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/watch"
)

// contextsFlag is --context as query takes it: a context, or several,
// comma-separated or repeated, kept comma-joined in the ConfigFlags'
// Context, which names one context everywhere else.
type contextsFlag struct{ target *string }

var _ pflag.Value = contextsFlag{}

func (c contextsFlag) String() string { return *c.target }
func (c contextsFlag) Type() string   { return "string" }
func (c contextsFlag) Set(v string) error {
	if *c.target != "" {
		v = *c.target + "," + v
	}
	*c.target = v
	return nil
}

// fleetFlags select the contexts a query reads: --context a,b (repeatable)
// and --all-contexts with --context-selector.
type fleetFlags struct {
	AllContexts     bool
	ContextSelector string

	// contexts are the contexts of a query over several clusters, in the
	// order given (--all-contexts: by name); nil for one cluster. Set by
	// completeContexts.
	contexts []string
}

func (f *fleetFlags) addFleetFlags(fs *pflag.FlagSet, flags *genericclioptions.ConfigFlags) {
	if c := fs.Lookup("context"); c != nil {
		c.Value = contextsFlag{target: flags.Context}
		c.Usage = "the kubeconfig context to use; several, comma-separated or repeated, answer one query over their clusters, merged, with a CLUSTER column"
	}
	fs.BoolVar(&f.AllContexts, "all-contexts", false, "answer over the clusters of every context of the kubeconfig (see --context-selector)")
	fs.StringVar(&f.ContextSelector, "context-selector", "", "with --all-contexts: only the contexts whose name this regular expression matches")
}

// completeContexts reads the contexts of --context and --all-contexts
// from the kubeconfig. One context, or none (the current one), is a query
// of one cluster: contexts stays nil and the ConfigFlags name it.
func (f *fleetFlags) completeContexts(flags *genericclioptions.ConfigFlags) error {
	var named []string
	for c := range strings.SplitSeq(*flags.Context, ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(named, c) {
			named = append(named, c)
		}
	}
	if f.ContextSelector != "" && !f.AllContexts {
		return &UsageError{Err: errors.New("--context-selector selects among --all-contexts: add --all-contexts")}
	}
	if !f.AllContexts && len(named) <= 1 {
		*flags.Context = strings.Join(named, "")
		return nil
	}
	if f.AllContexts && len(named) > 0 {
		return &UsageError{Err: errors.New("--all-contexts and --context select contexts both: give one of them")}
	}
	raw, err := rawKubeconfig(flags)
	if err != nil {
		return err
	}
	if f.AllContexts {
		var sel *regexp.Regexp
		if f.ContextSelector != "" {
			if sel, err = regexp.Compile(f.ContextSelector); err != nil {
				return &UsageError{Err: fmt.Errorf("--context-selector: %w", err)}
			}
		}
		for name := range raw.Contexts {
			if sel == nil || sel.MatchString(name) {
				named = append(named, name)
			}
		}
		slices.Sort(named)
		if len(named) == 0 {
			return &UsageError{Err: fmt.Errorf("no context of the kubeconfig matches --context-selector %q", f.ContextSelector)}
		}
	}
	for _, name := range named {
		if _, ok := raw.Contexts[name]; !ok {
			return &UsageError{Err: fmt.Errorf("context %q is not in the kubeconfig: kubectl config get-contexts lists them", name)}
		}
	}
	f.contexts = named
	// The namespace and the first checks read the first context.
	*flags.Context = named[0]
	return nil
}

// rawKubeconfig reads the kubeconfig of flags, merged as kubectl merges
// it, through a copy of flags: flags keep a loader once made, with the
// context they held then, and --context may hold several contexts yet.
func rawKubeconfig(flags *genericclioptions.ConfigFlags) (clientcmdapi.Config, error) {
	raw, err := contextFlags(flags, "").ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return raw, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return raw, nil
}

// contextFlags returns a copy of base that reaches the cluster of context
// name: the same kubeconfig, credentials and overrides, that context.
func contextFlags(base *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig, f.ClusterName, f.AuthInfoName = base.KubeConfig, base.ClusterName, base.AuthInfoName
	f.Namespace, f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup = base.Namespace, base.Impersonate, base.ImpersonateUID, base.ImpersonateGroup
	f.CacheDir, f.CertFile, f.KeyFile, f.CAFile = base.CacheDir, base.CertFile, base.KeyFile, base.CAFile
	f.BearerToken, f.Insecure, f.TLSServerName, f.Timeout = base.BearerToken, base.Insecure, base.TLSServerName, base.Timeout
	f.Username, f.Password, f.DisableCompression = base.Username, base.Password, base.DisableCompression
	f.APIServer = nil
	f.WrapConfigFn = base.WrapConfigFn
	f.Context = &name
	return f
}

// runFleet answers the query over the clusters of o.contexts: a plan and a
// connection per cluster, filled in parallel (see plan.ExecuteFleet).
func (o *QueryOptions) runFleet(ctx context.Context) error {
	ctx, stop := interruptible(ctx)
	defer stop()
	fleet, err := connectFleet(ctx, o.ConfigFlags, o.contexts, o.AllNamespaces)
	if err != nil {
		return err
	}
	members, err := memberPlans(o.plan, fleet, func(r *plan.Request) { r.Print.Clusters = true })
	if err != nil {
		return err
	}
	switch {
	case o.Interactive:
		return o.interact(ctx, func(opts interactive.Options) (*interactive.Session, error) {
			return interactive.NewFleetSession(ctx, members, o.Out, o.ErrOut, opts, explainer(ctx, fleet))
		})
	case o.Watch:
		err = plan.ExecuteWatchFleet(ctx, members, o.Out, o.ErrOut, 200*time.Millisecond, explainer(ctx, fleet))
	default:
		err = plan.ExecuteFleet(ctx, members, o.Out, o.ErrOut, explainer(ctx, fleet))
	}
	var partial *plan.PartialError
	if err != nil && ctx.Err() != nil && !errors.As(err, &partial) {
		// Interrupted: as for one cluster.
		return clusterError(ctx, 0, err)
	}
	return err
}

// fleetMember is one context's connection, its flags, and its namespace.
type fleetMember struct {
	name      string
	conn      plan.Conn
	flags     *genericclioptions.ConfigFlags
	timeout   time.Duration
	namespace string
}

// connectFleet connects to the cluster of each context, each in its own
// namespace (-n, or the context's, or all with -A).
func connectFleet(ctx context.Context, base *genericclioptions.ConfigFlags, contexts []string, allNamespaces bool) ([]fleetMember, error) {
	var members []fleetMember
	for _, name := range contexts {
		flags := contextFlags(base, name)
		ns, err := namespaceOf(flags, allNamespaces)
		if err != nil {
			return nil, fmt.Errorf("context %q: %w", name, err)
		}
		conn, cfg, err := connect(ctx, flags, name)
		if err != nil {
			return nil, fmt.Errorf("context %q: %w", name, err)
		}
		members = append(members, fleetMember{name: name, conn: conn, flags: flags, timeout: cfg.Timeout, namespace: ns})
	}
	return members, nil
}

// explainer words the error of one context's cluster as the verbs word
// one cluster's.
func explainer(ctx context.Context, members []fleetMember) func(cluster string, err error) error {
	return func(cluster string, err error) error {
		for _, m := range members {
			if m.name != cluster {
				continue
			}
			if hinted := impersonationHint(m.flags, err); hinted != nil && ctx.Err() == nil {
				err = hinted
			}
			return clusterError(ctx, m.timeout, err)
		}
		return err
	}
}

// runFleet watches the clusters of o.contexts at once (see
// watch.RunFleet).
func (o *WatchOptions) runFleet(ctx context.Context) error {
	ctx, stop := interruptible(ctx)
	defer stop()
	fleet, err := connectFleet(ctx, o.ConfigFlags, o.contexts, o.AllNamespaces)
	if err != nil {
		return err
	}
	var members []watch.Member
	for _, m := range fleet {
		req := o.request
		req.Namespace, req.Progress = m.namespace, nil
		w, err := watch.Compile(o.env, req)
		if err != nil {
			return &UsageError{Err: err}
		}
		members = append(members, watch.Member{Name: m.name, Conn: m.conn, Watcher: w})
	}
	err = watch.RunFleet(ctx, members, o.Out, o.ErrOut, explainer(ctx, fleet))
	if ctx.Err() != nil {
		var partial *plan.PartialError
		if errors.As(err, &partial) {
			return err
		}
		// Ctrl-C ends a watch: done, as for one cluster.
		return nil
	}
	return err
}

// runFleet counts the index values of each cluster of o.contexts, the
// clusters filled in parallel; the rows name their cluster. A cluster that
// cannot be counted is named in a warning, and the others' rows are
// printed with a *plan.PartialError.
func (o *IndexesOptions) runFleet(ctx context.Context) error {
	ctx, stop := interruptible(ctx)
	defer stop()
	fleet, err := connectFleet(ctx, o.ConfigFlags, o.contexts, o.AllNamespaces)
	if err != nil {
		return err
	}
	members, err := memberPlans(o.plan, fleet, nil)
	if err != nil {
		return err
	}
	infos := make([][]plan.IndexInfo, len(fleet))
	errs := make([]error, len(fleet))
	warnings := plan.LockedWriter(o.ErrOut)
	var wg sync.WaitGroup
	for i, m := range fleet {
		wg.Go(func() {
			infos[i], errs[i] = members[i].Plan.DescribeIndexes(ctx, m.conn, plan.ClusterWarnings(warnings, m.name))
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return clusterError(ctx, 0, ctx.Err())
	}
	explain := explainer(ctx, fleet)
	var rows []indexRow
	var failed []plan.MemberError
	for i, m := range fleet {
		if errs[i] != nil {
			failed = append(failed, plan.MemberError{Cluster: m.name, Err: explain(m.name, errs[i])})
			continue
		}
		for _, in := range infos[i] {
			rows = append(rows, indexRow{Cluster: m.name, Resource: in.Resource, Index: in.Index, Expression: in.Expr, BuiltIn: in.Expr == "", Values: &in.Values})
		}
	}
	if len(failed) == len(fleet) {
		return plan.NoAnswer(failed)
	}
	for _, f := range failed {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: %v\n", f)
	}
	if err := o.print(rows, true); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &plan.PartialError{Failed: failed, Clusters: len(fleet)}
	}
	return nil
}

// memberPlans returns a plan per cluster of fleet, made of p (compiled
// with its CEL environment, which they share) with the cluster's
// namespace, no progress line (the clusters fill at once) and what edit
// changes, when not nil: each cluster's plan binds its own caches.
func memberPlans(p *plan.Plan, fleet []fleetMember, edit func(*plan.Request)) ([]plan.Member, error) {
	members := make([]plan.Member, len(fleet))
	for i, m := range fleet {
		mp, err := p.With(func(r *plan.Request) {
			r.Namespace, r.Progress = m.namespace, nil
			if edit != nil {
				edit(r)
			}
		})
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		members[i] = plan.Member{Name: m.name, Conn: m.conn, Plan: mp}
	}
	return members, nil
}

// connect returns the connection to the cluster of flags' context, named
// cluster in expressions (the current context's name when empty), and its
// REST config. The resolver's requests are held to the sync timeout of
// the plan that fills caches (Conn.Bound).
func connect(ctx context.Context, flags *genericclioptions.ConfigFlags, cluster string) (plan.Conn, *rest.Config, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return plan.Conn{}, nil, err
	}
	requests := &boundRequests{base: ctx, requestTimeout: cfg.Timeout}
	wrap := flags.WrapConfigFn
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		c.Wrap(requests.wrap)
		return c
	}
	resolver, err := factory.NewResolverFor(flags)
	if err != nil {
		return plan.Conn{}, nil, err
	}
	if cluster == "" {
		if raw, err := flags.ToRawKubeConfigLoader().RawConfig(); err == nil {
			cluster = raw.CurrentContext
		}
	}
	return plan.Conn{Config: cfg, Resolver: resolver, Bound: requests.bound, KubectlFlags: kubectlFlags(flags), Cluster: cluster}, cfg, nil
}

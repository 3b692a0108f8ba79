package app

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/watch"
)

const watchExample = `  # Every pod event in the current namespace
  kubectl informer watch pods

  # Pods of every namespace entering and leaving the Pending phase, with what changed
  kubectl informer watch pods -A --where 'object.status.phase == "Pending"' --diff

  # Only what happens from now on, with the node of each pod
  kubectl informer watch pods -A --initial=false --columns 'node=object.spec.?nodeName.orValue("")'

  # Pods with their owner's ready replicas, shown again when only the owner changes
  kubectl informer watch pods -A --columns 'ready=owner(object).?status.?readyReplicas.orValue(0)'

  # Deployments as NDJSON, one object per line
  kubectl informer watch deployments.apps -A -o json`

// WatchOptions prints the events an informer's handlers receive.
type WatchOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	scopeFlags
	Where        string
	Columns      []string
	Diff         bool
	Output       string
	Initial      bool
	ResyncPeriod time.Duration
	SyncTimeout  time.Duration
	CostLimit    uint64
	fleetFlags

	// Set by Complete.
	resources []string
	namespace string
	// Set by Validate.
	env     *indexers.Env
	request watch.Request
	watcher *watch.Watcher
}

// NewWatchCommand returns the "watch" verb.
func NewWatchCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &WatchOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "watch RESOURCE[,RESOURCE...] [flags]",
		Short: "Print the events an informer receives, filtered and diffed with CEL",
		Long: `Watch lists and watches the named resources with client-go informers and prints
one line per event their handlers receive: the time (UTC), the event type, the
kind, namespace/name, the resourceVersion and the --columns values.

Event types are ADDED, UPDATED, DELETED and RESYNC (an update whose
resourceVersion did not change, as --resync-period produces). A deletion the
informer only learnt of by listing again is shown as "DELETED (missed)" with
the last state it knew. With --where, an object that starts matching on an
update is shown as ENTERED and one that stops matching as LEFT; an evaluation
error counts as not matching and is summarised on stderr at exit.

When --where or --columns read other objects (get(), byIndex(), owner(),
owners(), children(), selected(), events()), a change of those objects
evaluates the watched objects again, once a burst of changes is over: an
object whose answer changed is shown as UPDATED (related), ENTERED (related)
or LEFT (related), with its own resourceVersion, unchanged.

--diff shows under each update the fields that changed, as "path: old → new"
(metadata.resourceVersion, managedFields, generation and the conditions'
lastHeartbeatTime and lastProbeTime are left out). -o json prints one JSON
object per event instead (NDJSON). Ctrl-C ends the watch.

` + exitCodesHelp,
		Example: watchExample,
		Args:    requireResourceType(streams.ErrOut, "watch"),
		RunE:    runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.addFleetFlags(f, o.ConfigFlags)
	o.addScopeFlags(f)
	f.StringVar(&o.Where, "where", "", "show the objects for which this CEL expression is true, and those entering and leaving that set")
	f.StringArrayVar(&o.Columns, "columns", nil, "values after each event NAME=CEL[,NAME=CEL...] (repeatable)")
	f.BoolVar(&o.Diff, "diff", false, "show the fields each update changed")
	f.StringVarP(&o.Output, "output", "o", "", "output format: json (one object per line; default: one line per event)")
	f.BoolVar(&o.Initial, "initial", true, "show the objects of the initial list as ADDED events")
	f.DurationVar(&o.ResyncPeriod, "resync-period", 0, "informer resync period, shown as RESYNC events (default 0: never)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 2*time.Minute, "give up when the initial lists have not completed within this time")
	addCostLimitFlag(f, &o.CostLimit)
	registerWatchCompletions(cmd, o)
	return cmd
}

// Complete resolves the namespace from the kubeconfig; it does not contact
// the cluster.
func (o *WatchOptions) Complete(cmd *cobra.Command, args []string) error {
	o.resources = args
	if err := emptyValueErrors(cmd.Flags(), "where"); err != nil {
		return err
	}
	if err := o.completeContexts(o.ConfigFlags); err != nil {
		return err
	}
	var err error
	o.namespace, err = namespaceOf(o.ConfigFlags, o.AllNamespaces)
	return err
}

// Validate checks the flags and compiles every expression, before any
// contact with the cluster.
func (o *WatchOptions) Validate() error {
	var errs []error
	req := watch.Request{
		Resources:     o.resources,
		Namespace:     o.namespace,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Where:         o.Where,
		Diff:          o.Diff,
		Output:        o.Output,
		SkipInitial:   !o.Initial,
		ResyncPeriod:  o.ResyncPeriod,
		SyncTimeout:   o.SyncTimeout,
	}
	errs = append(errs, scopeErrors(o.ConfigFlags, o.AllNamespaces, o.SyncTimeout)...)
	errs = append(errs, o.inputErrors(o.resources)...)
	var more []error
	req.Columns, more = parseColumns(o.Columns)
	errs = append(errs, more...)
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	env, err := indexers.NewEnv(queryEnvOptions(o.CostLimit)...)
	if err != nil {
		return err
	}
	if isTerminal(o.ErrOut) {
		req.Progress = o.ErrOut
	}
	w, err := watch.Compile(env, req)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.env, o.request, o.watcher = env, req, w
	return nil
}

// Run connects to the cluster and prints events until Ctrl-C or SIGTERM.
func (o *WatchOptions) Run(ctx context.Context) error {
	if len(o.contexts) > 0 {
		return o.runFleet(ctx)
	}
	return withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		return o.watcher.Run(ctx, conn, o.Out, o.ErrOut)
	})
}

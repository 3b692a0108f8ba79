package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/tree"
)

// TreeOptions prints an object and what it owns, down the chain of owner
// references.
type TreeOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	AllNamespaces bool
	Watch         bool
	Resources     []string
	Include       []string
	SyncTimeout   time.Duration

	request tree.Request
}

// NewTreeCommand returns the "tree" verb.
func NewTreeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "tree TYPE [NAME...] [flags]",
		Short: "Print an object and everything it owns, down the chain of owner references",
		Long: `Tree prints an object and the objects that name it in their ownerReferences,
theirs in turn, down the chain, as kubectl-tree does: NAMESPACE, NAME (KIND/NAME,
each dependent drawn under its owner), READY and REASON (those of the Ready
condition; for an object with replicas, whether status.readyReplicas reaches
spec.replicas) and AGE. The objects are read from informer caches: the
dependents of each object through an index by owner UID, never by scanning.

Without NAME, every object of TYPE is a root: those of the namespace, or of
every namespace with -A (which, as in kubectl get, takes no NAME of a namespaced
TYPE). Dependents are searched among these resources: ` +
			strings.Join(tree.DefaultResources, ", ") + `. --include adds more
(configmaps, secrets, custom resources); --resources replaces them. -w prints the
trees again whenever one of the objects changes.

` + exitCodesHelp,
		Example: `  # A Deployment, its ReplicaSets and their pods
  kubectl informer tree deployment web -n shop

  # Every StatefulSet of every namespace, with the ConfigMaps they own
  kubectl informer tree statefulsets -A --include configmaps

  # A Deployment's tree, printed again on every change
  kubectl informer tree deploy web -n shop -w`,
		Args: requireResourceType(streams.ErrOut, "tree"),
		RunE: runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every object of TYPE in every namespace is a root, even when -n names one")
	f.BoolVarP(&o.Watch, "watch", "w", false, "print the trees again after every change, until Ctrl-C")
	f.StringSliceVar(&o.Resources, "resources", nil, "the resources searched for dependents, instead of the default ones (comma-separated or repeated)")
	f.StringSliceVar(&o.Include, "include", nil, "more resources searched for dependents, such as configmaps,secrets (comma-separated or repeated)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 2*time.Minute, "give up when the caches have not synced within this time")
	registerTreeCompletions(cmd, o)
	return cmd
}

// Complete reads the arguments and the namespace.
func (o *TreeOptions) Complete(_ *cobra.Command, args []string) error {
	ns, err := namespaceOf(o.ConfigFlags, o.AllNamespaces)
	if err != nil {
		return err
	}
	o.request = tree.Request{Resource: args[0], Names: args[1:], Namespace: ns, Resources: o.Resources, Include: o.Include, Watch: o.Watch, SyncTimeout: o.SyncTimeout}
	return nil
}

// Validate checks the arguments without contacting the cluster.
func (o *TreeOptions) Validate() error {
	var errs []error
	if strings.Trim(o.request.Resource, ", \t") == "" || strings.Contains(o.request.Resource, ",") {
		errs = append(errs, fmt.Errorf("resource argument %q: name one resource type, such as deployments", o.request.Resource))
	}
	if o.SyncTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--sync-timeout must be positive, got %s", o.SyncTimeout))
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// Run prints the trees.
func (o *TreeOptions) Run(ctx context.Context) error {
	return withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		return tree.Run(ctx, conn, o.request, o.Out)
	})
}

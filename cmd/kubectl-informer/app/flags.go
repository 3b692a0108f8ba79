package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// namespaceOf returns the namespace a command works in: "" with -A, else
// -n or the kubeconfig context's namespace. It reads the kubeconfig only.
func namespaceOf(flags *genericclioptions.ConfigFlags, all bool) (string, error) {
	if all {
		return "", nil
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// scopeErrors checks --sync-timeout. -A with -n is no mistake: as with
// kubectl get, -A wins (see namespaceOf).
func scopeErrors(_ *genericclioptions.ConfigFlags, _ bool, syncTimeout time.Duration) []error {
	var errs []error
	if syncTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--sync-timeout must be positive, got %s", syncTimeout))
	}
	return errs
}

// parseIndexes parses --index NAME=CEL values.
func parseIndexes(values []string) ([]query.NamedExpr, []error) {
	var out []query.NamedExpr
	var errs []error
	for _, s := range values {
		name, expr, err := splitNamed(s, "--index", "NAME=CEL")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, query.NamedExpr{Name: name, Expr: expr})
	}
	return out, errs
}

// parseColumns parses --columns NAME=CEL[,NAME=CEL…] values.
func parseColumns(values []string) ([]query.NamedExpr, []error) {
	var out []query.NamedExpr
	var errs []error
	for _, s := range values {
		for _, part := range query.SplitColumns(s) {
			name, expr, err := splitNamed(part, "--columns", "NAME=CEL")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, query.NamedExpr{Name: name, Expr: expr})
		}
	}
	return out, errs
}

// scopeFlags say what the informers of query, watch and indexes list and
// watch; embedded in their Options.
type scopeFlags struct {
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
}

// addScopeFlags registers -A, -l and --field-selector.
func (s *scopeFlags) addScopeFlags(f *pflag.FlagSet) {
	f.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "every namespace, even when -n names one, as with kubectl get (default: the kubeconfig context's namespace)")
	f.StringVarP(&s.LabelSelector, "selector", "l", "", "label selector sent to the server, e.g. app=web,tier!=db")
	f.StringVar(&s.FieldSelector, "field-selector", "", "field selector sent to the server, e.g. spec.nodeName=node-001")
}

// options is a command's Options: Complete resolves, Validate checks
// without contacting the cluster, Run does the work.
type options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the RunE of a command with options o: Complete → Validate → Run.
func runE(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

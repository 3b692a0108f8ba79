package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// namespaceOf returns the namespace a command works in: "" with -A, else
// -n or the kubeconfig context's namespace. It reads the kubeconfig only.
// Several contexts (--context a,b) are a mistake here: query, watch and indexes,
// which answer over several clusters, read them first (completeContexts).
func namespaceOf(flags *genericclioptions.ConfigFlags, all bool) (string, error) {
	if err := oneContext(flags); err != nil {
		return "", err
	}
	if all {
		return "", nil
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// oneContext refuses --context naming several contexts, for the verbs
// that read one cluster.
func oneContext(flags *genericclioptions.ConfigFlags) error {
	if flags != nil && flags.Context != nil && strings.Contains(*flags.Context, ",") {
		return &UsageError{Err: fmt.Errorf("--context %q names several contexts: only query, watch, indexes and serve read several clusters; give one context", *flags.Context)}
	}
	return nil
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

// inputErrors checks what scopeFlags and the resource arguments hold
// without contacting the cluster: an argument that names no resource
// type, and selectors that do not parse.
func (s *scopeFlags) inputErrors(resources []string) []error {
	var errs []error
	for _, arg := range resources {
		if strings.Trim(arg, ", \t") == "" {
			errs = append(errs, fmt.Errorf("resource argument %q names no resource type: name one, such as pods", arg))
		}
	}
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		errs = append(errs, fmt.Errorf("-l/--selector %q: %w", s.LabelSelector, err))
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		errs = append(errs, fmt.Errorf("--field-selector %q: %w", s.FieldSelector, err))
	}
	return errs
}

// emptyValueErrors reports the expression flags among names that were
// given an empty value: an empty expression is a mistake, not "none".
func emptyValueErrors(fs *pflag.FlagSet, names ...string) error {
	var errs []error
	for _, name := range names {
		if f := fs.Lookup(name); f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			errs = append(errs, fmt.Errorf("--%s is empty: give it a CEL expression, or leave the flag out", name))
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// parseIndexes parses --index [RESOURCE:]NAME=CEL values into one list,
// those for one resource after those for every resource, for what needs
// only their names and expressions.
func parseIndexes(values []string) ([]plan.NamedExpr, []error) {
	every, byResource, errs := parseIndexFlags(values)
	for _, res := range slices.Sorted(maps.Keys(byResource)) {
		every = append(every, byResource[res]...)
	}
	return every, errs
}

// parseIndexFlags parses --index values: NAME=CEL defines an index of every
// queried resource, RESOURCE:NAME=CEL one of that resource only (as
// written, "pods" or "deploy"), returned by resource.
func parseIndexFlags(values []string) (every []plan.NamedExpr, byResource map[string][]plan.NamedExpr, errs []error) {
	for _, s := range values {
		name, expr, err := splitNamed(s, "--index", "[RESOURCE:]NAME=CEL")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res, ixName, qualified := strings.Cut(name, ":")
		if !qualified {
			every = append(every, plan.NamedExpr{Name: name, Expr: expr})
			continue
		}
		res, ixName = strings.TrimSpace(res), strings.TrimSpace(ixName)
		if res == "" || ixName == "" || strings.Contains(ixName, ":") {
			errs = append(errs, fmt.Errorf("--index %q: want [RESOURCE:]NAME=CEL, such as pods:byNode=object.spec.nodeName", s))
			continue
		}
		if byResource == nil {
			byResource = map[string][]plan.NamedExpr{}
		}
		byResource[res] = append(byResource[res], plan.NamedExpr{Name: ixName, Expr: expr})
	}
	return every, byResource, errs
}

// parseColumns parses --columns NAME=CEL[,NAME=CEL…] values.
func parseColumns(values []string) ([]plan.NamedExpr, []error) {
	var out []plan.NamedExpr
	var errs []error
	for _, s := range values {
		for _, part := range plan.SplitColumns(s) {
			name, expr, err := splitNamed(part, "--columns", "NAME=CEL")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, plan.NamedExpr{Name: name, Expr: expr})
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

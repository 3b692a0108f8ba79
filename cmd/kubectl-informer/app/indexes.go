package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// IndexesOptions lists the known indexes and, against a cluster, how many
// distinct values each holds.
type IndexesOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	scopeFlags
	Indexes     []string
	ConfigFile  string
	SyncTimeout time.Duration
	CostLimit   uint64
	// Output is "" (a table), "json" or "yaml".
	Output string
	fleetFlags

	resources []string
	namespace string
	config    *plan.Config
	plan      *plan.Plan
}

// NewIndexesCommand returns the "indexes" verb.
func NewIndexesCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &IndexesOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "indexes [RESOURCE[,RESOURCE...]] [flags]",
		Short: "List the known indexes; with resources, count the distinct values of each",
		Long: `Without resources, indexes lists the indexes of the config file (--config, or
$XDG_CONFIG_HOME/kubectl-informer/config.yaml) without contacting the cluster.
With resources, it fills their caches and prints each index they have — the
built-in namespace index, the config's and those given with --index — with the
number of distinct values it holds.

` + exitCodesHelp,
		Example: `  # The indexes of the config file
  kubectl informer indexes

  # How selective each index of pods is
  kubectl informer indexes pods -A --index byNode=object.spec.nodeName`,
		RunE: runE(o),
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.addFleetFlags(f, o.ConfigFlags)
	o.addScopeFlags(f)
	f.StringArrayVar(&o.Indexes, "index", nil, "also register an index NAME=CEL on every resource, or RESOURCE:NAME=CEL on one (repeatable)")
	f.StringVar(&o.ConfigFile, "config", "", "config file (default: "+configDefaultHelp()+" when present)")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", 2*time.Minute, "give up when the caches have not synced within this time")
	f.StringVarP(&o.Output, "output", "o", "", `output format: "" (a table), "json" or "yaml"`)
	addCostLimitFlag(f, &o.CostLimit)
	fixed(cmd, "output", "json", "yaml")
	registerIndexesCompletions(cmd, o)
	return cmd
}

// Complete reads the config and the kubeconfig's namespace.
func (o *IndexesOptions) Complete(cmd *cobra.Command, args []string) error {
	o.resources = args
	cfg, err := loadConfig(o.ConfigFile)
	if err != nil {
		return err
	}
	o.config = cfg
	if cfg != nil && !cmd.Flags().Changed("sync-timeout") {
		o.SyncTimeout = cfg.SyncTimeout(o.SyncTimeout)
	}
	if err := o.completeContexts(o.ConfigFlags); err != nil {
		return err
	}
	if len(args) == 0 {
		return nil // the config's indexes only: no namespace
	}
	o.namespace, err = namespaceOf(o.ConfigFlags, o.AllNamespaces)
	return err
}

// Validate compiles every index expression.
func (o *IndexesOptions) Validate() error {
	req := plan.Request{
		Resources:       o.resources,
		Namespace:       o.namespace,
		LabelSelector:   o.LabelSelector,
		FieldSelector:   o.FieldSelector,
		SyncTimeout:     o.SyncTimeout,
		ResourceIndexes: o.config.ResourceIndexes(),
		ConfigPath:      o.config.Path(),
		ConfigLine:      o.config.IndexLine,
	}
	errs := o.inputErrors(o.resources)
	var more []error
	req.Indexes, req.ResourceFlagIndexes, more = parseIndexFlags(o.Indexes)
	errs = append(errs, more...)
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		errs = append(errs, fmt.Errorf("unknown output format %q: use -o json, -o yaml or omit -o", o.Output))
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	plan, err := compilePlan(req, o.ErrOut, queryEnvOptions(o.CostLimit)...)
	o.plan = plan
	return err
}

// indexRow is one index as -o json and -o yaml print it.
type indexRow struct {
	// Cluster is the context of the cluster counted, over several.
	Cluster string `json:"cluster,omitempty"`
	// Resource is the resource the index is defined for; empty for an
	// --index without resources, which applies to those queried.
	Resource string `json:"resource,omitempty"`
	Index    string `json:"index"`
	// Expression is empty for the built-in namespace index.
	Expression string `json:"expression,omitempty"`
	BuiltIn    bool   `json:"builtIn,omitempty"`
	// Values is the number of distinct values, when resources were given.
	Values *int `json:"values,omitempty"`
}

// Run prints the indexes.
func (o *IndexesOptions) Run(ctx context.Context) error {
	var rows []indexRow
	if len(o.resources) == 0 {
		if o.config == nil && len(o.Indexes) == 0 {
			_, _ = fmt.Fprintf(o.ErrOut, "No indexes: no config file at %s; define indexes with --index NAME=CEL or in a config (see --help)\n", plan.DefaultConfigPath())
			if o.Output != "" {
				return o.print(nil, false)
			}
			return nil
		}
		byRes := o.config.ResourceIndexes()
		resources := make([]string, 0, len(byRes))
		for res := range byRes {
			resources = append(resources, res)
		}
		sort.Strings(resources)
		for _, res := range resources {
			for _, ix := range byRes[res] {
				rows = append(rows, indexRow{Resource: res, Index: ix.Name, Expression: ix.Expr})
			}
		}
		every, flagRes, _ := parseIndexFlags(o.Indexes)
		for _, res := range slices.Sorted(maps.Keys(flagRes)) {
			for _, ix := range flagRes[res] {
				rows = append(rows, indexRow{Resource: res, Index: ix.Name, Expression: ix.Expr})
			}
		}
		for _, ix := range every {
			rows = append(rows, indexRow{Index: ix.Name, Expression: ix.Expr})
		}
		return o.print(rows, false)
	}
	if len(o.contexts) > 0 {
		return o.runFleet(ctx)
	}
	var infos []plan.IndexInfo
	err := withCluster(ctx, o.ConfigFlags, func(ctx context.Context, conn plan.Conn) error {
		var err error
		infos, err = o.plan.DescribeIndexes(ctx, conn, o.ErrOut)
		return err
	})
	if err != nil {
		return err
	}
	for _, in := range infos {
		rows = append(rows, indexRow{Resource: in.Resource, Index: in.Index, Expression: in.Expr, BuiltIn: in.Expr == "", Values: &in.Values})
	}
	return o.print(rows, true)
}

// print writes rows in the -o format: a table has a VALUES column when
// counted, -o json a list, -o yaml the same list as YAML.
func (o *IndexesOptions) print(rows []indexRow, counted bool) error {
	switch o.Output {
	case "json", "yaml":
		if rows == nil {
			rows = []indexRow{}
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		if o.Output == "yaml" {
			if b, err = yaml.JSONToYAML(b); err != nil {
				return err
			}
			_, err = o.Out.Write(b)
			return err
		}
		_, err = fmt.Fprintln(o.Out, string(b))
		return err
	}
	w := printers.GetNewTabWriter(o.Out)
	clusters := len(rows) > 0 && rows[0].Cluster != ""
	if clusters {
		_, _ = fmt.Fprint(w, "CLUSTER\t")
	}
	if counted {
		_, _ = fmt.Fprintln(w, "RESOURCE\tINDEX\tVALUES\tEXPRESSION")
	} else {
		_, _ = fmt.Fprintln(w, "RESOURCE\tINDEX\tEXPRESSION")
	}
	for _, r := range rows {
		if clusters {
			_, _ = fmt.Fprintf(w, "%s\t", r.Cluster)
		}
		res, expr := r.Resource, r.Expression
		if res == "" {
			res = "<queried>"
		}
		if r.BuiltIn {
			expr = "<built-in>"
		}
		if counted {
			_, _ = fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", res, r.Index, *r.Values, expr)
		} else {
			_, _ = fmt.Fprintf(w, "%s\t%s\t%s\n", res, r.Index, expr)
		}
	}
	return w.Flush()
}

package app

import (
	"errors"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// kubectlFlags are the flags that the kubectl commands suggested in
// messages carry, so that they ask about the cluster and the user the
// command used: --kubeconfig and the other kubeconfig flags as given, and
// --context, given or the kubeconfig's current one.
func kubectlFlags(flags *genericclioptions.ConfigFlags) []string {
	var out []string
	add := func(name string, value *string) {
		if value != nil && *value != "" {
			out = append(out, name, *value)
		}
	}
	add("--kubeconfig", flags.KubeConfig)
	context := ""
	if flags.Context != nil {
		context = *flags.Context
	}
	if context == "" {
		if raw, err := flags.ToRawKubeConfigLoader().RawConfig(); err == nil {
			context = raw.CurrentContext
		}
	}
	add("--context", &context)
	add("--cluster", flags.ClusterName)
	add("--user", flags.AuthInfoName)
	add("--as", flags.Impersonate)
	if flags.ImpersonateGroup != nil {
		for _, g := range *flags.ImpersonateGroup {
			out = append(out, "--as-group", g)
		}
	}
	add("--as-uid", flags.ImpersonateUID)
	return out
}

// impersonationHint returns err, an error of the API server refusing --as
// or --as-group, with what to do about it; nil for other errors.
func impersonationHint(err error) error {
	var fe *factory.ForbiddenError
	if !factory.IsImpersonationDenied(err) || errors.As(err, &fe) {
		return nil // a ForbiddenError says it already
	}
	return fmt.Errorf("%w\n%s", err, factory.ImpersonationHint)
}

// countErrors refuses the printing flags that a count cannot honour.
func countErrors(o *QueryOptions) []error {
	if (o.Count || o.GroupBy != "") && (o.ShowLabels || len(o.LabelColumns) > 0) {
		return []error{errors.New("--show-labels and -L cannot be combined with --count or --group-by: counts have no labels to show")}
	}
	return nil
}

package app

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// kubectlFlags are the flags that the kubectl commands suggested in
// messages carry, so that they ask about the cluster and the user the
// command used: --kubeconfig and the other kubeconfig flags as given,
// --context, given or the kubeconfig's current one, the server and TLS
// flags, --as, --as-group and --as-uid, and --token as TokenPlaceholder.
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
	add("--server", flags.APIServer)
	add("--tls-server-name", flags.TLSServerName)
	add("--certificate-authority", flags.CAFile)
	if flags.Insecure != nil && *flags.Insecure {
		out = append(out, "--insecure-skip-tls-verify")
	}
	add("--client-certificate", flags.CertFile)
	add("--client-key", flags.KeyFile)
	if flags.BearerToken != nil && *flags.BearerToken != "" {
		// The token is a secret: never printed, the command names it
		// by a shell variable the user sets to the token given.
		out = append(out, "--token", factory.TokenPlaceholder)
	}
	return append(out, impersonation(flags)...)
}

// impersonationHint returns err, an error of the API server refusing --as
// or --as-group, with what to do about it; nil for other errors. The
// refusal is named as such when the message says so, and otherwise (a
// discovery request refused with no message) when a request made while
// impersonating was forbidden before any list could be.
func impersonationHint(flags *genericclioptions.ConfigFlags, err error) error {
	var fe *factory.ForbiddenError
	switch {
	case err == nil:
		return nil
	case factory.IsImpersonationDenied(err):
		return fmt.Errorf("%w\n%s", err, ImpersonationHint)
	case errors.As(err, &fe):
		return nil // a ForbiddenError says what to do already
	case apierrors.IsForbidden(err) && impersonating(flags):
		return fmt.Errorf("%w (403 Forbidden, with %s)\n%s", err, factory.ShellJoin(impersonation(flags)), ImpersonationHint)
	}
	return nil
}

// ImpersonationHint says what to do when the API server refused --as.
const ImpersonationHint = "the API server refused to act as the user of --as/--as-group: yours lacks the impersonate verb on users, groups or serviceaccounts " +
	"(check with kubectl auth can-i impersonate users); drop --as or ask for that permission"

// impersonating reports whether --as or --as-group is given.
func impersonating(flags *genericclioptions.ConfigFlags) bool {
	return len(impersonation(flags)) > 0
}

// impersonation returns the --as, --as-group and --as-uid flags given.
func impersonation(flags *genericclioptions.ConfigFlags) []string {
	var out []string
	if flags.Impersonate != nil && *flags.Impersonate != "" {
		out = append(out, "--as", *flags.Impersonate)
	}
	if flags.ImpersonateGroup != nil {
		for _, g := range *flags.ImpersonateGroup {
			out = append(out, "--as-group", g)
		}
	}
	if flags.ImpersonateUID != nil && *flags.ImpersonateUID != "" {
		out = append(out, "--as-uid", *flags.ImpersonateUID)
	}
	return out
}

// countErrors refuses the printing flags that a count cannot honour.
func countErrors(o *QueryOptions) []error {
	if (o.Count || len(o.GroupBy) > 0 || len(o.Aggregates) > 0) && (o.ShowLabels || len(o.LabelColumns) > 0) {
		return []error{errors.New("--show-labels and -L cannot be combined with --count, --group-by or --aggregate: counts have no labels to show")}
	}
	if (o.Count || len(o.GroupBy) > 0 || len(o.Aggregates) > 0) && len(o.IndexColumns) > 0 {
		return []error{errors.New("--index-columns cannot be combined with --count, --group-by or --aggregate: counts have no objects to show index values of")}
	}
	return nil
}

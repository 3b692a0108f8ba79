package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// completionTimeout bounds everything a completion asks the cluster: a Tab
// press never waits longer, and what does not answer in time completes
// nothing.
var completionTimeout = 5 * time.Second

// shells are the shells completion writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

const completionLong = `Completion prints a script that makes your shell complete kubectl-informer:
verbs, flags, resource types (plural and short names, from the cluster's
discovery; after a comma, the next type of a list, without descriptions,
which bash could not match), the names of objects after a type of query
(as kubectl completes those of get), namespaces for -n,
kubeconfig contexts, output formats, index names for --by (from --index and
the config file) and YAML files for --config.

kubectl completes "kubectl informer ..." itself (kubectl 1.26 and later): it
runs the executable kubectl_complete-informer from PATH, which asks
kubectl-informer. The release archives ship it next to kubectl-informer.
With kubectl's own completion loaded and kubectl_complete-informer on PATH,
"kubectl informer <Tab>" completes as "kubectl-informer <Tab>" does.

What completion asks the cluster is given up after 5 seconds; it then
completes nothing.`

const completionExample = `  # bash (needs the bash-completion package)
  source <(kubectl-informer completion bash)

  # zsh
  source <(kubectl-informer completion zsh)

  # fish
  kubectl-informer completion fish | source

  # PowerShell
  kubectl-informer completion powershell | Out-String | Invoke-Expression

  # "kubectl informer <Tab>": kubectl's completion and the helper on PATH
  source <(kubectl completion bash)
  printf '#!/bin/sh\nexec kubectl-informer __complete "$@"\n' > ~/.local/bin/kubectl_complete-informer
  chmod +x ~/.local/bin/kubectl_complete-informer`

// CompletionOptions prints the completion script of a shell.
type CompletionOptions struct {
	genericiooptions.IOStreams
	NoDescriptions bool

	shell string
	root  *cobra.Command
}

// NewCompletionCommand returns the "completion" verb.
func NewCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &CompletionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "completion bash|zsh|fish|powershell",
		Short:   "Print the shell completion script of kubectl-informer",
		Long:    completionLong,
		Example: completionExample,
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return shells, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: runE(o),
	}
	cmd.Flags().BoolVar(&o.NoDescriptions, "no-descriptions", false, "complete without the descriptions of the choices")
	return cmd
}

// Complete takes the shell and the command tree to describe.
func (o *CompletionOptions) Complete(cmd *cobra.Command, args []string) error {
	o.shell = args[0]
	o.root = cmd.Root()
	return nil
}

// Validate checks the shell.
func (o *CompletionOptions) Validate() error {
	if !slices.Contains(shells, o.shell) {
		return usageErrorf("unknown shell %q: want one of %s", o.shell, strings.Join(shells, ", "))
	}
	return nil
}

// Run writes the script with cobra's generators.
func (o *CompletionOptions) Run(context.Context) error {
	desc := !o.NoDescriptions
	switch o.shell {
	case "bash":
		return o.root.GenBashCompletionV2(o.Out, desc)
	case "zsh":
		if desc {
			return o.root.GenZshCompletion(o.Out)
		}
		return o.root.GenZshCompletionNoDesc(o.Out)
	case "fish":
		return o.root.GenFishCompletion(o.Out, desc)
	default:
		if desc {
			return o.root.GenPowerShellCompletionWithDesc(o.Out)
		}
		return o.root.GenPowerShellCompletion(o.Out)
	}
}

// mustRegister registers the completion of a flag the command has.
func mustRegister(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic(fmt.Sprintf("completion of --%s: %v", flag, err))
	}
}

// noFiles makes the flags complete nothing: their values are expressions,
// numbers or durations, never files.
func noFiles(cmd *cobra.Command, flags ...string) {
	for _, f := range flags {
		mustRegister(cmd, f, cobra.NoFileCompletions)
	}
}

// fixed completes a flag with choices.
func fixed(cmd *cobra.Command, flag string, choices ...string) {
	mustRegister(cmd, flag, cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp))
}

// yamlFiles completes a flag with YAML files.
func yamlFiles(cmd *cobra.Command, flags ...string) {
	for _, f := range flags {
		mustRegister(cmd, f, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
		})
	}
}

// registerClusterCompletions completes kubectl's connection flags: -n with
// the cluster's namespaces, --context, --cluster and --user with the
// kubeconfig's entries; and the positional arguments with resource types
// when resources is set.
func registerClusterCompletions(cmd *cobra.Command, flags *genericclioptions.ConfigFlags, resources bool) {
	mustRegister(cmd, "namespace", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNamespaces(flags, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	fromKubeconfig := func(names func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cfg, err := flags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return withPrefix(names(&cfg), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	contexts := fromKubeconfig(func(c *clientcmdapi.Config) []string { return keysOf(c.Contexts) })
	if f := cmd.Flags().Lookup("context"); f != nil {
		if _, several := f.Value.(contextsFlag); several {
			contexts = listCompletion(contexts)
		}
	}
	mustRegister(cmd, "context", contexts)
	mustRegister(cmd, "cluster", fromKubeconfig(func(c *clientcmdapi.Config) []string { return keysOf(c.Clusters) }))
	mustRegister(cmd, "user", fromKubeconfig(func(c *clientcmdapi.Config) []string { return keysOf(c.AuthInfos) }))
	if resources {
		cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeResources(flags, args, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	} else {
		cmd.ValidArgsFunction = cobra.NoFileCompletions
	}
}

// listCompletion completes the last item of a comma-separated list with
// complete, keeping the items before it and leaving out those already
// listed: "east,we" completes to "east,west".
func listCompletion(complete cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndex(toComplete, ",")
		head, last := toComplete[:i+1], toComplete[i+1:]
		listed := strings.Split(head, ",")
		names, directive := complete(cmd, args, last)
		var out []cobra.Completion
		for _, n := range names {
			if !slices.Contains(listed, n) {
				out = append(out, head+n)
			}
		}
		return out, directive
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// withPrefix returns the names starting with prefix, sorted.
func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// fromCluster runs ask with a context and REST requests bounded by
// completionTimeout. It returns false when ask fails or runs out of time
// (an exec credential plugin or a proxy can block beyond any request
// timeout: the answer is then abandoned).
//
// A --context of several contexts (query's) asks the first: cobra parses
// the flags of a completion twice, so that one --context given also reads
// as a list of itself twice.
func fromCluster[T any](flags *genericclioptions.ConfigFlags, ask func(context.Context) (T, error)) (T, bool) {
	if flags.Context != nil {
		first, _, _ := strings.Cut(*flags.Context, ",")
		*flags.Context = strings.TrimSpace(first)
	}
	limit := completionTimeout
	wrap := flags.WrapConfigFn
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		if c.Timeout == 0 || c.Timeout > limit {
			c.Timeout = limit
		}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := ask(ctx)
		done <- answer{v, err}
	}()
	var zero T
	select {
	case a := <-done:
		if a.err != nil {
			return zero, false
		}
		return a.v, true
	case <-ctx.Done():
		return zero, false
	}
}

// completeNamespaces returns the cluster's namespaces starting with toComplete.
func completeNamespaces(flags *genericclioptions.ConfigFlags, toComplete string) []string {
	names, _ := fromCluster(flags, func(ctx context.Context) ([]string, error) {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var names []string
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return names, nil
	})
	return withPrefix(names, toComplete)
}

// completeResources completes a resource argument: the last element of a
// comma-separated list, keeping the elements before it, with the types of
// the cluster an informer can list and watch. Types already named are left
// out.
func completeResources(flags *genericclioptions.ConfigFlags, args []string, toComplete string) []cobra.Completion {
	lists, ok := resourceLists(flags)
	if !ok {
		return nil
	}
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	named := sets.New[string]()
	for _, a := range append(slices.Clone(args), prefix) {
		for _, n := range strings.Split(a, ",") {
			named.Insert(strings.TrimSpace(n))
		}
	}
	return resourceCompletions(lists, prefix, last, named)
}

// resourceLists returns the cluster's preferred resources, from
// discovery; false when they cannot be read.
func resourceLists(flags *genericclioptions.ConfigFlags) ([]*metav1.APIResourceList, bool) {
	return fromCluster(flags, func(context.Context) ([]*metav1.APIResourceList, error) {
		r, err := factory.NewResolverFor(flags)
		if err != nil {
			return nil, err
		}
		lists, err := r.Discovery().ServerPreferredResources()
		if err != nil && (len(lists) == 0 || !discovery.IsGroupDiscoveryFailedError(err)) {
			return nil, err
		}
		return lists, nil
	})
}

// typeSlashCompletions returns the resource types that list and watch, as
// kubectl completes them before a name: plural, or plural.group outside
// the core group, each followed by a slash; those of the core group first,
// then group after group, in the order of their names.
func typeSlashCompletions(lists []*metav1.APIResourceList, toComplete string) []cobra.Completion {
	type entry struct{ group, name string }
	var entries []entry
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !cacheable(r) {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			if strings.HasPrefix(name, toComplete) {
				entries = append(entries, entry{gv.Group, name})
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].group != entries[j].group {
			return entries[i].group < entries[j].group
		}
		return entries[i].name < entries[j].name
	})
	out := make([]cobra.Completion, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.name+"/")
	}
	return out
}

// cacheable reports whether r is a resource an informer can cache: not a
// subresource, and served with list and watch.
func cacheable(r metav1.APIResource) bool {
	return !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
}

// resourceCompletions returns, for each resource of lists that supports
// list and watch, its plural name, plural.group and short names that start
// with toComplete and are not in named, each after prefix and described by
// its kind and version.
//
// After a comma (a prefix), the choices have no descriptions: bash 5.2's
// printf %q escapes the comma, and cobra's bash script (kubectl's too)
// compares a choice that has a description, escaped, with the word as
// typed, so "po\,deployments" never matches "po,de" and nothing would be
// offered. Choices without descriptions go through compgen, which matches
// them unescaped.
func resourceCompletions(lists []*metav1.APIResourceList, prefix, toComplete string, named sets.Set[string]) []cobra.Completion {
	seen := sets.New[string]()
	var out []cobra.Completion
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !cacheable(r) {
				continue
			}
			names := []string{r.Name}
			if gv.Group != "" {
				names = append(names, r.Name+"."+gv.Group)
			}
			names = append(names, r.ShortNames...)
			desc := fmt.Sprintf("%s (%s)", r.Kind, gv)
			for _, n := range names {
				if seen.Has(n) || named.Has(n) || !strings.HasPrefix(n, toComplete) {
					continue
				}
				seen.Insert(n)
				if prefix != "" {
					out = append(out, prefix+n)
					continue
				}
				out = append(out, cobra.CompletionWithDesc(n, desc))
			}
		}
	}
	sort.Strings(out)
	return out
}

// completeIndexNames completes --by with the indexes a query of the
// resources args can use: the built-in namespace index, the config's
// indexes of those resources and the --index flags given, each as "NAME=".
// The config's resources are matched to args by name, or through the
// cluster's discovery when the names differ ("po" and "pods").
func completeIndexNames(flags *genericclioptions.ConfigFlags, configFile string, indexes, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	desc := map[string]string{"namespace": "built in"}
	if cfg, err := loadConfig(configFile); err == nil && cfg != nil {
		byRes := cfg.ResourceIndexes()
		for res := range queried(flags, keysOf(byRes), args) {
			for _, ix := range byRes[res] {
				desc[ix.Name] = ix.Expr
			}
		}
	}
	// An --index wins over the config's index of the same name.
	parsed, _ := parseIndexes(indexes)
	for _, ix := range parsed {
		desc[ix.Name] = ix.Expr
	}
	var out []cobra.Completion
	for _, name := range withPrefix(keysOf(desc), toComplete) {
		out = append(out, cobra.CompletionWithDesc(name+"=", desc[name]))
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeIndexColumns completes the last name of --index-columns's
// comma-separated list with the indexes completeIndexNames offers --by,
// without "=".
func completeIndexColumns(flags *genericclioptions.ConfigFlags, configFile string, indexes, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	names, _ := completeIndexNames(flags, configFile, indexes, args, last)
	for i, c := range names {
		name, desc, _ := strings.Cut(c, "\t")
		names[i] = cobra.CompletionWithDesc(done+strings.TrimSuffix(name, "="), desc)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// queried returns the resources of the config that are among args: by
// name, or as the same resource type on the cluster. Without args yet,
// every resource is.
func queried(flags *genericclioptions.ConfigFlags, resources, args []string) sets.Set[string] {
	var names []string
	for _, a := range args {
		for _, n := range strings.Split(a, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	out := sets.New[string]()
	var others []string
	for _, res := range resources {
		if len(names) == 0 || slices.Contains(names, res) {
			out.Insert(res)
		} else {
			others = append(others, res)
		}
	}
	if len(others) == 0 {
		return out
	}
	same, _ := fromCluster(flags, func(context.Context) ([]string, error) {
		r, err := factory.NewResolverFor(flags)
		if err != nil {
			return nil, err
		}
		gvrs := sets.New[schema.GroupVersionResource]()
		for _, n := range names {
			got, err := r.Resolve([]string{n})
			if err != nil {
				continue
			}
			for _, g := range got {
				gvrs.Insert(g.GVR)
			}
		}
		var same []string
		for _, res := range others {
			got, err := r.Resolve([]string{res})
			if err == nil && slices.ContainsFunc(got, func(g factory.Resource) bool { return gvrs.Has(g.GVR) }) {
				same = append(same, res)
			}
		}
		return same, nil
	})
	for _, res := range same {
		out.Insert(res)
	}
	return out
}

// completeQueryArgs completes the arguments of query as kubectl get's
// are: the first with resource types; after a type, the names of its
// objects (those already given left out); after TYPE/, the names of that
// type's objects, and after a TYPE/NAME argument, the types, each with a
// slash. Names are read from the cluster in the namespace of -n or of the
// kubeconfig's context, as kubectl reads them.
func completeQueryArgs(flags *genericclioptions.ConfigFlags, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	directive := cobra.ShellCompDirectiveNoFileComp
	switch typ, prefix, slash := strings.Cut(toComplete, "/"); {
	case len(args) > 0 && !strings.Contains(args[0], "/"):
		var out []cobra.Completion
		for _, n := range completeObjectNames(flags, args[0], toComplete) {
			if !slices.Contains(args[1:], n) {
				out = append(out, n)
			}
		}
		return out, directive
	case slash:
		var out []cobra.Completion
		for _, n := range completeObjectNames(flags, typ, prefix) {
			out = append(out, typ+"/"+n)
		}
		return out, directive
	case len(args) == 0:
		return completeResources(flags, args, toComplete), directive
	default:
		lists, ok := resourceLists(flags)
		if !ok {
			return nil, directive
		}
		return typeSlashCompletions(lists, toComplete), directive | cobra.ShellCompDirectiveNoSpace
	}
}

// completeObjectNames returns the names of the objects of the resource
// types typ (a comma-separated list) that start with prefix, type after
// type in the order the API server lists them; a namespaced type's are
// those of the namespace of -n or of the kubeconfig's context.
func completeObjectNames(flags *genericclioptions.ConfigFlags, typ, prefix string) []string {
	names, _ := fromCluster(flags, func(ctx context.Context) ([]string, error) {
		r, err := factory.NewResolverFor(flags)
		if err != nil {
			return nil, err
		}
		resources, err := r.Resolve([]string{typ})
		if err != nil {
			return nil, err
		}
		ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, err
		}
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, res := range resources {
			var lister metadata.ResourceInterface = client.Resource(res.GVR)
			if res.Namespaced {
				lister = client.Resource(res.GVR).Namespace(ns)
			}
			list, err := lister.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for _, item := range list.Items {
				if strings.HasPrefix(item.Name, prefix) {
					names = append(names, item.Name)
				}
			}
		}
		return names, nil
	})
	return names
}

// registerQueryCompletions completes the arguments and flags of query.
func registerQueryCompletions(cmd *cobra.Command, o *QueryOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, true)
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeQueryArgs(o.ConfigFlags, args, toComplete)
	}
	mustRegister(cmd, "by", func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeIndexNames(o.ConfigFlags, o.ConfigFile, o.Indexes, args, toComplete)
	})
	mustRegister(cmd, "index-columns", func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeIndexColumns(o.ConfigFlags, o.ConfigFile, o.Indexes, args, toComplete)
	})
	fixed(cmd, "output", query.AllowedFormats()...)
	yamlFiles(cmd, "config")
	noFiles(cmd, "index", "where", "columns", "sort-by", "group-by", "aggregate", "limit", "sync-timeout",
		"label-columns", "selector", "field-selector", "server", "query-server", "server-clusters", "context-selector")
}

// registerServeCompletions completes the flags of serve.
func registerServeCompletions(cmd *cobra.Command, o *ServeOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, true)
	// The home cluster is one of the kubeconfig's contexts.
	if contexts, ok := cmd.GetFlagCompletionFunc("context"); ok {
		mustRegister(cmd, "home-context", func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			// --context completes lists; the home is one name.
			names, directive := contexts(c, args, "")
			return withPrefix(names, toComplete), directive
		})
	}
	yamlFiles(cmd, "config")
	fixed(cmd, "log.format", "logfmt", "json")
	noFiles(cmd, "index", "sync-timeout", "selector", "field-selector", "listen-address", "tls-san",
		"max-inflight-per-user", "max-cost-per-request", "max-request-duration",
		"authentication-cache-ttl", "authorization-cache-ttl", "authorization-deny-cache-ttl", "authorization-qps",
		"read-header-timeout", "read-timeout", "write-timeout", "idle-timeout", "v", "context-selector")
}

// registerWatchCompletions completes the flags of watch.
func registerWatchCompletions(cmd *cobra.Command, o *WatchOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, true)
	fixed(cmd, "output", "json")
	noFiles(cmd, "where", "columns", "resync-period", "sync-timeout", "selector", "field-selector")
}

// registerIndexesCompletions completes the flags of indexes.
func registerIndexesCompletions(cmd *cobra.Command, o *IndexesOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, true)
	yamlFiles(cmd, "config")
	noFiles(cmd, "index", "sync-timeout", "selector", "field-selector")
}

// registerExportCompletions completes the flags of export.
func registerExportCompletions(cmd *cobra.Command, o *ExportOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, false)
	yamlFiles(cmd, "config", "web.config.file")
	fixed(cmd, "log.format", "logfmt", "json")
	noFiles(cmd, "web.listen-address", "shard", "total-shards", "max-series-per-metric", "v",
		"metric-allowlist", "metric-denylist", "metric-opt-in-list", "metric-labels-allowlist", "metric-annotations-allowlist", "host", "port")
	fixed(cmd, "profile", profiles.Names()...)
	mustRegister(cmd, "resources", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// After a comma, the resources before it stay as typed.
		done, _ := cutLast(toComplete, ",")
		var out []cobra.Completion
		files, _ := profiles.Files(profiles.KubeStateMetrics)
		for _, f := range files {
			out = append(out, done+f.Resource)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	for _, flag := range []string{"namespaces", "namespaces-denylist"} {
		mustRegister(cmd, flag, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			done, last := cutLast(toComplete, ",")
			var out []cobra.Completion
			for _, ns := range completeNamespaces(o.ConfigFlags, last) {
				out = append(out, done+ns)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// cutLast splits s after its last sep: what is before (sep included) and
// the rest.
func cutLast(s, sep string) (string, string) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", s
	}
	return s[:i+len(sep)], s[i+len(sep):]
}

// registerTreeCompletions completes the arguments and flags of tree: TYPE,
// then the names of its objects.
func registerTreeCompletions(cmd *cobra.Command, o *TreeOptions) {
	registerClusterCompletions(cmd, o.ConfigFlags, true)
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return completeResources(o.ConfigFlags, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range completeObjectNames(o.ConfigFlags, args[0], toComplete) {
			if !slices.Contains(args[1:], n) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	resources := func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeResources(o.ConfigFlags, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	mustRegister(cmd, "include", resources)
	mustRegister(cmd, "resources", resources)
	noFiles(cmd, "sync-timeout")
}

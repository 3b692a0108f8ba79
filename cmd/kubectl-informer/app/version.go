package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// serverVersionTimeout bounds the request for the server's version when
// --request-timeout is not given: version must answer even when the
// cluster does not.
const serverVersionTimeout = 5 * time.Second

// VersionOptions prints the version of the plugin and, as kubectl version
// does, that of the API server of the kubeconfig.
type VersionOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	// Output is "" (one line), "json" or "yaml".
	Output string
	// Client prints the plugin's version only, without asking the server.
	Client bool
}

// versionJSON is what version -o json prints: the plugin's version and,
// when the server answered, its version as kubectl version -o json gives
// it, else why it did not.
type versionJSON struct {
	version.Info
	ServerVersion *apiversion.Info `json:"serverVersion,omitempty"`
	ServerError   string           `json:"serverError,omitempty"`
}

// NewVersionCommand returns the "version" verb.
func NewVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, git commit and Go version, and the API server's version",
		Long: `Print the plugin's version, git commit, Go version and platform, then, as
kubectl version does, the version of the kubeconfig's API server. A server that
does not answer within --request-timeout (5s when not given) is reported on
stderr, and version still succeeds; --client does not ask it.`,
		Args: cobra.NoArgs,
		// Nothing to complete: no arguments, no files.
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(_ *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.ConfigFlags.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", `output format: "" (one line), "json" or "yaml"`)
	cmd.Flags().BoolVar(&o.Client, "client", false, "print the plugin's version only, without asking the API server")
	fixed(cmd, "output", "json", "yaml")
	registerClusterCompletions(cmd, o.ConfigFlags, false)
	return cmd
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		// kubectl version's words.
		return usageErrorf("--output must be 'yaml' or 'json'")
	}
	return nil
}

// Run prints the version information.
func (o *VersionOptions) Run() error {
	out := versionJSON{Info: version.Get()}
	var serverErr error
	if !o.Client {
		out.ServerVersion, serverErr = o.serverVersion()
		if serverErr != nil {
			out.ServerError = serverErr.Error()
			_, _ = fmt.Fprintf(o.ErrOut, "warning: the API server's version is unknown: %v\n", firstLine(serverErr))
		}
	}
	switch o.Output {
	case "json":
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.Out, string(b))
		return err
	case "yaml":
		// As kubectl version -o yaml: the JSON fields, and a blank line.
		b, err := yaml.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.Out, string(b))
		return err
	}
	if _, err := fmt.Fprintln(o.Out, out.Info); err != nil {
		return err
	}
	if out.ServerVersion != nil {
		_, err := fmt.Fprintf(o.Out, "Server Version: %s\n", out.ServerVersion.GitVersion)
		return err
	}
	return nil
}

// serverVersion asks the kubeconfig's API server for its version, within
// --request-timeout or serverVersionTimeout.
func (o *VersionOptions) serverVersion() (*apiversion.Info, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = serverVersionTimeout
	}
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return client.ServerVersion()
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

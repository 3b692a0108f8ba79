package app

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// VersionOptions prints the version of the plugin.
type VersionOptions struct {
	genericiooptions.IOStreams
	// Output is "" (one line) or "json".
	Output string
}

// NewVersionCommand returns the "version" verb.
func NewVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, git commit and Go version",
		Args:  cobra.NoArgs,
		// Nothing to complete: no arguments, no files.
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(_ *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", `output format: "" (one line) or "json"`)
	fixed(cmd, "output", "json")
	return cmd
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if o.Output != "" && o.Output != "json" {
		return usageErrorf("unknown output format %q: use -o json or omit -o", o.Output)
	}
	return nil
}

// Run prints the version information.
func (o *VersionOptions) Run() error {
	info := version.Get()
	if o.Output == "json" {
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.Out, string(b))
		return err
	}
	_, err := fmt.Fprintln(o.Out, info)
	return err
}

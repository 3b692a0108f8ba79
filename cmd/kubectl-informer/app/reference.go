package app

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// ReferenceHeader begins every page of the command reference.
const ReferenceHeader = "<!-- Generated from the commands' help by `make reference`: edit the commands, not this page. -->\n"

// Reference returns the command reference: a Markdown page per command a
// user runs (the root and every verb, hidden commands and cobra's help
// left out), keyed by its file name ("kubectl-informer_query.md"). A page
// holds the command's help exactly as --help prints it, and links to the
// command above it and those below.
func Reference() map[string]string {
	var b bytes.Buffer
	root := NewRootCommand(genericiooptions.IOStreams{In: &b, Out: &b, ErrOut: &b})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	pages := map[string]string{}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if !documented(cmd) {
			return
		}
		pages[referenceFile(cmd)] = referencePage(cmd)
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
	return pages
}

// documented reports whether cmd has a page: not hidden, not help.
func documented(cmd *cobra.Command) bool {
	return cmd.IsAvailableCommand() || !cmd.HasParent()
}

// referenceFile is cmd's page: its path, words joined by "_".
func referenceFile(cmd *cobra.Command) string {
	return strings.ReplaceAll(cmd.CommandPath(), " ", "_") + ".md"
}

func referencePage(cmd *cobra.Command) string {
	var help bytes.Buffer
	cmd.SetOut(&help)
	cmd.SetErr(&help)
	_ = cmd.Help()
	var p strings.Builder
	p.WriteString(ReferenceHeader)
	text := strings.TrimLeft(help.String(), "\n")
	// Defaults under the home directory (--cache-dir's) read the same
	// for every user.
	if home, err := os.UserHomeDir(); err == nil && home != "/" && home != "" {
		text = strings.ReplaceAll(text, `"`+home+"/", `"$HOME/`)
	}
	fmt.Fprintf(&p, "\n# %s\n\n%s.\n\n```text\n%s```\n", cmd.CommandPath(), strings.TrimSuffix(cmd.Short, "."), text)
	var links []string
	if cmd.HasParent() {
		links = append(links, fmt.Sprintf("[%s](%s)", cmd.Parent().CommandPath(), referenceFile(cmd.Parent())))
	}
	for _, c := range cmd.Commands() {
		if documented(c) {
			links = append(links, fmt.Sprintf("[%s](%s): %s", c.CommandPath(), referenceFile(c), c.Short))
		}
	}
	if len(links) > 0 {
		p.WriteString("\nSee also:\n\n")
		for _, l := range links {
			fmt.Fprintf(&p, "- %s\n", l)
		}
	}
	return p.String()
}

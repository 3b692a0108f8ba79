// Package app holds the cobra commands of kubectl-informer. It is the only
// package that knows cobra: each command turns its flags into an Options
// struct (Complete → Validate → Run) and calls the library packages under pkg/.
package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Exit codes, documented in the root command's help and docs/exit-codes.md.
const (
	// ExitOK: success, also when a query matched nothing.
	ExitOK = 0
	// ExitRuntime: a runtime or cluster error (unreachable, forbidden, sync timeout).
	ExitRuntime = 1
	// ExitUsage: a usage or expression error: a bad flag, invalid CEL, an
	// expression a schema refutes, a resource type the server does not have.
	ExitUsage = 2
	// ExitPartial: a query, watch or indexes over several clusters
	// (--context a,b, --all-contexts) printed the answer of some of them;
	// others did not answer, each named in a warning.
	ExitPartial = 3
	// ExitInterrupted: Ctrl-C (SIGINT) stopped a command before it was done,
	// such as a query waiting for the server or its caches. It is 128 + the
	// signal's number, as shells report a command a signal ended; SIGTERM
	// gives 143. A watch, query --watch or export that Ctrl-C stops once
	// running has done its work and exits with ExitOK.
	ExitInterrupted = 130
)

// InterruptedError ends a command that Ctrl-C or SIGTERM stopped before it
// was done; it exits with ExitCode.
type InterruptedError struct {
	// Signal is the signal received; nil when the command's context was
	// cancelled by its caller.
	Signal os.Signal
}

func (e *InterruptedError) Error() string {
	if e.Signal == nil || e.Signal == os.Interrupt {
		return "interrupted"
	}
	return e.Signal.String()
}

// ExitCode returns 128 + the signal's number, or ExitInterrupted without a
// signal.
func (e *InterruptedError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// UsageError marks an error as the user's input being wrong; it exits with
// ExitUsage. It is query.UsageError: one type, whether the mistake is found
// by the flags' checks here or by the query's planner.
type UsageError = query.UsageError

// usageErrorf returns a *UsageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// requireResourceType is the Args of a verb that names resource types:
// without any, it says what kubectl get says without a type, and is a
// usage error.
func requireResourceType(errOut io.Writer, verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return nil
		}
		_, _ = fmt.Fprintf(errOut, "You must specify the type of resource to %s. Use \"kubectl api-resources\" for a complete list of supported resources.\n\n", verb)
		return &UsageError{Err: errors.New(requiredResource + "\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl informer " + verb + " -h' for help and examples")}
	}
}

// requiredResource is kubectl get's error without a resource type.
const requiredResource = "Required resource not specified."

const exitCodesHelp = `Exit codes:
  0  success (also when nothing matched, and a watch, query --watch or export stopped by Ctrl-C)
  1  runtime or cluster error (unreachable or silent server, except for export, which
     serves and waits for it; forbidden, sync timeout, a named object not found;
     query -i reading a pipe: a line's answer failed)
  2  usage or expression error (bad flag or selector, an empty or invalid expression,
     a config file's mistake, an unknown resource type in any verb; query -i reading
     a pipe: a line had such a mistake)
  3  a query, watch or indexes over several contexts answered from some of them
     only: the others (unreachable, forbidden, not synced) are named in warnings
  130  interrupted by Ctrl-C before the command was done (143: by SIGTERM)`

func init() {
	// client-go reports retried list and watch failures through klog; the
	// commands report what matters themselves, once, with what to do.
	klog.SetLogger(logr.Discard())
}

// NewRootCommand returns the "kubectl informer" command with every verb.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use: "kubectl-informer",
		// Shown in usage lines: the command as typed through kubectl.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl informer"},
		Short:       "Query and export Kubernetes objects from informer caches with CEL",
		Long: `kubectl informer lists and watches the resources you name into client-go informer
caches, indexes them with CEL expressions, and answers queries from memory or
serves Prometheus metrics computed from them by CEL.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The API server's warnings (a deprecated API version, say) are
	// printed as kubectl prints them, each once.
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true}))
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	cmd.AddCommand(NewVersionCommand(streams))
	cmd.AddCommand(NewQueryCommand(streams))
	cmd.AddCommand(NewWatchCommand(streams))
	cmd.AddCommand(NewIndexesCommand(streams))
	cmd.AddCommand(NewTreeCommand(streams))
	cmd.AddCommand(NewExportCommand(streams))
	cmd.AddCommand(NewServeCommand(streams))
	cmd.AddCommand(NewCompletionCommand(streams))
	return cmd
}

// Execute runs the command and returns the process exit code, printing the
// error, if any, as kubectl does ("error: …").
func Execute(cmd *cobra.Command, streams genericiooptions.IOStreams) int {
	err := cmd.Execute()
	if err == nil {
		return ExitOK
	}
	var notFound *plan.NotFoundError
	if errors.As(err, &notFound) {
		// kubectl get's own words, one line per object, unprefixed.
		_, _ = fmt.Fprintln(streams.ErrOut, notFound)
		return ExitRuntime
	}
	_, _ = fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	var partial *plan.PartialError
	if errors.As(err, &partial) {
		return ExitPartial
	}
	var interrupted *InterruptedError
	if errors.As(err, &interrupted) {
		return interrupted.ExitCode()
	}
	var usage *UsageError
	if errors.As(err, &usage) || isCobraUsageError(err) {
		return ExitUsage
	}
	return ExitRuntime
}

// isCobraUsageError recognises the errors cobra itself returns for unknown
// commands and wrong argument counts, which are not flag errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "accepts ") ||
		strings.HasPrefix(msg, "requires at least") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "invalid argument")
}

package charts_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// ksmFlags returns the flags of the binary run as kube-state-metrics (its
// drop-in command, whose flags are kube-state-metrics' own, names and
// types: see cmd/kubectl-informer/app's TestKubeStateMetricsFlags), and
// which of them take no value.
func ksmFlags(t testing.TB) (*pflag.FlagSet, map[string]bool) {
	t.Helper()
	fs := app.NewKubeStateMetricsCommand(genericiooptions.NewTestIOStreamsDiscard()).Flags()
	bools := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" {
			bools[f.Name] = true
		}
	})
	if fs.Lookup("telemetry-port") == nil || !bools["auth-filter"] {
		t.Fatal("the drop-in command has no --telemetry-port or boolean --auth-filter")
	}
	return fs, bools
}

// parseKSMArgs parses args as the drop-in parses its command line,
// and fails the test unless each is one flag in the syntax of its
// documentation: --NAME=VALUE, or --NAME for a flag that takes no value,
// with no positional argument.
func parseKSMArgs(t testing.TB, args []string) *pflag.FlagSet {
	t.Helper()
	fs, bools := ksmFlags(t)
	for _, a := range args {
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch {
		case !strings.HasPrefix(a, "--"):
			t.Errorf("argument %q is not a flag (want --NAME=VALUE or --NAME)", a)
		case fs.Lookup(name) == nil:
			t.Errorf("argument %q: kube-state-metrics has no flag --%s", a, name)
		case bools[name] && hasValue:
			t.Errorf("argument %q: --%s takes no value", a, name)
		case !bools[name] && !hasValue:
			t.Errorf("argument %q: --%s takes a value, to be given as --%s=VALUE", a, name, name)
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("kube-state-metrics' flags refuse %q: %v", args, err)
	}
	if fs.NArg() != 0 {
		t.Errorf("positional arguments %q: kube-state-metrics takes none", fs.Args())
	}
	return fs
}

// flag returns the value of a parsed flag, "" when it was not given.
func flag(fs *pflag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil || !f.Changed {
		return ""
	}
	return f.Value.String()
}

// expandEnv replaces the $(NAME) references of args to the container's
// environment variables as the kubelet does, with a value of the right form
// for those that come from the downward API.
func expandEnv(c *corev1.Container, args []string) []string {
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "pod-index"):
			vars[e.Name] = "1"
		default:
			vars[e.Name] = "x-1"
		}
	}
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// exportCommand and serveCommand parse the plugin's verbs' flags.
func exportFlags(t testing.TB, args []string) *pflag.FlagSet {
	t.Helper()
	cmd := app.NewExportCommand(genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatalf("export refuses %q: %v", args, err)
	}
	if cmd.Flags().NArg() != 0 {
		t.Errorf("positional arguments %q: export takes none", cmd.Flags().Args())
	}
	return cmd.Flags()
}

func serveFlags(t testing.TB, args []string) *pflag.FlagSet {
	t.Helper()
	cmd := app.NewServeCommand(genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatalf("serve refuses %q: %v", args, err)
	}
	return cmd.Flags()
}

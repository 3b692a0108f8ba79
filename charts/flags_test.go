package charts_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// ksmHelp is kube-state-metrics v2.20's "kube-state-metrics -h", as its
// docs/developer/cli-arguments.md prints it.
const ksmHelp = "testdata/kube-state-metrics-help.txt"

// flagLine is a flag of the help text: its name and, for a flag that takes
// a value, the value's type.
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9_-]+)(?: (\w+))?\s{2,}`)

// ksmFlags returns kube-state-metrics' flags as a FlagSet, and which of
// them take no value.
func ksmFlags(t testing.TB) (*pflag.FlagSet, map[string]bool) {
	t.Helper()
	f, err := os.Open(ksmHelp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	fs := pflag.NewFlagSet("kube-state-metrics", pflag.ContinueOnError)
	bools := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := flagLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		if m[2] == "" {
			bools[m[1]] = true
			fs.Bool(m[1], false, "")
		} else {
			fs.String(m[1], "", "")
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// The help text lists 51 flags and -h.
	if n := len(bools); fs.Lookup("telemetry-port") == nil || fs.Lookup("auth-filter") == nil || n < 10 {
		t.Fatalf("%s: read %d boolean flags, and not --telemetry-port or --auth-filter: is it kube-state-metrics' help text?", ksmHelp, n)
	}
	return fs, bools
}

// parseKSMArgs parses args as kube-state-metrics parses its command line,
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

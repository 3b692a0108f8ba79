// Package examples_test runs every example of every command's --help
// (TestHelpExamples) and every command the Markdown docs show (TestDocs),
// as a user would paste it into a shell, against a real kube-apiserver
// holding the demo's workload (make demo): "kubectl informer" is the
// project's kubectl running the plugin's binary from PATH. Only what must
// change is changed: ports become free ones and /tmp a directory of the
// test's. An example that fails fails the test.
package examples_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	// The demo's workload, whose outputs the docs show.
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(workload.Demo())))
}

// example is one command of an example: a line, or lines joined by a
// trailing backslash.
type example struct {
	// command is the "kubectl informer" command it illustrates; comment
	// the comment of its block.
	command, comment string
	text             string
}

// examples returns the commands of the Example of cmd and of its
// subcommands.
func examples(cmd *cobra.Command) []example {
	var out []example
	comment := ""
	var cur []string
	for _, line := range strings.Split(cmd.Example, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case len(cur) > 0:
			cur = append(cur, line)
		case line == "":
			comment = ""
			continue
		case strings.HasPrefix(line, "#"):
			comment = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			continue
		default:
			cur = []string{line}
		}
		if !strings.HasSuffix(line, `\`) {
			out = append(out, example{command: cmd.CommandPath(), comment: comment, text: strings.Join(cur, "\n")})
			cur = nil
		}
	}
	for _, sub := range cmd.Commands() {
		out = append(out, examples(sub)...)
	}
	return out
}

func TestHelpExamples(t *testing.T) {
	sb := newSandbox(t)

	// A pod of the context's namespace, whose annotation changes until
	// a watch has printed something.
	probe, err := cluster.Client.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "examples-probe"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Pods(probe.Namespace).Delete(context.Background(), probe.Name, metav1.DeleteOptions{})
	})
	poke := func(i int) {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"examples/poke":"%d"}}}`, i)
		_, _ = cluster.Client.CoreV1().Pods(probe.Namespace).Patch(context.Background(), probe.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}

	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}
	all := examples(app.NewRootCommand(streams))
	if len(all) < 10 {
		t.Fatalf("found %d examples in the commands' help; the parser missed some", len(all))
	}
	// Each block of an example (the lines under one comment) runs in
	// order; a command that runs until stopped runs in the background
	// until the block ends, then gets Ctrl-C.
	for i, ex := range all {
		name := fmt.Sprintf("%s/%d", strings.TrimPrefix(ex.command, "kubectl-informer "), i)
		if i > 0 && all[i-1].command != ex.command {
			sb.stopBackground(t)
		}
		t.Run(name, func(t *testing.T) {
			shell := shellOf(ex.comment)
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed: %s", shell, ex.text)
			}
			p := sb.start(t, shell, ex.text, "")
			if !p.long {
				p.wait(t, false)
				return
			}
			p.waitServing(t, func(out string) bool { return out != "" }, poke)
		})
	}
	sb.stopBackground(t)
}

// Package examples_test runs every example of every command's --help, as
// a user would paste it into a shell, against a real kube-apiserver
// holding the sample workload: "kubectl informer" is the project's kubectl
// running the plugin's binary from PATH. Only what must change is
// changed: ports become free ones and /tmp/informer-certs a directory of
// the test's. An example that fails fails the test.
package examples_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/internal/kubeconfigs"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	spec := workload.Spec{Namespaces: 4, Nodes: 4, Pods: 60, PodsPerDeployment: 10}
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec)))
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

// runsUntilStopped reports whether the example's command runs until
// Ctrl-C, and if so the text in its output that says it is serving.
func runsUntilStopped(text string) (bool, string) {
	switch {
	case strings.Contains(text, "informer watch "):
		return true, ""
	case (strings.Contains(text, "informer query ") || strings.Contains(text, "informer tree ")) &&
		(strings.HasSuffix(text, " -w") || strings.Contains(text, " -w ") || strings.Contains(text, " --watch")):
		// Its first answer, then it follows the cluster until stopped.
		return true, ""
	case strings.Contains(text, "informer serve "):
		return true, `msg="serving queries"`
	case strings.Contains(text, "informer export ") && !strings.Contains(text, "--check") && !strings.Contains(text, "--print-rbac") && !strings.Contains(text, "--print-config"):
		return true, "ready: caches synced"
	}
	return false, ""
}

// shellOf returns the shell an example is written for, from its comment.
func shellOf(comment string) string {
	switch strings.ToLower(strings.Fields(comment + " x")[0]) {
	case "zsh":
		return "zsh"
	case "fish":
		return "fish"
	case "powershell":
		return "pwsh"
	}
	return "bash"
}

var (
	listenPort = regexp.MustCompile(`(--(?:web\.)?listen-address) :\d+`)
	localhost  = regexp.MustCompile(`https://localhost:\d+`)
)

func TestHelpExamples(t *testing.T) {
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-informer"), "./cmd/kubectl-informer")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(filepath.Join(cluster.BinDir, "kubectl"), filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	// The completion example installs a helper on PATH there.
	if err := os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o750); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "PATH="+bin+":"+filepath.Join(home, ".local", "bin")+":"+os.Getenv("PATH"),
		"KUBECONFIG="+exampleContexts(t))
	certDir := t.TempDir()

	// A pod of the context's namespace, whose annotation changes until
	// a watch has printed something.
	probe, err := cluster.Client.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "examples-probe"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	type running struct {
		cmd      *exec.Cmd
		done     chan error
		text     string
		out, err *framework.SyncBuffer
	}
	var background []running
	stopBackground := func(t *testing.T) {
		t.Helper()
		for _, r := range background {
			_ = r.cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-r.done:
				if code := r.cmd.ProcessState.ExitCode(); code != 0 {
					t.Errorf("%s\nexited %d (%v) when stopped with Ctrl-C, want 0\nstdout:\n%s\nstderr:\n%s", r.text, code, err, r.out, r.err)
				}
			case <-time.After(framework.HangTimeout):
				_ = r.cmd.Process.Kill()
				t.Errorf("%s\ndid not end within %s of Ctrl-C", r.text, framework.HangTimeout)
			}
		}
		background = nil
	}
	// port is that of the last command that serves, which the commands
	// after it ask.
	port := ""
	for i, ex := range all {
		name := fmt.Sprintf("%s/%d", strings.TrimPrefix(ex.command, "kubectl-informer "), i)
		if i > 0 && all[i-1].command != ex.command {
			stopBackground(t)
		}
		t.Run(name, func(t *testing.T) {
			shell := shellOf(ex.comment)
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed: %s", shell, ex.text)
			}
			text := strings.ReplaceAll(ex.text, "/tmp/informer-certs", certDir)
			long, ready := runsUntilStopped(text)
			if long && (strings.Contains(text, "informer serve ") || strings.Contains(text, "informer export ")) {
				_, port, _ = strings.Cut(framework.ClosedPort(t), ":")
				text = listenPort.ReplaceAllString(text, "$1 :"+port)
				switch {
				case strings.Contains(text, "informer serve ") && !strings.Contains(text, "--listen-address"):
					text += " --listen-address :" + port
				case strings.Contains(text, "informer export ") && !strings.Contains(text, "--web.listen-address"):
					text += " --web.listen-address :" + port
				}
			}
			text = localhost.ReplaceAllString(text, "https://localhost:"+port)
			t.Log(text)
			var args []string
			switch shell {
			case "pwsh":
				args = []string{"-NoProfile", "-Command", text}
			case "bash":
				args = []string{"-o", "pipefail", "-c", text}
			default:
				args = []string{"-c", text}
			}
			if long {
				args[len(args)-1] = "exec " + text
			}
			cmd := exec.Command(shell, args...)
			cmd.Dir, cmd.Env = root, env
			out, errOut := &framework.SyncBuffer{}, &framework.SyncBuffer{}
			cmd.Stdout, cmd.Stderr = out, errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if !long {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", text, err, out, errOut)
					}
				case <-time.After(framework.HangTimeout):
					_ = cmd.Process.Kill()
					t.Fatalf("%s\ndid not end within %s\nstdout:\n%s\nstderr:\n%s", text, framework.HangTimeout, out, errOut)
				}
				return
			}
			background = append(background, running{cmd: cmd, done: done, text: text, out: out, err: errOut})
			deadline := time.Now().Add(framework.HangTimeout)
			for n := 0; ; n++ {
				if ready == "" && out.String() != "" || ready != "" && strings.Contains(errOut.String(), ready) {
					return
				}
				select {
				case err := <-done:
					done <- err // for stopBackground
					t.Fatalf("%s\nended before it served: %v\nstdout:\n%s\nstderr:\n%s", text, err, out, errOut)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s\ndid not start serving within %s\nstdout:\n%s\nstderr:\n%s", text, framework.HangTimeout, out, errOut)
				}
				if ready == "" {
					poke(n)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	stopBackground(t)
}

// exampleContexts writes a copy of the test cluster's kubeconfig with the
// contexts the examples over several clusters name (east, west,
// prod-east, prod-west), each reaching the test cluster as its current
// context does, and returns its path.
func exampleContexts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"east", "west", "prod-east", "prod-west"} {
		if err := kubeconfigs.AddContext(path, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

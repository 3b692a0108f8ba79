package examples_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/kubeconfigs"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// sandbox runs commands as a user would paste them into a shell: from the
// repository's root, with the plugin built from it and the project's
// kubectl first on PATH, a HOME of their own, and a kubeconfig reaching
// the test cluster under the contexts the examples name.
type sandbox struct {
	root    string
	env     []string
	certDir string
	// tmp stands for /tmp in the commands.
	tmp string
	// port is that of the last command that serves, which the commands
	// after it ask.
	port string
	// background are the commands that run until stopped, started since
	// the last stopBackground.
	background []*proc
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
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
	return &sandbox{root: root, env: env, certDir: t.TempDir(), tmp: t.TempDir()}
}

// viewerKubeconfig is the kubeconfig the docs' commands name for a caller
// of a query server that may list the pods of the namespace shop and
// nothing else.
const viewerKubeconfig = "/tmp/viewer.kubeconfig"

// viewer writes viewerKubeconfig (under s.tmp, as the commands read it):
// a ServiceAccount viewer of the namespace shop, allowed to get, list and
// watch its pods, authenticated by a token alone.
func (s *sandbox) viewer(t *testing.T) {
	t.Helper()
	kubeconfig, _ := cluster.ServiceAccountKubeconfig(t, "shop", "viewer",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "get"}})
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.tmp, strings.TrimPrefix(viewerKubeconfig, "/tmp/")), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// exampleContexts writes a kubeconfig reaching the test cluster whose
// current context is named "local", as that of the demo's cluster (make
// demo) is, with the contexts the examples over several clusters name
// (east, west, prod-east, prod-west), each reaching the test cluster as
// the current one does, and south, whose API server cannot be reached,
// and returns its path.
func exampleContexts(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfigs.Merge(path, []string{cluster.Kubeconfig}, []string{"local"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"east", "west", "prod-east", "prod-west"} {
		if err := kubeconfigs.AddContext(path, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := kubeconfigs.AddContext(path, "south", "https://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	return path
}

// runsUntilStopped reports whether the command runs until Ctrl-C, and if
// so the text in its standard error that says it is serving.
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
	case strings.Contains(text, "informer export ") && !strings.Contains(text, "--check") && !strings.Contains(text, "--print-rbac") &&
		!strings.Contains(text, "--print-config") && !strings.Contains(text, "--convert-crs"):
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
	listenPort = regexp.MustCompile(`(--(?:web\.)?listen-address) (?:127\.0\.0\.1|localhost)?:\d+`)
	localhost  = regexp.MustCompile(`(https?://)?(localhost|127\.0\.0\.1):\d+`)
)

// proc is a command started by the sandbox.
type proc struct {
	cmd           *exec.Cmd
	done          chan error
	text          string
	long          bool
	ready         string
	out, err      *framework.SyncBuffer
	serves, ended bool
	// waitingFor says what waitServing waits for, when it is more than
	// output.
	waitingFor string
}

// prepare returns text as it runs here: /tmp/informer-certs is a
// directory of the test's and /tmp another, a command that serves listens on a free port
// (its own, or the default, replaced), and the commands that ask
// localhost ask that port.
func (s *sandbox) prepare(t *testing.T, text string) (string, bool, string) {
	t.Helper()
	text = strings.NewReplacer("/tmp/informer-certs", s.certDir, "/tmp/", s.tmp+"/").Replace(text)
	// The test runs it in the background as the shell would.
	text = strings.TrimSuffix(strings.TrimSpace(text), " &")
	long, ready := runsUntilStopped(text)
	if long && (strings.Contains(text, "informer serve ") || strings.Contains(text, "informer export ")) {
		_, s.port, _ = strings.Cut(framework.ClosedPort(t), ":")
		text = listenPort.ReplaceAllString(text, "$1 :"+s.port)
		flag := ""
		switch {
		case strings.Contains(text, "informer serve ") && !strings.Contains(text, "--listen-address"):
			flag = " --listen-address :" + s.port
		case strings.Contains(text, "informer export ") && !strings.Contains(text, "--web.listen-address") && !strings.Contains(text, "--port"):
			flag = " --web.listen-address :" + s.port
		}
		// Before a pipe or a redirection.
		i := shellOperator(text)
		text = text[:i] + flag + text[i:]
		return text, long, ready
	}
	if s.port != "" {
		text = localhost.ReplaceAllString(text, "${1}${2}:"+s.port)
	}
	return text, long, ready
}

// shellOperator returns the offset of the first " |" or " >" of text
// outside quotes, or its length.
func shellOperator(text string) int {
	var quote byte
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ' ' && i+1 < len(text) && (text[i+1] == '|' || text[i+1] == '>'):
			return i
		}
	}
	return len(text)
}

// start runs text in shell from the repository's root, with stdin as its
// standard input. A command that runs until stopped runs with exec, so
// that Ctrl-C reaches it.
func (s *sandbox) start(t *testing.T, shell, text, stdin string) *proc {
	t.Helper()
	text, long, ready := s.prepare(t, text)
	t.Log(text)
	run := text
	if long {
		run = "exec " + text
	}
	var args []string
	switch shell {
	case "pwsh":
		args = []string{"-NoProfile", "-Command", run}
	case "bash":
		args = []string{"-o", "pipefail", "-c", run}
	default:
		args = []string{"-c", run}
	}
	p := &proc{cmd: exec.Command(shell, args...), done: make(chan error, 1), text: text, long: long, ready: ready,
		out: &framework.SyncBuffer{}, err: &framework.SyncBuffer{}}
	p.cmd.Dir, p.cmd.Env = s.root, s.env
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	if long {
		s.background = append(s.background, p)
		p.serves = strings.Contains(text, "informer serve ") || strings.Contains(text, "informer export ")
	}
	return p
}

// wait waits for a command that ends by itself, and fails the test
// unless it exits 0 (or, with mayFail, unless it ends by itself).
func (p *proc) wait(t *testing.T, mayFail bool) {
	t.Helper()
	select {
	case err := <-p.done:
		p.ended = true
		var exit *exec.ExitError
		failedAsMayFail := mayFail && errors.As(err, &exit) && exit.ExitCode() > 0
		if err != nil && !failedAsMayFail {
			t.Fatalf("%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", p.text, err, p.out, p.err)
		}
	case <-time.After(framework.HangTimeout):
		_ = p.cmd.Process.Kill()
		t.Fatalf("%s\ndid not end within %s\nstdout:\n%s\nstderr:\n%s", p.text, framework.HangTimeout, p.out, p.err)
	}
}

// waitServing waits until a command that runs until stopped is serving:
// its standard error says so, or, for those that print answers, until
// printed(stdout) holds. poke(n) is called between looks, to make
// something for a watch to print.
func (p *proc) waitServing(t *testing.T, printed func(string) bool, poke func(int)) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for n := 0; ; n++ {
		if p.ready == "" && printed(p.out.String()) || p.ready != "" && strings.Contains(p.err.String(), p.ready) {
			return
		}
		select {
		case err := <-p.done:
			p.ended = true
			t.Fatalf("%s\nended before it served: %v\nstdout:\n%s\nstderr:\n%s", p.text, err, p.out, p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s\ndid not start serving within %s%s\nstdout:\n%s\nstderr:\n%s", p.text, framework.HangTimeout, p.waitingFor, p.out, p.err)
		}
		if p.ready == "" && poke != nil {
			poke(n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopBackground sends Ctrl-C to the commands that run until stopped and
// fails the test unless each exits 0.
func (s *sandbox) stopBackground(t *testing.T) {
	t.Helper()
	for _, p := range s.background {
		if p.ended { // and reported
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-p.done:
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s\nexited %d (%v) when stopped with Ctrl-C, want 0\nstdout:\n%s\nstderr:\n%s", p.text, code, err, p.out, p.err)
			}
		case <-time.After(framework.HangTimeout):
			_ = p.cmd.Process.Kill()
			t.Errorf("%s\ndid not end within %s of Ctrl-C", p.text, framework.HangTimeout)
		}
	}
	s.background = nil
}

// serving reports whether a command that serves (export, serve) runs in
// the background.
func (s *sandbox) serving() bool {
	for _, p := range s.background {
		if p.serves {
			return true
		}
	}
	return false
}

func (p *proc) String() string {
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", p.text, p.out, p.err)
}

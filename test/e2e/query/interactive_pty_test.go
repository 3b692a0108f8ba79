package query_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestInteractiveTerminal types at the prompt of the plugin's binary on a
// pseudo-terminal: a field completed with Tab, a count, a jsonpath answer
// followed by the prompt on a line of its own, Ctrl-D; the lines typed are
// saved in the history file.
func TestInteractiveTerminal(t *testing.T) {
	pending := 0
	for _, p := range pods(t, metav1.ListOptions{}) {
		if p.Status.Phase == corev1.PodPending {
			pending++
		}
	}
	dir := t.TempDir()
	term := startTerminal(t, dir, "pods", "-A")
	waitFor, typeIn := term.waitFor, term.typeIn
	waitFor("prompt", regexp.MustCompile(`pods> `))
	// Tab completes the only field under object.status that starts with "ph".
	typeIn("object.status.ph\t")
	waitFor("completion", regexp.MustCompile(`object\.status\.phase`))
	typeIn(` == "Pending"` + "\r:count\r")
	waitFor("the count", regexp.MustCompile(`\r?\n`+strconv.Itoa(pending)+`\r?\n`))
	// jsonpath prints no line end of its own: the session adds one, so the
	// next prompt starts a line.
	typeIn(":count\r:o jsonpath={.items[0].kind}\r")
	waitFor("the jsonpath answer, then the prompt on a line of its own", regexp.MustCompile(`\nPod\r?\n(\x1b\[[0-9;]*[A-Za-z]|\r)*pods> `))
	term.quit()
	history := term.history()
	// A line typed twice in a row is kept once.
	if want := "object.status.phase == \"Pending\"\n:count\n:o jsonpath={.items[0].kind}\n"; history != want {
		t.Errorf("history %q, want %q", history, want)
	}
}

// TestInteractiveTerminalCompletion: Tab at the prompt only extends what
// was typed, completes the keys of the labels of the namespace's pods after
// [", lists the choices on a second Tab without changing the line, and a
// line longer than the terminal is shown whole.
func TestInteractiveTerminalCompletion(t *testing.T) {
	ns := cluster.NewNamespace(t, "tab")
	pod := cluster.CreatePod(t, ns, "api-0", map[string]string{"app": "api", "tier": "front", "team.example.com/owner": "ops"})
	dir := t.TempDir()
	term := startTerminal(t, dir, "pods", "-n", ns)
	term.waitFor("prompt", regexp.MustCompile(`pods> `))

	// "tier" is the only key starting with t that can follow a dot.
	term.typeIn("object.metadata.labels.t\t")
	term.waitFor("completion", regexp.MustCompile(`labels\.tier`))
	term.typeIn(` == "` + pod.Labels["tier"] + `"` + "\r")
	term.waitFor("the answer", regexp.MustCompile(`\n`+pod.Name+` +`))
	// Two Tabs after the dot list the keys and keep the dot.
	term.typeIn(":o name\robject.metadata.labels.\t\t")
	term.waitFor("the list of keys", regexp.MustCompile(`object\.metadata\.labels\.app`))
	term.typeIn(`tier != ""` + "\r")
	term.waitFor("the answer", regexp.MustCompile(`pod/`+pod.Name+`\r?\n(.|\n)*pod/`+pod.Name+`\r?\n`))
	// A key that is not an identifier completes after [".
	term.typeIn(`object.metadata.labels["te` + "\t")
	term.waitFor("completion of the key", regexp.MustCompile(`labels\["team\.example\.com/owner"\]`))
	term.typeIn(` == "` + pod.Labels["team.example.com/owner"] + `"` + "\r")
	// A line wider than the terminal is written whole.
	long := `object.metadata.name != "` + strings.Repeat("x", 250) + `"`
	term.typeIn(long + "\r")
	term.waitFor("the long line whole", regexp.MustCompile(regexp.QuoteMeta(long)))
	term.quit()
	want := strings.Join([]string{
		`object.metadata.labels.tier == "` + pod.Labels["tier"] + `"`,
		":o name",
		`object.metadata.labels.tier != ""`,
		`object.metadata.labels["team.example.com/owner"] == "` + pod.Labels["team.example.com/owner"] + `"`,
		long,
	}, "\n") + "\n"
	if got := term.history(); got != want {
		t.Errorf("lines entered %q, want %q", got, want)
	}
}

// terminal is the plugin's binary run with query -i on a pseudo-terminal
// of 40 rows and 200 columns, its state and config under dir.
type terminal struct {
	t   *testing.T
	dir string
	cmd *exec.Cmd
	tty *os.File

	mu  sync.Mutex
	out bytes.Buffer
}

// startTerminal builds the plugin and runs query -i with args on a
// pseudo-terminal; the process is killed at the end of the test unless it
// ended.
func startTerminal(t *testing.T, dir string, args ...string) *terminal {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-informer")
	build := exec.Command("go", "build", "-o", bin, "github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"query", "--kubeconfig", cluster.Kubeconfig, "-i"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, dir: dir, cmd: cmd, tty: tty}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		_ = tty.Close()
	})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

// screen returns everything the terminal showed so far.
func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until what the terminal showed matches re.
func (term *terminal) waitFor(what string, re *regexp.Regexp) {
	term.t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		s := term.screen()
		if re.MatchString(s) {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("no %s on the terminal:\n%q", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// typeIn types s.
func (term *terminal) typeIn(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.tty, s); err != nil {
		term.t.Fatal(err)
	}
}

// quit types Ctrl-D and waits for the session to end without an error.
func (term *terminal) quit() {
	term.t.Helper()
	term.typeIn("\x04")
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			term.t.Fatalf("exit: %v\n%q", err, term.screen())
		}
	case <-time.After(framework.HangTimeout):
		term.t.Fatal("the prompt did not end on Ctrl-D")
	}
}

// history returns the history file the session saved.
func (term *terminal) history() string {
	term.t.Helper()
	b, err := os.ReadFile(filepath.Join(term.dir, "kubectl-informer", "history"))
	if err != nil {
		term.t.Fatal(err)
	}
	return string(b)
}

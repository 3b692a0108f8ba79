package query_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "kubectl-informer")
	build := exec.Command("go", "build", "-o", bin, "github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pending := 0
	for _, p := range pods(t, metav1.ListOptions{}) {
		if p.Status.Phase == corev1.PodPending {
			pending++
		}
	}

	cmd := exec.Command(bin, "query", "--kubeconfig", cluster.Kubeconfig, "pods", "-A", "-i")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tty.Close() }()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	waitFor := func(what string, re *regexp.Regexp) {
		t.Helper()
		deadline := time.Now().Add(framework.HangTimeout)
		for {
			mu.Lock()
			s := screen.String()
			mu.Unlock()
			if re.MatchString(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s on the terminal:\n%q", what, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	typeIn := func(s string) {
		t.Helper()
		if _, err := io.WriteString(tty, s); err != nil {
			t.Fatal(err)
		}
	}
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
	typeIn("\x04") // Ctrl-D
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%q", err, screen.String())
		}
	case <-time.After(framework.HangTimeout):
		_ = cmd.Process.Kill()
		t.Fatal("the prompt did not end on Ctrl-D")
	}
	history, err := os.ReadFile(filepath.Join(dir, "kubectl-informer", "history"))
	if err != nil {
		t.Fatal(err)
	}
	// A line typed twice in a row is kept once.
	if want := "object.status.phase == \"Pending\"\n:count\n:o jsonpath={.items[0].kind}\n"; string(history) != want {
		t.Errorf("history %q, want %q", history, want)
	}
}

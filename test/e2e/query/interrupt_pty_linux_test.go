package query_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// TestInteractiveInterrupt types a filter that takes a second or so per
// object at the prompt of the plugin's binary on a pseudo-terminal, then
// Ctrl-C while it is evaluated: that answer stops with "interrupted", the
// prompt comes back and answers the next line. Ctrl-C while :index
// indexes the cache stops it the same way, and adds no index. SIGTERM
// during a second long answer ends the session with 143.
//
// When the line editor reads a line, the terminal does not turn Ctrl-C
// into a signal (it is a key, which clears the line); it does again once
// the line is entered. The test waits for that, on the terminal's own
// settings, before it types Ctrl-C.
func TestInteractiveInterrupt(t *testing.T) {
	bin := pluginBinary(t)
	dir := t.TempDir()
	ns := workload.NamespaceName(0)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ptmx.Close() }()
	defer func() { _ = tty.Close() }()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "query", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", ns, "-i", "--cache-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	done := startCommand(t, cmd)
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	text := func() string {
		mu.Lock()
		defer mu.Unlock()
		return render(screen.String())
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(framework.HangTimeout)
		for !cond() {
			select {
			case err := <-done:
				done <- err
				t.Fatalf("the session ended (%v) before %s:\n%q", err, what, text())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within %s:\n%q", what, framework.HangTimeout, text())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// signals reports whether the terminal turns Ctrl-C into SIGINT.
	signals := func() bool {
		var tio syscall.Termios
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))) //nolint:gosec // G103: TCGETS fills the termios it is given
		if errno != 0 {
			t.Fatalf("reading the terminal's settings: %v", errno)
		}
		return tio.Lflag&syscall.ISIG != 0
	}
	typeIn := func(s string) {
		t.Helper()
		if _, err := io.WriteString(ptmx, s); err != nil {
			t.Fatal(err)
		}
	}
	// prompt waits for the n-th prompt, read by the line editor.
	prompt := func(n int) {
		t.Helper()
		waitFor("prompt", func() bool { return prompts(text()) >= n && !signals() })
	}

	prompt(1)
	typeIn(longPredicate + "\r")
	waitFor("the line entered", signals)
	typeIn("\x03") // Ctrl-C
	prompt(2)
	s := text()
	after := s[strings.LastIndex(s, longPredicate)+len(longPredicate) : strings.LastIndex(s, "\npods> ")]
	if strings.TrimSpace(after) != "interrupted" {
		t.Errorf("after the long filter and Ctrl-C the terminal shows %q, want only \"interrupted\"", after)
	}

	// The session goes on.
	typeIn(`object.metadata.name == "none"` + "\r")
	prompt(3)
	if want := "No resources found in " + ns + " namespace."; !strings.Contains(text()[len(s):], want) {
		t.Errorf("the next filter printed %q, want %q", text()[len(s):], want)
	}

	// Ctrl-C while :index indexes the cache stops it and adds no index:
	// selecting by it fails, as by any index the caches do not have.
	s = text()
	typeIn(":index slow=" + longPredicate + ` ? "a" : "b"` + "\r")
	waitFor("the line entered", signals)
	typeIn("\x03")
	prompt(4)
	if got := text()[len(s):]; !strings.Contains(got, "interrupted: no index was added") {
		t.Errorf("after :index and Ctrl-C the terminal shows %q, want \"interrupted: no index was added\"", got)
	}
	s = text()
	typeIn(":by slow a\r")
	prompt(5)
	if got := text()[len(s):]; !strings.Contains(got, `unknown index "slow"`) {
		t.Errorf(":by slow a after the interrupted :index printed %q, want the unknown index error", got)
	}

	// SIGTERM during an answer ends the session with 143, without the
	// answer.
	before := len(text())
	typeIn(longPredicate + "\r")
	waitFor("the line entered", signals)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	select {
	case err := <-done:
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 143 {
			t.Errorf("after SIGTERM: %v, want exit code 143", err)
		}
	case <-time.After(framework.HangTimeout):
		t.Fatalf("the session did not end within %s of SIGTERM:\n%q", framework.HangTimeout, text())
	}
	waitFor("the error", func() bool { return strings.Contains(text()[before:], "error: terminated") })
	if re := regexp.MustCompile(regexp.QuoteMeta(longPredicate) + `\s*error: terminated\s*$`); !re.MatchString(text()[before:]) {
		t.Errorf("after SIGTERM the terminal shows %q, want only the error", text()[before:])
	}
}

// escape is a terminal's control sequence (CSI).
var escape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// render returns the lines a terminal shows of out. The line editor
// redraws the line being edited from its first column (ESC [1G, then
// ESC [0K to clear it) as keys are typed, so a line shows what follows
// its last redraw; the control sequences and carriage returns are left
// out.
func render(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if j := strings.LastIndex(l, "\x1b[1G"); j >= 0 {
			l = l[j:]
		}
		lines[i] = strings.ReplaceAll(escape.ReplaceAllString(l, ""), "\r", "")
	}
	return strings.Join(lines, "\n")
}

// prompts counts the lines of a rendered screen that begin with the
// prompt: the prompts shown, each with the line typed at it.
func prompts(screen string) int {
	n := 0
	for l := range strings.Lines(screen) {
		if strings.HasPrefix(l, "pods> ") {
			n++
		}
	}
	return n
}

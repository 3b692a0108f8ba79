package framework

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// Run is a "kubectl informer" command running in process, in a goroutine,
// such as a watch or an exporter.
type Run struct {
	Out, ErrOut *SyncBuffer
	cancel      context.CancelFunc
	done        chan int
	code        int
	stopped     bool
}

// StartPlugin runs "kubectl informer ARGS" in process with --kubeconfig
// set to the admin's, until Stop (or the end of the test) cancels its
// context, as Ctrl-C does.
func (c *Cluster) StartPlugin(t *testing.T, args ...string) *Run {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{Out: &SyncBuffer{}, ErrOut: &SyncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: r.Out, ErrOut: r.ErrOut}
	cmd := app.NewRootCommand(streams)
	cmd.SetArgs(append(args[:1:1], append([]string{"--kubeconfig", c.Kubeconfig}, args[1:]...)...))
	cmd.SetContext(ctx)
	go func() { r.done <- app.Execute(cmd, streams) }()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// RunPlugin runs "kubectl informer ARGS" in process until it ends, or
// until ctx is done as Ctrl-C would end it, with in as its standard input
// (nil: an empty one), and returns its exit code and what it printed.
func RunPlugin(ctx context.Context, in io.Reader, args ...string) (code int, out, errOut string) {
	if in == nil {
		in = &bytes.Buffer{}
	}
	var o, e bytes.Buffer
	streams := genericiooptions.IOStreams{In: in, Out: &o, ErrOut: &e}
	cmd := app.NewRootCommand(streams)
	cmd.SetArgs(args)
	cmd.SetContext(ctx)
	code = app.Execute(cmd, streams)
	return code, o.String(), e.String()
}

// Stop cancels the command and returns its exit code; it must end within
// HangTimeout.
func (r *Run) Stop(t *testing.T) int {
	t.Helper()
	if r.stopped {
		return r.code
	}
	r.stopped = true
	r.cancel()
	select {
	case r.code = <-r.done:
	case <-time.After(HangTimeout):
		t.Fatalf("the command did not end within %s of its context's cancellation\nstdout:\n%s\nstderr:\n%s", HangTimeout, r.Out, r.ErrOut)
	}
	return r.code
}

// Wait waits up to HangTimeout for a command that ends by itself (a
// query) and returns its exit code.
func (r *Run) Wait(t *testing.T) int {
	t.Helper()
	if r.stopped {
		return r.code
	}
	select {
	case r.code = <-r.done:
		r.stopped = true
		r.cancel()
	case <-time.After(HangTimeout):
		t.Fatalf("the command did not end within %s\nstdout:\n%s\nstderr:\n%s", HangTimeout, r.Out, r.ErrOut)
	}
	return r.code
}

// WaitLines waits up to HangTimeout until the command has printed at
// least n lines and returns every line printed so far.
func (r *Run) WaitLines(t *testing.T, n int) []string {
	t.Helper()
	return r.WaitLinesFor(t, n, HangTimeout)
}

// WaitLinesFor is WaitLines with a timeout.
func (r *Run) WaitLinesFor(t *testing.T, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := Lines(r.Out.String())
		if len(l) >= n {
			return l
		}
		select {
		case code := <-r.done:
			r.stopped, r.code = true, code
			t.Fatalf("the command ended with exit code %d after %d of %d lines\nstdout:\n%s\nstderr:\n%s", code, len(l), n, r.Out, r.ErrOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d lines\nstdout:\n%s\nstderr:\n%s", n, r.Out, r.ErrOut)
		}
		time.Sleep(pollInterval)
	}
}

// WaitLineContaining waits up to HangTimeout until the command has printed
// a line containing s and returns the lines printed up to it, that line
// last. A test that must show that nothing else was printed makes a change
// whose line comes last, and waits for it.
func (r *Run) WaitLineContaining(t *testing.T, s string) []string {
	t.Helper()
	var upTo []string
	found := func() bool {
		l := Lines(r.Out.String())
		for i := range l {
			if strings.Contains(l[i], s) {
				upTo = l[:i+1]
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(HangTimeout)
	for !found() {
		select {
		case code := <-r.done:
			r.stopped, r.code = true, code
			if found() {
				return upTo
			}
			t.Fatalf("the command ended with exit code %d before printing a line containing %q\nstdout:\n%s\nstderr:\n%s", code, s, r.Out, r.ErrOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for a line containing %q\nstdout:\n%s\nstderr:\n%s", s, r.Out, r.ErrOut)
		}
		time.Sleep(pollInterval)
	}
	return upTo
}

// Lines splits output into lines, without the final newline.
func Lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

var eventTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `)

// CheckEventLines compares the lines a watch printed with the expected
// ones: event lines must start with an RFC 3339 UTC time with
// milliseconds, which is not compared; "<rv>" in an expected line stands
// for any resourceVersion, "<time>" for any RFC 3339 time.
func CheckEventLines(t *testing.T, got, want []string) {
	t.Helper()
	var stripped []string
	for _, l := range got {
		if !strings.HasPrefix(l, "  ") {
			if !eventTime.MatchString(l) {
				t.Errorf("line %q does not start with an RFC 3339 UTC time with milliseconds", l)
			}
			l = eventTime.ReplaceAllString(l, "")
		}
		stripped = append(stripped, l)
	}
	ok := len(stripped) == len(want)
	for i := 0; ok && i < len(want); i++ {
		pattern := strings.NewReplacer("<rv>", `\d+`, "<time>", `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).Replace(regexp.QuoteMeta(want[i]))
		re := regexp.MustCompile("^" + pattern + "$")
		ok = re.MatchString(stripped[i])
	}
	if !ok {
		t.Errorf("printed:\n%s\nwant:\n%s", strings.Join(stripped, "\n"), strings.Join(want, "\n"))
	}
}

// NewNamespace creates a namespace named prefix-XXXXX, fresh for each run.
func (c *Cluster) NewNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	ns, err := c.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.IsNode() {
		// Admission refuses pods until kube-controller-manager has made the
		// namespace's default ServiceAccount.
		Eventually(t, "namespace "+ns.Name+" has its default ServiceAccount", func() bool {
			_, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(context.Background(), "default", metav1.GetOptions{})
			return err == nil
		})
	}
	return ns.Name
}

// CreatePod creates a pod with one container and the given labels.
func (c *Cluster) CreatePod(t *testing.T, ns, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
	p, err := c.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// KubeconfigFor writes a kubeconfig that is the admin's with its API server
// replaced by server (an unreachable or failing one), in a directory of the
// test, and returns its path.
func (c *Cluster) KubeconfigFor(t testing.TB, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

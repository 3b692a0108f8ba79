package memlimit_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/memcg"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// limitFactor is the memory limit the exporter must start under, in times
// the RSS it holds once it serves every pod.
const limitFactor = 1.5

// TestStartUnderMemoryLimit loads 10,000 pods, starts the exporter on the
// kube-state-metrics profile once without a limit and reads its RSS once
// it has served a full /metrics twice, then starts it again inside a
// memory cgroup limited to 1.5 times that RSS, with GOMEMLIMIT set to the
// limit in bytes, as deploy/base/deployment.yaml sets it from the
// container's limits.memory, the binary's cached pages dropped first so
// that those it reads count against the limit, as in a container. There it
// must become ready, serve a kube_pod_info series for every pod the API
// server holds, and still run, with no process of the cgroup killed for
// want of memory and the cgroup's peak usage below the limit: never at
// it, where the kernel reclaims the binary's pages and the start slows
// to a crawl.
func TestStartUnderMemoryLimit(t *testing.T) {
	began := time.Now()
	pods := loadPods(t, workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50})
	t.Logf("%d pods held by the API server after %s", pods, time.Since(began).Round(time.Millisecond))
	bin := filepath.Join(filepath.Dir(cluster.DropInBinary(t)), "kubectl-informer")

	free := startExporter(t, exec.Command(bin), nil)
	free.waitFull(t, pods)
	// A second full scrape: the memory the first start needed beyond its
	// caches has been returned by then, and a scrape's buffers are in.
	free.waitFull(t, pods)
	steady := procStatus(t, free.cmd.Process.Pid, "VmRSS:")
	freePeak := procStatus(t, free.cmd.Process.Pid, "VmHWM:")
	anon, file := procStatus(t, free.cmd.Process.Pid, "RssAnon:"), procStatus(t, free.cmd.Process.Pid, "RssFile:")
	free.stop()
	limit := int64(limitFactor * float64(steady))
	t.Logf("without a limit: ready in %s, full in %s; RSS %s once full (anonymous %s, files %s), VmHWM %s (%.2f× that RSS); the limit: %.1f× = %s (%d bytes)",
		free.ready.Round(time.Millisecond), free.full.Round(time.Millisecond), mib(steady), mib(anon), mib(file), mib(freePeak), float64(freePeak)/float64(steady), limitFactor, mib(limit), limit)

	// The pages of the binary the first start read are counted in the
	// test's cgroup until dropped: in a container they count against its
	// limit.
	if err := memcg.DropPageCache(bin); err != nil {
		t.Fatal(err)
	}
	g, err := memcg.New("kubectl-informer-e2e", limit)
	if err != nil {
		t.Fatalf("starting the exporter under a memory limit needs a memory cgroup of its own: %v", err)
	}
	limit = g.Limit // in whole pages
	limited := startExporter(t, g.Command(bin), []string{"GOMEMLIMIT=" + strconv.FormatInt(limit, 10)})
	t.Cleanup(func() {
		// Whatever ended the test, what the kernel counted.
		st, err := g.Stats()
		t.Logf("the cgroup: limit %s, peak %s, %d OOM kills (%v)", mib(st.Limit), mib(st.Peak), st.OOMKills, err)
		limited.stop()
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	})
	limited.waitReady(t, g)
	limited.waitFull(t, pods)
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if limited.exited() {
		t.Errorf("the exporter ended after it was full: %s\n%s", limited.exit, limited.stderr)
	}
	if st.OOMKills != 0 {
		t.Errorf("the kernel killed %d processes of the cgroup for want of memory", st.OOMKills)
	}
	// The limit applied to the exporter: the cgroup has it, and counted
	// the exporter's own memory.
	anon = procStatus(t, limited.cmd.Process.Pid, "RssAnon:")
	if st.Limit != limit || st.Peak < anon {
		t.Errorf("the cgroup's limit is %d bytes and its peak %d, want a limit of %d and a peak of at least the exporter's anonymous memory, %d", st.Limit, st.Peak, limit, anon)
	}
	// The kernel keeps the cgroup's usage from passing its limit (but for
	// forced charges) by reclaiming page cache, the binary's pages among
	// it, which the exporter then reads again, and at last by killing:
	// a start that reaches the limit is one the kernel held back.
	if st.Peak >= st.Limit {
		t.Errorf("the start reached the cgroup's limit (peak %d bytes of %d): the kernel reclaimed memory, the binary's pages among it, to keep it under", st.Peak, st.Limit)
	}
	t.Logf("under the limit: ready in %s, full in %s; the cgroup's peak %s (%.0f%% of the limit); the exporter's VmHWM %s, anonymous memory now %s; the test took %s",
		limited.ready.Round(time.Millisecond), limited.full.Round(time.Millisecond), mib(st.Peak), 100*float64(st.Peak)/float64(limit),
		mib(procStatus(t, limited.cmd.Process.Pid, "VmHWM:")), mib(anon), time.Since(began).Round(time.Second))
}

// loadPods makes the namespaces and nodes of spec through the API server,
// writes its pods, with their statuses, into etcd (two requests per pod
// through the API server would take minutes), and waits until the API
// server lists them all. It returns the number of pods it lists.
func loadPods(t *testing.T, spec workload.Spec) int {
	t.Helper()
	ctx := context.Background()
	spec = spec.Default()
	scaffold := spec
	scaffold.Pods, scaffold.CustomResources = -1, -1 // namespaces and nodes only
	if _, err := workload.Load(ctx, cluster.Config, scaffold, nil); err != nil {
		t.Fatalf("loading the namespaces and nodes: %v", err)
	}
	objs := map[string]runtime.Object{}
	now := metav1.Now()
	for _, p := range spec.PodObjects() {
		// As the API server stores a pod it creates.
		p.ResourceVersion, p.CreationTimestamp = "", now
		objs[fmt.Sprintf("/registry/pods/%s/%s", p.Namespace, p.Name)] = p
	}
	if err := cluster.EtcdPutAll(ctx, objs); err != nil {
		t.Fatal(err)
	}
	var n int
	framework.Eventually(t, fmt.Sprintf("the API server lists the %d pods", len(objs)), func() bool {
		list, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Log(err)
			return false
		}
		n = len(list.Items)
		return n >= len(objs)
	})
	return n
}

// exporter is the exporter's binary running on the kube-state-metrics
// profile.
type exporter struct {
	cmd    *exec.Cmd
	url    string
	stderr *framework.SyncBuffer
	done   chan struct{}
	exit   string // how it ended, once done is closed
	start  time.Time
	// ready and full are when /readyz first answered 200 and /metrics was
	// first full, from the start.
	ready, full time.Duration
}

// startExporter starts cmd, to which it adds the exporter's arguments, with
// env added to the environment, until the test ends.
func startExporter(t *testing.T, cmd *exec.Cmd, env []string) *exporter {
	t.Helper()
	addr := framework.ClosedPort(t)
	cmd.Args = append(cmd.Args, "export", "--kubeconfig="+cluster.Kubeconfig, "--profile=kube-state-metrics", "--web.listen-address="+addr)
	cmd.Env = append(os.Environ(), env...)
	x := &exporter{cmd: cmd, url: "http://" + addr, stderr: &framework.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = x.stderr
	x.start = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		x.exit = "exit status 0"
		if err != nil {
			x.exit = err.Error()
		}
		close(x.done)
	}()
	t.Cleanup(x.stop)
	return x
}

func (x *exporter) exited() bool {
	select {
	case <-x.done:
		return true
	default:
		return false
	}
}

func (x *exporter) stop() {
	if !x.exited() {
		_ = x.cmd.Process.Kill()
	}
	<-x.done
}

// waitReady waits until /readyz answers 200; it fails the test, with what
// the cgroup g counted (when not nil), if the exporter ends first.
func (x *exporter) waitReady(t *testing.T, g *memcg.Group) {
	t.Helper()
	framework.Eventually(t, "the exporter's /readyz answers 200", func() bool {
		if x.exited() {
			counted := ""
			if g != nil {
				st, err := g.Stats()
				counted = fmt.Sprintf("; the cgroup: limit %s, peak %s, %d OOM kills (%v)", mib(st.Limit), mib(st.Peak), st.OOMKills, err)
			}
			t.Fatalf("the exporter ended before it was ready: %s%s\nstderr:\n%s", x.exit, counted, x.stderr)
		}
		resp, err := http.Get(x.url + "/readyz") //nolint:gosec,noctx // G107: the test's own exporter
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	x.ready = time.Since(x.start)
}

// waitFull waits until /metrics holds a kube_pod_info series for each of
// the pods.
func (x *exporter) waitFull(t *testing.T, pods int) {
	t.Helper()
	if x.ready == 0 {
		x.waitReady(t, nil)
	}
	var got int
	framework.Eventually(t, fmt.Sprintf("the exporter's /metrics holds kube_pod_info for the %d pods", pods), func() bool {
		if x.exited() {
			t.Fatalf("the exporter ended: %s\nstderr:\n%s", x.exit, x.stderr)
		}
		n, err := countPodInfo(x.url + "/metrics")
		if err != nil {
			t.Log(err)
			return false
		}
		got = n
		return got == pods
	})
	if x.full == 0 {
		x.full = time.Since(x.start)
	}
}

// countPodInfo scrapes url and counts its kube_pod_info series.
func countPodInfo(url string) (int, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // G107: the test's own exporter
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("kube_pod_info{")) {
			n++
		}
	}
	return n, sc.Err()
}

// procStatus returns a size field of /proc/PID/status (VmRSS:, VmHWM:,
// RssAnon:) in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status: %q", pid, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

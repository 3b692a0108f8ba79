package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// exporterResult is what benchExporter measured.
type exporterResult struct {
	// readies are the times to ready of several starts.
	readies      []time.Duration
	ready        time.Duration
	rssSynced    int64
	scrapes      []time.Duration
	scrapeBytes  int
	series       int
	churnRate    float64 // updates per second achieved
	churnCPU     float64 // cores used by the exporter during the churn
	rssAfter     int64
	churnSeconds float64
}

// benchExporter starts the exporter on config, measures time to ready and
// RSS, scrapes /metrics ten times, then updates pods at rate per second for
// d and measures the exporter's CPU.
func benchExporter(plugin, kubeconfig, config string, cfg *rest.Config, rate int, d time.Duration) (exporterResult, error) {
	var r exporterResult
	// Time to ready varies from start to start: start it a few times.
	for range 4 {
		cmd, _, ready, err := startExporter(plugin, kubeconfig, config)
		if err != nil {
			return r, err
		}
		r.readies = append(r.readies, ready)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	cmd, base, ready, err := startExporter(plugin, kubeconfig, config)
	if err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r.readies = append(r.readies, ready)
	slices.Sort(r.readies)
	r.ready = r.readies[len(r.readies)/2]
	pid := cmd.Process.Pid
	r.rssSynced = procRSS(pid)

	for range 10 {
		t := time.Now()
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return r, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.scrapes = append(r.scrapes, time.Since(t))
		r.scrapeBytes = len(b)
		r.series = 0
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "kube_") {
				r.series++
			}
		}
	}

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // the update rate is the ticker's, not client-go's default 5/s
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return r, err
	}
	cpu0 := procCPU(pid)
	t0 := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	updates := 0
	for time.Since(t0) < d {
		<-tick.C
		p := &pods.Items[updates%len(pods.Items)]
		if len(p.Status.ContainerStatuses) > 0 {
			p.Status.ContainerStatuses[0].RestartCount++
		}
		got, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		if err != nil {
			return r, fmt.Errorf("updating pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		pods.Items[updates%len(pods.Items)] = *got
		updates++
	}
	elapsed := time.Since(t0)
	r.churnSeconds = elapsed.Seconds()
	r.churnRate = float64(updates) / elapsed.Seconds()
	r.churnCPU = (procCPU(pid) - cpu0) / elapsed.Seconds()
	r.rssAfter = procRSS(pid)
	return r, nil
}

// startExporter starts the exporter and waits until /readyz answers 200.
func startExporter(plugin, kubeconfig, config string) (*exec.Cmd, string, time.Duration, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", 0, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(plugin, "export", "--kubeconfig="+kubeconfig, "--config="+config, "--web.listen-address="+addr)
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, "", 0, err
	}
	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, base, time.Since(start), nil
			}
		}
		if time.Since(start) > 2*time.Minute {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, "", 0, fmt.Errorf("the exporter was not ready after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procRSS returns the resident set size of pid in bytes.
func procRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// procCPU returns the CPU seconds pid has used (user + system).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

func (r exporterResult) render() string {
	var b strings.Builder
	s := slices.Clone(r.scrapes)
	slices.Sort(s)
	med := s[len(s)/2]
	fmt.Fprintf(&b, "\n## Exporter (examples/kube-state-metrics-pods.yaml)\n\n")
	fmt.Fprintf(&b, "| measure | kubectl-informer | kube-state-metrics (same workload and series, measured earlier) | target |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| time to ready, median of %d starts (min–max) | %s (%s–%s) | 0.61 s | ≤ 0.61 s |\n", len(r.readies), secs(r.ready), secs(r.readies[0]), secs(r.readies[len(r.readies)-1]))
	fmt.Fprintf(&b, "| RSS after sync | %s | 174 MiB | ≤ 120 MiB |\n", mib(r.rssSynced))
	fmt.Fprintf(&b, "| `/metrics` latency, median of 10 (min–max) | %.1f ms (%.1f–%.1f ms) | 33 ms | ≤ 33 ms |\n",
		ms(med), ms(s[0]), ms(s[len(s)-1]))
	fmt.Fprintf(&b, "| series (`kube_*`), response size | %d, %d KiB | | |\n", r.series, r.scrapeBytes/1024)
	fmt.Fprintf(&b, "| CPU during %.0f pod updates/s for %.0f s | %.2f cores | | |\n", r.churnRate, r.churnSeconds, r.churnCPU)
	fmt.Fprintf(&b, "| RSS after the updates | %s | | |\n", mib(r.rssAfter))
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// floorFlag runs the harness as a bare client-go informer instead: see
// runFloor.
const floorFlag = "informer-floor"

// runFloor is the reference the exporter's time to ready is compared with
// in the same conditions: the least a client-go program does to cache the
// same pods. A SharedInformerFactory with client-go's defaults (HTTP/2,
// WatchList) and protobuf, as kube-state-metrics configures it, one pod
// informer, no handlers and no metrics. It writes "synced N" to stdout once
// the informer has synced (checked every 5 ms, as the harness polls the
// exporter's /readyz), then waits for stdin to close.
func runFloor(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Pods().Informer()
	f.Start(ctx.Done())
	for !inf.HasSynced() {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("synced %d\n", len(inf.GetStore().ListKeys()))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startStats is what one start of a process measured: its time to ready
// (or synced) and to its first full /metrics, its CPU and the API server's
// until then, its peak RSS.
type startStats struct {
	ready, full    time.Duration
	cpu, apiserver float64 // seconds
	hwm            int64
}

// startFloor runs the harness itself as the bare informer (runFloor) and
// measures one start, expecting pods objects.
func startFloor(kubeconfig string, apiserverPID, pods int) (startStats, error) {
	self, err := os.Executable()
	if err != nil {
		return startStats{}, err
	}
	cmd := exec.Command(self, "-"+floorFlag, kubeconfig) //nolint:gosec // G204: this benchmark's own binary, re-run as the floor client
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return startStats{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return startStats{}, err
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	api0 := procCPU(apiserverPID)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return startStats{}, err
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	s := startStats{ready: time.Since(start), apiserver: procCPU(apiserverPID) - api0}
	if err != nil {
		return s, fmt.Errorf("the bare informer: %v\n%s", err, errOut.String())
	}
	s.cpu, s.hwm = procCPU(cmd.Process.Pid), procField(cmd.Process.Pid, "VmHWM:")
	if want := fmt.Sprintf("synced %d\n", pods); line != want {
		return s, fmt.Errorf("the bare informer wrote %q, want %q", line, want)
	}
	return s, nil
}

// transferFlag runs the harness as a plain client of the API server
// instead: see runTransfer.
const transferFlag = "list-transfer"

// Media types of the two list transfers measured.
const (
	protobufType = "application/vnd.kubernetes.protobuf"
	jsonType     = "application/json"
)

// runTransfer is the floor of a one-shot query: one GET of every pod, with
// the credentials of kubeconfig, the body read whole and written to stdout,
// nothing decoded. accept is the media type asked for, which the API server
// must answer with. Compression is not asked for (as curl does not without
// --compressed): on loopback, the API server's gzip costs more than the
// bytes it saves. Several kubeconfigs, comma-separated, are transferred at
// once (see runTransfers).
func runTransfer(kubeconfig, accept string) error {
	if strings.Contains(kubeconfig, ",") {
		return runTransfers(strings.Split(kubeconfig, ","), accept)
	}
	return transfer(kubeconfig, accept, os.Stdout)
}

// transfer makes the GET of runTransfer with kubeconfig, writing the body
// to out.
func transfer(kubeconfig, accept string, out io.Writer) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.DisableCompression = true
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/api/v1/pods", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("GET /api/v1/pods: %s: %s", resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, accept) {
		return fmt.Errorf("GET /api/v1/pods with Accept %q was answered with Content-Type %q", accept, ct)
	}
	w := bufio.NewWriterSize(out, 256<<10)
	if _, err := io.Copy(w, resp.Body); err != nil {
		return err
	}
	return w.Flush()
}

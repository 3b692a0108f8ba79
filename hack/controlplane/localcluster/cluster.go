package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tokens of the two users written into the token file and the kubeconfig.
// The cluster listens on loopback only; the tokens are not secrets.
const (
	adminToken        = "local-admin-token"
	unprivilegedToken = "local-unprivileged-token" //nolint:gosec // G101: a loopback-only test cluster's token, not a secret
)

// cluster is one local control plane, identified by its state directory.
type cluster struct {
	bin string // directory with the etcd and kube-apiserver binaries
	dir string // state directory
}

func (c *cluster) path(name ...string) string {
	return filepath.Join(append([]string{c.dir}, name...)...)
}

func (c *cluster) kubeconfig() string { return c.path("kubeconfig") }

// up starts the control plane unless the one recorded in c.dir is running and ready.
func (c *cluster) up(timeout time.Duration) error {
	if err := c.ready(3 * time.Second); err == nil {
		abs, _ := filepath.Abs(c.kubeconfig())
		fmt.Println(abs)
		return nil
	}
	// Whatever is left of an earlier cluster in c.dir is not usable: stop it.
	if err := c.down(); err != nil {
		return err
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(c.bin, b)); err != nil {
			return fmt.Errorf("%s binary not found in %q: run 'make controlplane' first", b, c.bin)
		}
	}
	if err := os.MkdirAll(c.path("etcd"), 0o700); err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return fmt.Errorf("finding free ports: %w", err)
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	if err := writeCerts(c.dir); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	tokens := fmt.Sprintf("%s,admin,admin-uid,\"system:masters\"\n%s,unprivileged,unprivileged-uid\n",
		adminToken, unprivilegedToken)
	if err := os.WriteFile(c.path("tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	if err := c.start("etcd",
		"--name=local",
		"--data-dir="+c.path("etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=local="+peerURL,
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	); err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if err := c.start("kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+c.path("certs"),
		"--tls-cert-file="+c.path("certs", "apiserver.crt"),
		"--tls-private-key-file="+c.path("certs", "apiserver.key"),
		"--client-ca-file="+c.path("certs", "ca.crt"),
		"--token-auth-file="+c.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer="+server,
		"--service-account-key-file="+c.path("certs", "sa.key"),
		"--service-account-signing-key-file="+c.path("certs", "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// Without kube-controller-manager no "default" service account is
		// ever created, so admission would refuse every pod.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--max-requests-inflight=1000",
		"--max-mutating-requests-inflight=500",
	); err != nil {
		return err
	}
	if err := c.writeKubeconfig(server); err != nil {
		return err
	}
	if err := c.ready(timeout); err != nil {
		return fmt.Errorf("%w\nlast lines of %s:\n%s", err, c.path("kube-apiserver.log"), tail(c.path("kube-apiserver.log"), 15))
	}
	abs, _ := filepath.Abs(c.kubeconfig())
	fmt.Println(abs)
	return nil
}

// start runs a binary in its own session with its output in DIR/NAME.log and
// records its pid in DIR/NAME.pid.
func (c *cluster) start(name string, args ...string) error {
	logf, err := os.Create(c.path(name + ".log"))
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.Command(filepath.Join(c.bin, name), args...) //nolint:gosec // G204: a control-plane binary in the -bin directory the user named
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	if err := os.WriteFile(c.path(name+".pid"), []byte(strconv.Itoa(pid)), 0o600); err != nil {
		return err
	}
	// Start returns as soon as the child's exec has released the parent,
	// which can be before the kernel sets up the new command line: until
	// then /proc/PID/cmdline is empty and running would say it is not.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, ok := c.running(name); ok {
			return nil
		}
	}
	return fmt.Errorf("%s exited right after starting; see %s", name, c.path(name+".log"))
}

// ready polls /readyz until it answers 200 or the timeout passes.
func (c *cluster) ready(timeout time.Duration) error {
	server, err := c.server()
	if err != nil {
		return err
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, ok := c.running(name); !ok {
			return fmt.Errorf("%s is not running", name)
		}
	}
	caPEM, err := os.ReadFile(c.path("certs", "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz answered %s", resp.Status)
		}
		last = err
		if _, ok := c.running("kube-apiserver"); !ok {
			return errors.New("kube-apiserver exited")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s: %w", timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// server reads the API server URL back from the kubeconfig written by up.
func (c *cluster) server() (string, error) {
	b, err := os.ReadFile(c.kubeconfig())
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "server: "); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("no server in %s", c.kubeconfig())
}

// running reports the pid of NAME if the process recorded in DIR/NAME.pid is
// alive and still runs that binary (pids are reused).
func (c *cluster) running(name string) (int, bool) {
	b, err := os.ReadFile(c.path(name + ".pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, false
	}
	exe := strings.SplitN(string(cmdline), "\x00", 2)[0]
	if filepath.Base(exe) != name {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// A zombie has exited; only its parent has not reaped it yet.
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return 0, false
		}
	}
	return pid, true
}

// down stops the processes recorded in c.dir and removes c.dir.
func (c *cluster) down() error {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		pid, ok := c.running(name)
		if !ok {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if _, ok := c.running(name); !ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, ok := c.running(name); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return os.RemoveAll(c.dir)
}

// status prints whether each process runs and whether the API server is ready.
func (c *cluster) status() error {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if pid, ok := c.running(name); ok {
			fmt.Printf("%s: running (pid %d)\n", name, pid)
		} else {
			fmt.Printf("%s: not running\n", name)
		}
	}
	if err := c.ready(2 * time.Second); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	abs, _ := filepath.Abs(c.kubeconfig())
	fmt.Printf("ready; KUBECONFIG=%s\n", abs)
	return nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a log file in the cluster's state directory
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

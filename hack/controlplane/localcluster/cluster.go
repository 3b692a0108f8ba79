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
	"slices"
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

	// node adds a node: kubelet on containerd, kube-proxy, kube-scheduler
	// and kube-controller-manager (node.go).
	node bool
	// images is the directory of image archives imported into the node's
	// containerd.
	images string
	net    nodeNet
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
	// The API server listens on loopback, or with a node on the node's
	// address, which pods reach through the kubernetes Service.
	host := "127.0.0.1"
	var extraIPs []net.IP
	if c.node {
		if err := checkNodePrerequisites(c.bin); err != nil {
			return err
		}
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return err
		}
		if err := c.claimNode(); err != nil {
			return err
		}
		if err := addNodeAddress(c.net); err != nil {
			return err
		}
		host = c.net.ip
		extraIPs = append(extraIPs, net.ParseIP(c.net.ip))
	}
	if err := os.MkdirAll(c.path("etcd"), 0o700); err != nil {
		return err
	}
	ports, err := freePorts(9)
	if err != nil {
		return fmt.Errorf("finding free ports: %w", err)
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	if err := writeCerts(c.dir, extraIPs...); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	if err := writeClientCert(c.dir, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"); err != nil {
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
	server := fmt.Sprintf("https://%s:%d", host, apiPort)
	// Without kube-controller-manager no "default" service account is ever
	// created, so admission would refuse every pod.
	admission := "--disable-admission-plugins=ServiceAccount"
	if c.node {
		admission = "--enable-admission-plugins=ServiceAccount"
	}
	if err := c.start("kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address="+host,
		"--advertise-address="+host,
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
		admission,
		"--kubelet-client-certificate="+c.path("certs", "apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+c.path("certs", "apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		"--max-requests-inflight=1000",
		"--max-mutating-requests-inflight=500",
	); err != nil {
		return err
	}
	if err := c.writeKubeconfig(server); err != nil {
		return err
	}
	if err := c.readyAPIServer(timeout); err != nil {
		return fmt.Errorf("%w\nlast lines of %s:\n%s", err, c.path("kube-apiserver.log"), tail(c.path("kube-apiserver.log"), 15))
	}
	if c.node {
		if err := c.upNode(ports[3:], timeout); err != nil {
			return err
		}
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
	path := filepath.Join(c.bin, name)
	if slices.Contains(hostTools, name) {
		// containerd is the machine's.
		if path, err = exec.LookPath(name); err != nil {
			return err
		}
	}
	cmd := exec.Command(path, args...) //nolint:gosec // G204: a control-plane binary in the -bin directory the user named
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

// ready reports whether every process of the cluster runs and the API
// server is ready, waiting up to timeout.
func (c *cluster) ready(timeout time.Duration) error {
	if err := c.readyAPIServer(timeout); err != nil {
		return err
	}
	if !c.node {
		return nil
	}
	for _, name := range nodeProcesses {
		if _, ok := c.running(name); !ok {
			return fmt.Errorf("%s is not running", name)
		}
	}
	return nil
}

// readyAPIServer polls /readyz until it answers 200 or the timeout passes.
func (c *cluster) readyAPIServer(timeout time.Duration) error {
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

// down stops the processes recorded in c.dir, removes what a node left on
// the machine, and removes c.dir.
func (c *cluster) down() error {
	var errs []error
	if c.hasNode() {
		errs = append(errs, c.downNode())
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		c.stop(name)
	}
	return errors.Join(append(errs, os.RemoveAll(c.dir))...)
}

// status prints whether each process runs and whether the API server is ready.
func (c *cluster) status() error {
	names := []string{"etcd", "kube-apiserver"}
	if c.hasNode() {
		names = append(names, nodeProcesses...)
	}
	for _, name := range names {
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

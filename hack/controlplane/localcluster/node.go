package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The node: one kubelet on containerd, with kube-scheduler,
// kube-controller-manager and kube-proxy, all on this machine. Its address is
// on a bridge of its own, since kubelet refuses a loopback node IP; the
// bridge CNI plugin attaches the pods to the same bridge, which is also
// their gateway. Only one node can run on a
// machine at a time: kube-proxy's iptables chains and the kubepods cgroups
// are the machine's.
const (
	// NodeName is the name the kubelet registers.
	nodeName = "kubectl-informer-node"
	// bridgeLink is the bridge holding the node's address, which the
	// bridge CNI plugin attaches the pods to.
	bridgeLink = "kinf-br0"
	// PauseImage is the sandbox image containerd starts for every pod; it
	// is built locally (hack/nodeimages) and imported.
	pauseImage = "kubectl-informer.test/pause:1"
	// cniBinDir is where Debian's containernetworking-plugins installs.
	cniBinDir = "/usr/lib/cni"
	// nodeLock marks the machine's one node, naming its state directory.
	nodeLock = "/run/kubectl-informer-node.dir"
)

// nodeNet is the node's addressing.
type nodeNet struct {
	// ip is the node's address, on bridgeLink, and the pods' gateway (the
	// bridge plugin takes only that address on its bridge).
	ip string
	// podCIDR holds ip and the pods' addresses.
	podCIDR string
}

var defaultNodeNet = nodeNet{ip: "172.29.0.1", podCIDR: "172.29.0.0/24"}

// prefixed is ip with podCIDR's prefix length.
func (n nodeNet) prefixed() string {
	return n.ip + n.podCIDR[strings.IndexByte(n.podCIDR, '/'):]
}

// nodeProcesses are the node's processes, in the order they start.
var nodeProcesses = []string{"containerd", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"}

// hasNode reports whether the cluster in c.dir was started with a node,
// or holds the machine's node claim.
func (c *cluster) hasNode() bool {
	if fileExists(c.path("node")) {
		return true
	}
	b, err := os.ReadFile(nodeLock)
	return err == nil && strings.TrimSpace(string(b)) == c.dir
}

// nodeBinaries are the node's programs, built into -bin next to
// kube-apiserver.
var nodeBinaries = []string{"kubelet", "kube-proxy", "kube-scheduler", "kube-controller-manager"}

// hostTools are the programs the node needs from the machine (Debian's
// containerd, runc, containernetworking-plugins, iptables and iproute2).
var hostTools = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip"}

// checkNodePrerequisites names whatever the node cannot run without.
func checkNodePrerequisites(bin string) error {
	var missing []string
	for _, b := range nodeBinaries {
		if !fileExists(filepath.Join(bin, b)) {
			missing = append(missing, filepath.Join(bin, b)+" (run 'make node')")
		}
	}
	for _, t := range hostTools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t+" (run 'make node-deps')")
		}
	}
	if !fileExists(filepath.Join(cniBinDir, "bridge")) {
		missing = append(missing, filepath.Join(cniBinDir, "bridge")+" (run 'make node-deps')")
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root: the node runs containers, mounts and iptables rules")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the node cannot start without:\n  %s", strings.Join(missing, "\n  "))
	}
	return nil
}

// claimNode records c.dir as the machine's node, unless another running
// node holds the claim.
func (c *cluster) claimNode() error {
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(nodeLock); err == nil {
		other := strings.TrimSpace(string(b))
		if other != abs {
			o := &cluster{bin: c.bin, dir: other}
			if _, ok := o.running("kubelet"); ok {
				return fmt.Errorf("a node of the local cluster in %s runs on this machine, and only one can: stop it with 'localcluster down -dir %s' (make cluster-down)", other, other)
			}
			// The other node is gone: clear what it left behind.
			if err := o.downNode(); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(nodeLock, []byte(abs+"\n"), 0o600)
}

// upNode starts the node's processes against the running API server on
// ports and imports the images in c.images; c.net's address is already on
// bridgeLink.
func (c *cluster) upNode(ports []int, timeout time.Duration) error {
	kcPort, schedPort, kubeletPort, kubeletHealthz, proxyMetrics, proxyHealthz := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	for _, d := range []string{"containerd", "kubelet", "cni", "pod-logs", "volumes"} {
		if err := os.MkdirAll(c.path("node", d), 0o700); err != nil {
			return err
		}
	}
	if err := c.writeNodeFiles(); err != nil {
		return err
	}
	// The bridge carries pod-to-service traffic back to pods on the same
	// bridge only when bridged packets pass iptables (kube-proxy's DNAT).
	for k, v := range map[string]string{
		"/proc/sys/net/bridge/bridge-nf-call-iptables": "1",
		"/proc/sys/net/ipv4/ip_forward":                "1",
	} {
		if err := os.WriteFile(k, []byte(v), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: setting %s: %v (service traffic between pods may not work)\n", k, err)
		}
	}
	if err := c.start("containerd", "--config", c.path("node", "containerd", "config.toml")); err != nil {
		return err
	}
	if err := c.waitContainerd(timeout); err != nil {
		return fmt.Errorf("%w\nlast lines of %s:\n%s", err, c.path("containerd.log"), tail(c.path("containerd.log"), 15))
	}
	if err := c.importImages(c.images); err != nil {
		return err
	}
	kubeconfig := c.kubeconfig()
	if err := c.start("kube-controller-manager",
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(kcPort),
		"--root-ca-file="+c.path("certs", "ca.crt"),
		"--service-account-private-key-file="+c.path("certs", "sa.key"),
		"--cluster-signing-cert-file="+c.path("certs", "ca.crt"),
		"--cluster-signing-key-file="+c.path("certs", "ca.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// The sample workload's nodes have no kubelet: the node lifecycle
		// controller marks them unreachable, and taint eviction would then
		// delete their pods.
		"--controllers=*,-taint-eviction-controller",
		"--concurrent-gc-syncs=5",
	); err != nil {
		return err
	}
	if err := c.start("kube-scheduler",
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(schedPort),
	); err != nil {
		return err
	}
	if err := c.writeKubeletConfig(kubeletPort, kubeletHealthz); err != nil {
		return err
	}
	if err := c.start("kubelet",
		"--config="+c.path("node", "kubelet", "config.yaml"),
		"--kubeconfig="+kubeconfig,
		"--root-dir="+c.path("node", "kubelet"),
		"--cert-dir="+c.path("node", "kubelet", "pki"),
		"--hostname-override="+nodeName,
		"--node-ip="+c.net.ip,
	); err != nil {
		return err
	}
	if err := c.writeKubeProxyConfig(kubeconfig, proxyMetrics, proxyHealthz); err != nil {
		return err
	}
	if err := c.start("kube-proxy", "--config="+c.path("node", "kube-proxy.yaml")); err != nil {
		return err
	}
	return c.waitNodeReady(timeout)
}

// writeNodeFiles writes containerd's config and the CNI network.
func (c *cluster) writeNodeFiles() error {
	ctrd := c.path("node", "containerd")
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  # Writing a negative oom_score_adj can be denied (in a container, say);
  # without this runc then fails every sandbox.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
    max_conf_num = 1
`, filepath.Join(ctrd, "root"), filepath.Join(ctrd, "state"), c.containerdSocket(), c.containerdSocket()+".ttrpc",
		filepath.Join(ctrd, "opt"), pauseImage, filepath.Join(ctrd, "runc"), cniBinDir, c.path("node", "cni"))
	if err := os.WriteFile(filepath.Join(ctrd, "config.toml"), []byte(config), 0o600); err != nil {
		return err
	}
	network := fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "kubectl-informer",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`, bridgeLink, c.path("node", "cni-ipam"), c.net.podCIDR, c.net.ip)
	return os.WriteFile(c.path("node", "cni", "10-kubectl-informer.conflist"), []byte(network), 0o600)
}

func (c *cluster) containerdSocket() string {
	return c.path("node", "containerd", "containerd.sock")
}

// waitContainerd waits until containerd answers on its socket.
func (c *cluster) waitContainerd(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := c.ctr("version")
		if err == nil {
			return nil
		}
		if _, ok := c.running("containerd"); !ok {
			return errors.New("containerd exited")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd not answering after %s: %v: %s", timeout, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctr runs Debian's ctr against the node's containerd, in the namespace
// the CRI plugin (so the kubelet) uses.
func (c *cluster) ctr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.containerdSocket(), "--namespace", "k8s.io"}, args...)...) //nolint:gosec // G204: Debian's ctr on the node's own socket
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// importImages imports every image archive in dir: NAME.tar holds an OCI
// image layout whose index names its image by the annotation
// io.containerd.image.name.
func (c *cluster) importImages(dir string) error {
	if dir == "" {
		return nil
	}
	archives, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return err
	}
	if len(archives) == 0 {
		return fmt.Errorf("no image archives (*.tar) in %s: run 'make node-images'", dir)
	}
	sort.Strings(archives)
	for _, a := range archives {
		if out, err := c.ctr("images", "import", a); err != nil {
			return fmt.Errorf("importing %s into the node's containerd: %v: %s", a, err, out)
		}
	}
	out, err := c.ctr("images", "list", "--quiet")
	if err != nil {
		return fmt.Errorf("listing the node's images: %v: %s", err, out)
	}
	if !slices.Contains(strings.Fields(out), pauseImage) {
		return fmt.Errorf("the images in %s lack the sandbox image %s: run 'make node-images'", dir, pauseImage)
	}
	return nil
}

// writeKubeletConfig writes the kubelet's configuration file and its
// serving certificate.
func (c *cluster) writeKubeletConfig(port, healthzPort int) error {
	if err := writeServingCert(c.dir, "kubelet", []string{nodeName, "localhost"}, []net.IP{net.ParseIP(c.net.ip), net.ParseIP("127.0.0.1")}); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The machine's cgroup hierarchy may be v1.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
port: %[3]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[4]d
tlsCertFile: %[5]s
tlsPrivateKeyFile: %[6]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[7]s
authorization:
  mode: Webhook
podLogsDirectory: %[8]s
resolvConf: /etc/resolv.conf
registerNode: true
# Images are imported, never pulled: none may be collected.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# The machine is shared with builds and tests: evict only when nearly full.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
evictionPressureTransitionPeriod: 10s
serializeImagePulls: false
nodeStatusReportFrequency: 10s
syncFrequency: 10s
fileCheckFrequency: 10s
`, c.containerdSocket(), c.net.ip, port, healthzPort,
		c.path("certs", "kubelet.crt"), c.path("certs", "kubelet.key"), c.path("certs", "ca.crt"), c.path("node", "pod-logs"))
	return os.WriteFile(c.path("node", "kubelet", "config.yaml"), []byte(config), 0o600)
}

func (c *cluster) writeKubeProxyConfig(kubeconfig string, metricsPort, healthzPort int) error {
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
mode: iptables
hostnameOverride: %s
bindAddress: %s
metricsBindAddress: 127.0.0.1:%d
healthzBindAddress: 127.0.0.1:%d
clusterCIDR: %s
# Leave the machine's conntrack table size alone.
conntrack:
  maxPerCore: 0
iptables:
  localhostNodePorts: false
`, kubeconfig, nodeName, c.net.ip, metricsPort, healthzPort, c.net.podCIDR)
	return os.WriteFile(c.path("node", "kube-proxy.yaml"), []byte(config), 0o600)
}

// waitNodeReady waits until the node reports Ready.
func (c *cluster) waitNodeReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		for _, name := range nodeProcesses {
			if _, ok := c.running(name); !ok {
				return fmt.Errorf("%s exited; last lines of %s:\n%s", name, c.path(name+".log"), tail(c.path(name+".log"), 15))
			}
		}
		out, err := c.kubectl("get", "node", nodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err == nil && strings.TrimSpace(out) == "True" {
			return nil
		}
		last = strings.TrimSpace(out)
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready after %s (%s); last lines of %s:\n%s", nodeName, timeout, last,
				c.path("kubelet.log"), tail(c.path("kubelet.log"), 15))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// kubectl runs the kubectl next to the binaries against the cluster.
func (c *cluster) kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig()}, args...)...) //nolint:gosec // G204: the kubectl in the -bin directory the user named
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// addNodeAddress makes the pods' bridge and puts the node's address on it.
func addNodeAddress(n nodeNet) error {
	if _, err := net.InterfaceByName(bridgeLink); err != nil {
		if out, err := exec.Command("ip", "link", "add", bridgeLink, "type", "bridge").CombinedOutput(); err != nil {
			return fmt.Errorf("ip link add %s type bridge: %v: %s", bridgeLink, err, out)
		}
	}
	if out, err := exec.Command("ip", "addr", "replace", n.prefixed(), "dev", bridgeLink).CombinedOutput(); err != nil { //nolint:gosec // G204: the node's own address
		return fmt.Errorf("ip addr replace %s dev %s: %v: %s", n.ip, bridgeLink, err, out)
	}
	if out, err := exec.Command("ip", "link", "set", bridgeLink, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set %s up: %v: %s", bridgeLink, err, out)
	}
	return nil
}

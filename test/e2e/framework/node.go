package framework

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NodeName is the node localcluster -node registers.
const NodeName = "kubectl-informer-node"

// Images on the node, imported by localcluster from the archives
// hack/nodeimages writes (make node-images); pods never pull.
const (
	// TestappImage is hack/nodeimages/testapp: serve, exit, oom, sleep.
	TestappImage = "kubectl-informer.test/testapp:1"
	// ProjectImage is the project's image from make image.
	ProjectImage = "ghcr.io/kubectl-informer/kubectl-informer:dev"
)

// StartNode starts a control plane with a node that runs pods, with
// localcluster up -node (kubelet on containerd, kube-proxy, kube-scheduler
// and kube-controller-manager), in a directory of its own; Stop takes it
// down with localcluster down. It needs root, the node's binaries and the
// images: make node builds and installs them.
//
// With NODE_CLUSTER_DIR set, it uses the running node cluster of that
// state directory (make cluster-up NODE=1: _output/cluster) and leaves it
// running: tests make their own namespaces, and name what is cluster-wide
// after them.
func StartNode() (*Cluster, error) {
	root, bin, err := binDir()
	if err != nil {
		return nil, err
	}
	images := os.Getenv("NODE_IMAGES")
	if images == "" {
		images = filepath.Join(root, "_output", "node-images")
	}
	if _, err := os.Stat(filepath.Join(bin, "localcluster")); err != nil {
		return nil, fmt.Errorf("localcluster not found in %s: run 'make node' (or 'make test', which builds it)", bin)
	}
	dir, err := os.MkdirTemp("", "kubectl-informer-e2e-node-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Root: root, BinDir: bin, nodeDir: filepath.Join(dir, "cluster")}
	if shared := os.Getenv("NODE_CLUSTER_DIR"); shared != "" {
		if c.nodeDir, err = filepath.Abs(shared); err != nil {
			return nil, err
		}
		c.sharedNode = true
		status := exec.Command(filepath.Join(bin, "localcluster"), "status", "-dir", c.nodeDir) //nolint:gosec // G204: the project's localcluster
		if out, err := status.CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("NODE_CLUSTER_DIR=%s: localcluster status: %w\n%s", shared, err, out)
		}
	} else {
		up := exec.Command(filepath.Join(bin, "localcluster"), "up", "-node", "-bin", bin, "-dir", c.nodeDir, "-images", images, "-timeout", HangTimeout.String()) //nolint:gosec // G204: the project's localcluster
		if out, err := up.CombinedOutput(); err != nil {
			_ = c.Stop()
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("localcluster up -node: %w\n%s", err, out)
		}
	}
	c.Dir = dir
	c.Kubeconfig = filepath.Join(c.nodeDir, "kubeconfig")
	if c.Config, err = contextConfig(c.Kubeconfig, "local"); err != nil {
		_ = c.Stop()
		return nil, err
	}
	if c.UnprivilegedConfig, err = contextConfig(c.Kubeconfig, "local-unprivileged"); err != nil {
		_ = c.Stop()
		return nil, err
	}
	c.UnprivilegedKubeconfig = filepath.Join(c.Dir, "unprivileged.kubeconfig")
	raw, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err == nil {
		raw.CurrentContext = "local-unprivileged"
		err = clientcmd.WriteToFile(*raw, c.UnprivilegedKubeconfig)
	}
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// stopNode takes down the cluster StartNode started and checks that it
// left nothing behind.
func (c *Cluster) stopNode() error {
	if c.sharedNode {
		return os.RemoveAll(c.Dir)
	}
	down := exec.Command(filepath.Join(c.BinDir, "localcluster"), "down", "-bin", c.BinDir, "-dir", c.nodeDir) //nolint:gosec // G204: the project's localcluster
	out, err := down.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("localcluster down: %w\n%s", err, out)
	}
	return errors.Join(err, nodeLeftovers(c.nodeDir), os.RemoveAll(filepath.Dir(c.nodeDir)))
}

// nodeLeftovers names what a node whose state directory was dir left on
// the machine after localcluster down: a process whose command line names
// dir, a mount under dir, the node's bridge, a kubepods cgroup, or one of
// the kubelet's or kube-proxy's iptables chains.
func nodeLeftovers(dir string) error {
	var left []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), dir) {
			if stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat")); err == nil && !strings.Contains(string(stat), ") Z ") {
				left = append(left, "process "+p.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir) {
				left = append(left, "mount "+f[4])
			}
		}
	}
	if _, err := net.InterfaceByName("kinf-br0"); err == nil {
		left = append(left, "network interface kinf-br0")
	}
	for _, cg := range []string{"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/kubepods"} {
		if _, err := os.Stat(cg); err == nil {
			left = append(left, "cgroup "+cg)
		}
	}
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		if out, err := exec.Command(tool).Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, ":KUBE-") {
					left = append(left, tool+" chain "+strings.Fields(l)[0][1:])
				}
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("localcluster down left behind:\n  %s", strings.Join(left, "\n  "))
	}
	return nil
}

// IsNode reports whether c runs a node (StartNode).
func (c *Cluster) IsNode() bool { return c.nodeDir != "" }

// NodeDir is the state directory of the node's cluster: its processes'
// logs are NAME.log there.
func (c *Cluster) NodeDir() string { return c.nodeDir }

// MainNode is Main for a package that runs on a node: it starts the
// cluster with StartNode.
func MainNode(m *testing.M, c **Cluster, setup ...func(*Cluster) error) int {
	return run(m, c, StartNode, setup...)
}

// contextConfig is the REST config of context name in the kubeconfig at
// path.
func contextConfig(path, name string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
}

// Command localcluster starts, inspects and stops a local etcd + kube-apiserver
// pair on loopback, for the demo and for commands run by hand, and with -node
// a node on this machine that runs pods.
//
//	localcluster up     -bin _output/bin -dir _output/cluster [-node -images DIR]
//	localcluster status -dir _output/cluster
//	localcluster down   -dir _output/cluster
//
// "up" is idempotent: when the cluster recorded in -dir is running and ready
// it only prints the kubeconfig path. It picks free ports, generates a CA, a
// serving certificate and service-account keys, starts both processes in
// their own session (so they outlive the caller), waits for /readyz and writes
// DIR/kubeconfig with two contexts: "local" (cluster-admin, the current one)
// and "local-unprivileged" (authenticated, but bound to no RBAC role).
//
// With -node (as root), the API server listens on the node's address
// (172.29.0.1, on the bridge kinf-br0) instead of loopback,
// and up also starts kube-controller-manager, kube-scheduler, containerd
// (Debian's, with a configuration, root and socket under DIR/node),
// kubelet and kube-proxy, imports the OCI archives in -images into
// containerd, and waits until the node kubectl-informer-node is Ready. Pods
// get the other addresses of 172.29.0.0/24 on the same bridge. One node can run
// on a machine at a time.
//
// "down" stops exactly the processes recorded in DIR, and with a node every
// container, unmounts what is mounted under DIR, removes the kubepods
// cgroups, kube-proxy's iptables rules and the node's interfaces, then
// removes DIR.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bin := fs.String("bin", "_output/bin", "directory holding the etcd and kube-apiserver binaries (and with -node the node's)")
	dir := fs.String("dir", "_output/cluster", "state directory: certificates, data, logs, pids, kubeconfig")
	timeout := fs.Duration("timeout", 90*time.Second, "how long to wait for /readyz, and for the node to be Ready")
	node := fs.Bool("node", false, "up: start a node that runs pods (kubelet, containerd, kube-proxy, kube-scheduler, kube-controller-manager); needs root")
	images := fs.String("images", "", "up -node: directory of OCI image archives (*.tar) to import into the node's containerd")
	_ = fs.Parse(os.Args[2:])

	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		os.Exit(1)
	}
	c := &cluster{bin: *bin, dir: abs, node: *node, images: *images, net: defaultNodeNet}
	switch os.Args[1] {
	case "up":
		err = c.up(*timeout)
	case "down":
		err = c.down()
	case "status":
		err = c.status()
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: localcluster up|status|down [-bin DIR] [-dir DIR] [-timeout D] [-node] [-images DIR]")
	os.Exit(2)
}

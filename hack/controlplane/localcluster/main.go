// Command localcluster starts, inspects and stops a local etcd + kube-apiserver
// pair on loopback, for the demo and for commands run by hand.
//
//	localcluster up     -bin _output/bin -dir _output/cluster
//	localcluster status -dir _output/cluster
//	localcluster down   -dir _output/cluster
//
// "up" is idempotent: when the cluster recorded in -dir is running and ready
// it only prints the kubeconfig path. It picks free ports, generates a CA, a
// serving certificate and service-account keys, starts both processes in
// their own session (so they outlive the caller), waits for /readyz and writes
// DIR/kubeconfig with two contexts: "local" (cluster-admin, the current one)
// and "local-unprivileged" (authenticated, but bound to no RBAC role).
// "down" stops exactly the processes recorded in DIR and removes DIR.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bin := fs.String("bin", "_output/bin", "directory holding the etcd and kube-apiserver binaries")
	dir := fs.String("dir", "_output/cluster", "state directory: certificates, data, logs, pids, kubeconfig")
	timeout := fs.Duration("timeout", 90*time.Second, "how long to wait for /readyz")
	_ = fs.Parse(os.Args[2:])

	c := &cluster{bin: *bin, dir: *dir}
	var err error
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
	fmt.Fprintln(os.Stderr, "usage: localcluster up|status|down [-bin DIR] [-dir DIR] [-timeout D]")
	os.Exit(2)
}

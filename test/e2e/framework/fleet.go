package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/internal/kubeconfigs"
)

// MainFleet runs a test package against n fresh control planes, stored in
// *cs for the tests, after running setup on each (with its index). It
// isolates the tests from the developer's kubeconfig as Main does, with
// the first cluster's.
func MainFleet(m *testing.M, cs *[]*Cluster, n int, setup func(i int, c *Cluster) error) int {
	var started []*Cluster
	stop := func() {
		for _, c := range started {
			_ = c.Stop()
		}
	}
	for i := range n {
		c, err := Start()
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: cluster %d: %v\n", i, err)
			stop()
			return 1
		}
		started = append(started, c)
		if setup != nil {
			if err := setup(i, c); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: setup of cluster %d: %v\n", i, err)
				stop()
				return 1
			}
		}
	}
	*cs = started
	first := started[0]
	err := errors.Join(
		os.Setenv("KUBECONFIG", first.Kubeconfig),
		os.Setenv("XDG_CONFIG_HOME", first.Dir),
		os.Setenv("KUBECACHEDIR", filepath.Join(first.Dir, "cache")),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		stop()
		return 1
	}
	code := m.Run()
	for _, c := range started {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: stopping a control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// FleetKubeconfig writes, in dir, a kubeconfig with a context per cluster,
// named by names (in order), each with the cluster's admin credentials,
// the first current, and returns its path.
func FleetKubeconfig(dir string, clusters []*Cluster, names []string) (string, error) {
	sources := make([]string, len(clusters))
	for i, c := range clusters {
		sources[i] = c.Kubeconfig
	}
	path := filepath.Join(dir, "fleet.kubeconfig")
	return path, kubeconfigs.Merge(path, sources, names)
}

// AddUnreachableContext adds to the kubeconfig at path a context name
// whose server is a loopback port where nothing listens, with the
// credentials of the current context.
func AddUnreachableContext(t testing.TB, path, name string) {
	t.Helper()
	if err := kubeconfigs.AddContext(path, name, "https://"+ClosedPort(t)); err != nil {
		t.Fatal(err)
	}
}

// Package serve_test runs "kubectl informer serve" against a real
// kube-apiserver holding the sample workload and sends it queries with
// "kubectl informer query --query-server" as several users: each must get
// exactly what a local query prints, restricted to what that user may
// list, or be refused as the API server would refuse it.
package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

var (
	cluster *framework.Cluster
	spec    = workload.Spec{Namespaces: 3, Nodes: 4, Pods: 90, PodsPerDeployment: 10}
	// configFile is the QueryConfig both the servers and the local
	// queries read: an index per served resource, none of which fails on
	// any object of the workload, so that a local query prints no index
	// warnings.
	configFile string
)

const config = `apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods:
    byNode: object.spec.?nodeName.orValue("")
  nodes:
    byZone: object.metadata.labels["topology.kubernetes.io/zone"]
  deployments:
    byApp: object.metadata.labels["app"]
`

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, framework.LoadWorkload(spec), writeConfig))
}

// writeConfig writes the config file into the cluster's directory, which
// Stop removes.
func writeConfig(c *framework.Cluster) error {
	configFile = filepath.Join(c.Dir, "serve-config.yaml")
	return os.WriteFile(configFile, []byte(config), 0o600)
}

// result is what one run of the plugin did.
type result struct {
	code        int
	out, errOut string
}

// run runs "kubectl informer ARGS" in process and returns what it printed
// and its exit code.
func run(t *testing.T, args ...string) result {
	t.Helper()
	code, out, errOut := framework.RunPlugin(context.Background(), nil, args...)
	return result{code: code, out: out, errOut: errOut}
}

// localQuery runs "kubectl informer query ARGS" as the admin, with the
// config file, from caches of its own.
func localQuery(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, append([]string{"query", "--kubeconfig", cluster.Kubeconfig, "--config", configFile}, args...)...)
}

package framework

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
)

// ChartDir is the project's Helm chart.
func (c *Cluster) ChartDir() string { return filepath.Join(c.Root, "charts", "kubectl-informer") }

// LoadChart loads the project's Helm chart.
func (c *Cluster) LoadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(c.ChartDir())
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// ChartValuesFile reads a values file of the chart's ci/ directory.
func (c *Cluster) ChartValuesFile(t testing.TB, name string) map[string]any {
	t.Helper()
	return ValuesFile(t, filepath.Join(c.ChartDir(), "ci", name))
}

// ValuesFile reads the Helm values file at path.
func ValuesFile(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // G304: the test's own fixture
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return vals
}

// MergeValues returns base with the keys of over set, recursively.
func MergeValues(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = MergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// helmConfig is Helm's configuration for the cluster's admin, with
// releases stored as Secrets of namespace, as the helm CLI stores them.
func (c *Cluster) helmConfig(t testing.TB, namespace string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	kubeconfig, cacheDir := c.Kubeconfig, t.TempDir()
	flags.KubeConfig, flags.Namespace, flags.CacheDir = &kubeconfig, &namespace, &cacheDir
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmWait is how Helm waits after installing: on a node until every
// object is ready (helm --wait: Deployments by their pods' probes), else
// only for hooks (there are none), since no pod runs.
func (c *Cluster) helmWait() kube.WaitStrategy {
	if c.IsNode() {
		return kube.StatusWatcherStrategy
	}
	return kube.HookOnlyStrategy
}

// HelmInstall installs the project's chart as release name in namespace
// (created if missing) with vals; on a node it returns once every object
// is ready.
func (c *Cluster) HelmInstall(t testing.TB, name, namespace string, vals map[string]any) *release.Release {
	t.Helper()
	return c.HelmInstallChart(t, c.ChartDir(), name, namespace, vals, nil)
}

// HelmInstallChart installs the chart of directory chartDir as release
// name in namespace (created if missing) with vals, as helm install does;
// post, unless nil, edits the rendered manifests before they are applied
// (helm install --post-renderer). On a node it returns once every object
// is ready.
func (c *Cluster) HelmInstallChart(t testing.TB, chartDir, name, namespace string, vals map[string]any, post postrenderer.PostRenderer) *release.Release {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(c.helmConfig(t, namespace))
	in.ReleaseName, in.Namespace, in.CreateNamespace = name, namespace, true
	in.WaitStrategy = c.helmWait()
	in.Timeout = HangTimeout
	in.PostRenderer = post
	rel, err := in.Run(ch, vals)
	if err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
	return rel.(*release.Release)
}

// HelmUpgrade upgrades release name in namespace to the project's chart
// with vals.
func (c *Cluster) HelmUpgrade(t testing.TB, name, namespace string, vals map[string]any) *release.Release {
	t.Helper()
	up := action.NewUpgrade(c.helmConfig(t, namespace))
	up.Namespace = namespace
	up.WaitStrategy = c.helmWait()
	up.Timeout = HangTimeout
	rel, err := up.Run(name, c.LoadChart(t), vals)
	if err != nil {
		t.Fatalf("helm upgrade %s: %v", name, err)
	}
	return rel.(*release.Release)
}

// HelmUninstall uninstalls release name from namespace.
func (c *Cluster) HelmUninstall(t testing.TB, name, namespace string) {
	t.Helper()
	un := action.NewUninstall(c.helmConfig(t, namespace))
	un.WaitStrategy = kube.HookOnlyStrategy
	un.Timeout = HangTimeout
	if _, err := un.Run(name); err != nil {
		t.Fatalf("helm uninstall %s: %v", name, err)
	}
}

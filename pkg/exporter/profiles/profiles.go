package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// KubeStateMetrics is the name of the profile that reproduces
// kube-state-metrics' default metric families.
const KubeStateMetrics = "kube-state-metrics"

//go:embed kube-state-metrics/*.yaml kube-state-metrics/size-bounds.json
var files embed.FS

// sizeBoundsFile is the file of a profile that holds the size bounds of
// its expressions (see SizeBounds).
const sizeBoundsFile = "size-bounds.json"

// SizeBounds returns the size bounds of the expressions of the profile
// name that track their cost, as checking them against the schemas of the
// API server finds them, in the JSON that exporter.Compiled.SizeBounds
// writes; nil when the profile has none. The exporter reads them instead
// of the schemas: TestProfileChecks in test/e2e/profile computes them
// (and writes them with UPDATE_SIZE_BOUNDS=1).
func SizeBounds(name string) []byte {
	data, err := fs.ReadFile(files, path.Join(name, sizeBoundsFile))
	if err != nil {
		return nil
	}
	return data
}

// File is one config file of a profile.
type File struct {
	// Resource is the resource the file's config watches, as named by the
	// file (its base name without .yaml): "pods", "deployments".
	Resource string
	// Path is the file's path inside the profile set, "kube-state-metrics/pods.yaml",
	// used in messages.
	Path string
	// Data is the file's content.
	Data []byte
	// Default: the profile serves the file unless a selection of
	// resources leaves it out; a file not Default is served only when a
	// selection names its resource, as kube-state-metrics serves its
	// resources outside its --resources default.
	Default bool
}

// Names returns the names of the profiles, sorted.
func Names() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// Files returns the config files of the profile name, sorted by resource.
// An unknown name is an error that lists the known ones.
func Files(name string) ([]File, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("unknown profile %q: the profiles are %s", name, strings.Join(Names(), ", "))
	}
	entries, err := fs.ReadDir(files, name)
	if err != nil {
		return nil, fmt.Errorf("reading profile %q: %w", name, err)
	}
	var out []File
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		p := path.Join(name, e.Name())
		data, err := fs.ReadFile(files, p)
		if err != nil {
			return nil, fmt.Errorf("reading profile %q: %w", name, err)
		}
		res := strings.TrimSuffix(e.Name(), ".yaml")
		out = append(out, File{Resource: res, Path: p, Data: data, Default: name != KubeStateMetrics || !slices.Contains(kubeStateMetricsOptIn, res)})
	}
	return out, nil
}

// FileOf returns the config file of resource in the profile name.
func FileOf(name, resource string) (File, error) {
	fs, err := Files(name)
	if err != nil {
		return File{}, err
	}
	for _, f := range fs {
		if f.Resource == resource {
			return f, nil
		}
	}
	return File{}, fmt.Errorf("profile %q has no file for resource %q", name, resource)
}

// kubeStateMetricsResources are the resources kube-state-metrics v2.20
// can serve (its --resources), whether or not the profile has them yet.
var kubeStateMetricsResources = []string{
	"certificatesigningrequests", "clusterrolebindings", "clusterroles", "configmaps", "cronjobs",
	"daemonsets", "deployments", "endpoints", "endpointslices", "horizontalpodautoscalers",
	"ingressclasses", "ingresses", "jobs", "leases", "limitranges", "mutatingadmissionpolicies",
	"mutatingadmissionpolicybindings", "mutatingwebhookconfigurations", "namespaces",
	"networkpolicies", "nodes", "persistentvolumeclaims", "persistentvolumes",
	"poddisruptionbudgets", "pods", "replicasets", "replicationcontrollers", "resourcequotas",
	"rolebindings", "roles", "secrets", "serviceaccounts", "services", "statefulsets",
	"storageclasses", "validatingadmissionpolicies", "validatingadmissionpolicybindings",
	"validatingwebhookconfigurations", "volumeattachments",
}

// kubeStateMetricsOptIn are the resources of the profile that
// kube-state-metrics v2.20 does not serve by default (they are not in its
// --resources default).
var kubeStateMetricsOptIn = []string{"clusterrolebindings", "clusterroles", "endpoints", "ingressclasses", "rolebindings", "roles", "serviceaccounts"}

// kubeStateMetricsOptInFamilies are the families of the profile that
// kube-state-metrics v2.20 serves only when its --metric-opt-in-list
// names them (its opt-in families), sorted.
var kubeStateMetricsOptInFamilies = []string{"kube_persistentvolume_csi_attributes", "kube_pod_nodeselectors"}

// OptInFamilies returns the families of the profile name that are served
// only when a selection opts in to them (see exporter.Selection), sorted;
// the other families of its files are served by default.
func OptInFamilies(name string) []string {
	if name == KubeStateMetrics {
		return slices.Clone(kubeStateMetricsOptInFamilies)
	}
	return nil
}

// KnownResources returns the resources the source the profile name
// follows can serve, including those the profile has no file for yet.
func KnownResources(name string) []string {
	if name == KubeStateMetrics {
		return slices.Clone(kubeStateMetricsResources)
	}
	return nil
}

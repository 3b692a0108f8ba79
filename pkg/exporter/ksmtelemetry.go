package exporter

import (
	"crypto/md5" //nolint:gosec // G501: kube-state-metrics' config hash is an MD5, reproduced here; not for security
	"encoding/binary"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// KubeStateMetricsConfigFile is a file whose hash and last load
// kube_state_metrics_config_hash,
// kube_state_metrics_last_config_reload_successful and
// kube_state_metrics_last_config_reload_success_timestamp_seconds report,
// labeled by its Type and its Path, as kube-state-metrics reports its
// --config file (type "config") and its
// --custom-resource-state-config-file (type "customresourceconfig").
type KubeStateMetricsConfigFile struct {
	Type, Path string
}

// ksmTelemetry is kube-state-metrics' own metrics, with its names, types,
// help and labels, in a registry of their own: served on the telemetry
// listener (on the main /metrics when there is none), as kube-state-metrics
// serves its telemetry registry.
type ksmTelemetry struct {
	x        *Exporter
	registry *prometheus.Registry
	// durations observes the requests to the main /metrics.
	durations *prometheus.HistogramVec

	// mu guards the fields below.
	mu sync.Mutex
	// seen are the request counts of the informers watched at the last
	// collection, and retired the counts of the informers watched then
	// and no longer, by resource label: the counters stay monotonic when
	// a reload replaces informers.
	seen    map[*factory.Informer]requestTotals
	retired map[string]requestTotals
	// typeNames are the resource labels of the kinds met, by kind.
	typeNames map[string]string
	// configs are the states of Options.KubeStateMetricsConfigFiles, in
	// their order.
	configs []configFileState
}

// requestTotals are an informer's list and watch requests and their
// failures.
type requestTotals struct{ lists, listErrors, watches, watchErrors uint64 }

func (r requestTotals) add(o requestTotals) requestTotals {
	return requestTotals{r.lists + o.lists, r.listErrors + o.listErrors, r.watches + o.watches, r.watchErrors + o.watchErrors}
}

// totalsOf reads inf's counts, the failures first: a request is counted
// before its failure, so the requests read after them are never fewer.
func totalsOf(inf *factory.Informer) requestTotals {
	listErrors, watchErrors := inf.Requests.ListErrors.Load(), inf.Requests.WatchErrors.Load()
	return requestTotals{inf.Requests.Lists.Load(), listErrors, inf.Requests.Watches.Load(), watchErrors}
}

// configFileState is what the last load saw of a config file.
type configFileState struct {
	KubeStateMetricsConfigFile
	// read: the file could be read at a load; ok: at the last load,
	// which succeeded; everOK: at one that did.
	read, ok, everOK bool
	hash             float64
	okTime           time.Time
}

func newKSMTelemetry(x *Exporter) *ksmTelemetry {
	k := &ksmTelemetry{x: x, registry: prometheus.NewRegistry(), seen: map[*factory.Informer]requestTotals{},
		retired: map[string]requestTotals{}, typeNames: map[string]string{}}
	for _, f := range x.opts.KubeStateMetricsConfigFiles {
		k.configs = append(k.configs, configFileState{KubeStateMetricsConfigFile: KubeStateMetricsConfigFile{Type: f.Type, Path: filepath.Clean(f.Path)}})
		if f.Type == CustomResourceConfigType {
			x.log.Info("kube_state_metrics_custom_resource_state_* are not reported: the custom resources are resolved when the config loads, by no informer of CustomResourceDefinitions whose events they would count",
				"file", f.Path)
		}
	}
	k.durations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "http_request_duration_seconds",
		Help:        "A histogram of requests for kube-state-metrics metrics handler.",
		Buckets:     prometheus.DefBuckets,
		ConstLabels: prometheus.Labels{"handler": "metrics"},
	}, []string{"method"})
	info := version.Get()
	k.registry.MustRegister(
		versioncollector.NewCollector("kube_state_metrics", versioncollector.WithExtraConstLabels(prometheus.Labels{
			"version": info.Version, "revision": info.Commit, "client_go_version": clientGoVersion(),
		})),
		k.durations,
		k,
	)
	return k
}

// clientGoVersion is the version of k8s.io/client-go built in, as
// kube-state-metrics' build_info has it; "unknown" when not recorded.
func clientGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "k8s.io/client-go" {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return "unknown"
}

var (
	descKSMWatches      = prometheus.NewDesc("kube_state_metrics_watch_total", "Number of total resource watch calls in kube-state-metrics", []string{"result", "resource"}, nil)
	descKSMLists        = prometheus.NewDesc("kube_state_metrics_list_total", "Number of total resource list calls in kube-state-metrics", []string{"result", "resource"}, nil)
	descKSMListObjects  = prometheus.NewDesc("kube_state_metrics_list_objects", "Number of resources listed in kube-state-metrics", []string{"resource"}, nil)
	descKSMListLimit    = prometheus.NewDesc("kube_state_metrics_list_objects_limit", "Number of resource list limit in kube-state-metrics", []string{"resource"}, nil)
	descKSMShardOrdinal = prometheus.NewDesc("kube_state_metrics_shard_ordinal", "Current sharding ordinal/index of this instance", []string{"shard_ordinal"}, nil)
	descKSMTotalShards  = prometheus.NewDesc("kube_state_metrics_total_shards", "Number of total shards this instance is aware of", nil, nil)
	descKSMConfigHash   = prometheus.NewDesc("kube_state_metrics_config_hash", "Hash of the currently loaded configuration.", []string{"type", "filename"}, nil)
	descKSMConfigOK     = prometheus.NewDesc("kube_state_metrics_last_config_reload_successful", "Whether the last configuration reload attempt was successful.", []string{"type", "filename"}, nil)
	descKSMConfigOKTime = prometheus.NewDesc("kube_state_metrics_last_config_reload_success_timestamp_seconds", "Timestamp of the last successful configuration reload.", []string{"type", "filename"}, nil)
	descKSMCRDAdds      = prometheus.NewDesc("kube_state_metrics_custom_resource_state_add_events_total", "Number of times that the CRD informer triggered the add event.", nil, nil)
	descKSMCRDUpdates   = prometheus.NewDesc("kube_state_metrics_custom_resource_state_update_events_total", "Number of times that the CRD informer triggered the update event.", nil, nil)
	descKSMCRDDeletes   = prometheus.NewDesc("kube_state_metrics_custom_resource_state_delete_events_total", "Number of times that the CRD informer triggered the remove event.", nil, nil)
	descKSMCRDCache     = prometheus.NewDesc("kube_state_metrics_custom_resource_state_cache", "Net amount of CRDs affecting the cache currently.", nil, nil)
)

// The types of KubeStateMetricsConfigFile, as kube-state-metrics labels its
// options file and its custom resource state config file.
const (
	OptionsConfigType        = "config"
	CustomResourceConfigType = "customresourceconfig"
)

// Describe implements prometheus.Collector.
func (k *ksmTelemetry) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descKSMWatches, descKSMLists, descKSMListObjects, descKSMListLimit, descKSMShardOrdinal, descKSMTotalShards,
		descKSMConfigHash, descKSMConfigOK, descKSMConfigOKTime, descKSMCRDAdds, descKSMCRDUpdates, descKSMCRDDeletes, descKSMCRDCache} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The list and watch counters
// are the factory's request counts of every informer watched, summed by
// resource label (kube-state-metrics has one reflector per resource and
// namespace, all counted under one label); a series is written once its
// count is not zero, as kube-state-metrics' counters appear once
// incremented.
func (k *ksmTelemetry) Collect(ch chan<- prometheus.Metric) {
	shard := k.x.currentShard()
	ch <- prometheus.MustNewConstMetric(descKSMShardOrdinal, prometheus.GaugeValue, float64(shard.Index), strconv.Itoa(shard.Index))
	ch <- prometheus.MustNewConstMetric(descKSMTotalShards, prometheus.GaugeValue, float64(max(shard.Total, 1)))

	k.mu.Lock()
	defer k.mu.Unlock()
	crs := false
	for _, c := range k.configs {
		crs = crs || c.Type == CustomResourceConfigType
		if !c.read {
			// Not read yet: kube-state-metrics reports a file once it has
			// read it.
			continue
		}
		ok := 0.0
		if c.ok {
			ok = 1
		}
		ch <- prometheus.MustNewConstMetric(descKSMConfigOK, prometheus.GaugeValue, ok, c.Type, c.Path)
		if c.everOK {
			ch <- prometheus.MustNewConstMetric(descKSMConfigHash, prometheus.GaugeValue, c.hash, c.Type, c.Path)
			ch <- prometheus.MustNewConstMetric(descKSMConfigOKTime, prometheus.GaugeValue, float64(c.okTime.Unix()), c.Type, c.Path)
		}
	}
	if !crs {
		// No custom resource state config: kube-state-metrics runs no CRD
		// informer and reports its counters at zero. With one, the
		// resources are resolved when the config loads, by no CRD
		// informer, and these are not reported.
		ch <- prometheus.MustNewConstMetric(descKSMCRDAdds, prometheus.CounterValue, 0)
		ch <- prometheus.MustNewConstMetric(descKSMCRDUpdates, prometheus.CounterValue, 0)
		ch <- prometheus.MustNewConstMetric(descKSMCRDDeletes, prometheus.CounterValue, 0)
		ch <- prometheus.MustNewConstMetric(descKSMCRDCache, prometheus.GaugeValue, 0)
	}

	totals := map[string]requestTotals{}
	objects := map[string]int64{}
	now := map[*factory.Informer]requestTotals{}
	var counts map[*factory.Informer]*cacheCount
	if a := k.x.current(); a != nil {
		counts = a.counts
		for _, w := range a.watched() {
			for _, inf := range w.infs {
				now[inf] = totalsOf(inf)
			}
		}
	}
	for inf := range k.seen {
		if _, still := now[inf]; !still {
			// Its last counts: an informer stopped counts no more.
			label := k.resourceLabel(inf.Resource)
			k.retired[label] = k.retired[label].add(totalsOf(inf))
		}
	}
	k.seen = now
	for label, r := range k.retired {
		totals[label] = r
	}
	for inf, r := range now {
		label := k.resourceLabel(inf.Resource)
		totals[label] = totals[label].add(r)
		if c := counts[inf]; c != nil {
			objects[label] += c.Objects()
		}
	}
	for label, r := range totals {
		for _, c := range []struct {
			lists  bool
			n      uint64
			result string
		}{{true, r.lists - r.listErrors, "success"}, {true, r.listErrors, "error"}, {false, r.watches - r.watchErrors, "success"}, {false, r.watchErrors, "error"}} {
			switch {
			case c.n == 0:
			case c.lists:
				ch <- prometheus.MustNewConstMetric(descKSMLists, prometheus.CounterValue, float64(c.n), c.result, label)
			default:
				ch <- prometheus.MustNewConstMetric(descKSMWatches, prometheus.CounterValue, float64(c.n), c.result, label)
			}
		}
	}
	if limit := k.x.opts.ObjectLimit; limit > 0 {
		for label, n := range objects {
			ch <- prometheus.MustNewConstMetric(descKSMListLimit, prometheus.GaugeValue, float64(limit), label)
			ch <- prometheus.MustNewConstMetric(descKSMListObjects, prometheus.GaugeValue, float64(n), label)
		}
	}
}

// resourceLabel is the resource label kube-state-metrics gives the list
// and watch counters of res: the Go type of the objects its reflector
// decodes, as reflect writes it ("*v1.Pod", "*v2.HorizontalPodAutoscaler");
// "*unstructured.Unstructured" for a kind client-go does not know, such as
// a custom resource. The caller holds mu.
func (k *ksmTelemetry) resourceLabel(res factory.Resource) string {
	gvk := res.GVK.String()
	if name, ok := k.typeNames[gvk]; ok {
		return name
	}
	name := "*unstructured.Unstructured"
	if obj, err := scheme.Scheme.New(res.GVK); err == nil {
		name = reflect.TypeOf(obj).String()
	}
	k.typeNames[gvk] = name
	return name
}

// loaded records a load of the exporter's config (err: its failure):
// each config file is read again, and its hash and time of success kept
// when it can be read; the exporter's config file, when it is one of
// them, succeeds only when the load did.
func (k *ksmTelemetry) loaded(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	configPath := ""
	if k.x.opts.ConfigPath != "" {
		configPath = filepath.Clean(k.x.opts.ConfigPath)
	}
	for i := range k.configs {
		c := &k.configs[i]
		data, readErr := os.ReadFile(c.Path)
		c.read = c.read || readErr == nil
		c.ok = readErr == nil && (err == nil || c.Path != configPath)
		if c.ok {
			c.everOK, c.hash, c.okTime = true, md5HashAsMetricValue(data), time.Now()
		}
	}
}

// md5HashAsMetricValue is the 48 first bits of the MD5 of data as a
// float64 (whose mantissa holds 53), as kube-state-metrics and
// Alertmanager write a config's hash.
func md5HashAsMetricValue(data []byte) float64 {
	sum := md5.Sum(data) //nolint:gosec // G401: see the import
	buf := make([]byte, 8)
	copy(buf, sum[:6])
	return float64(binary.LittleEndian.Uint64(buf))
}

// resourceFilter returns what kube-state-metrics' /metrics parameters
// ask of the families: with resources=a,b (repeatable), only those of
// these resources; with exclude_resources=a,b, not those; both: the
// first less the second. Names are trimmed; empty ones are ignored.
// nil: every family.
func resourceFilter(q url.Values) func(resource string) bool {
	parse := func(params []string) sets.Set[string] {
		if params == nil {
			return nil
		}
		set := sets.New[string]()
		for _, p := range params {
			for _, res := range strings.Split(p, ",") {
				if res = strings.TrimSpace(res); res != "" {
					set.Insert(res)
				}
			}
		}
		return set
	}
	requested, excluded := parse(q["resources"]), parse(q["exclude_resources"])
	if requested == nil && excluded == nil {
		return nil
	}
	return func(resource string) bool {
		return (requested == nil || requested.Has(resource)) && !excluded.Has(resource)
	}
}

// keeping returns which of a's configured resources keep accepts, by
// their index, keep taking each resource by the name kube-state-metrics
// gives it (see ksmResourceName); nil when keep is nil.
func (a *activeConfig) keeping(keep func(resource string) bool) func(i int) bool {
	if keep == nil {
		return nil
	}
	return func(i int) bool {
		if len(a.informers[i]) == 0 {
			return keep(a.names[i])
		}
		return keep(ksmResourceName(a.informers[i][0].Resource))
	}
}

// ksmResourceName is the name kube-state-metrics gives res in --resources
// and ?resources=: the plural of a kind client-go knows ("pods",
// "horizontalpodautoscalers"), and group/version, Resource=plural for
// another, such as a custom resource ("example.com/v1, Resource=foos").
func ksmResourceName(res factory.Resource) string {
	if scheme.Scheme.Recognizes(res.GVK) {
		return res.GVR.Resource
	}
	return res.GVR.String()
}

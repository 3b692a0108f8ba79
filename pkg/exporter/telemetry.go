package exporter

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// TelemetryPrefix starts the name of every metric the exporter reports about
// itself.
const TelemetryPrefix = "kubectl_informer_"

// telemetry is the exporter's own metrics, in a private registry.
type telemetry struct {
	x        *Exporter
	registry *prometheus.Registry
	scrape   prometheus.Histogram
	// computed is the time from an informer event to its series.
	computed prometheus.Histogram

	// mu guards the reload state below.
	mu           sync.Mutex
	reloadOK     bool
	reloadOKTime time.Time
	reloads      map[string]uint64 // by result: success, failure
	hash         string
	everLoaded   bool
	// reachable and contactErrors are how the attempts to reach the API
	// server to load the first config fared (see Exporter.Start).
	reachable     bool
	contactErrors uint64
}

func newTelemetry(x *Exporter) *telemetry {
	t := &telemetry{x: x, registry: prometheus.NewRegistry(), reloads: map[string]uint64{"success": 0, "failure": 0}}
	t.scrape = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    TelemetryPrefix + "scrape_duration_seconds",
		Help:    "Time spent writing the response to a /metrics request.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	t.computed = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    TelemetryPrefix + "event_to_series_seconds",
		Help:    "Time from an informer event reaching the exporter's handler to the series of its object being computed.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	t.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		t.scrape,
		t.computed,
		t,
	)
	return t
}

func (t *telemetry) reloaded(c *Compiled, err error) {
	if t.x.ksm != nil {
		t.x.ksm.loaded(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.reloadOK = false
		t.reloads["failure"]++
		return
	}
	t.reloadOK, t.reloadOKTime, t.everLoaded, t.hash = true, time.Now(), true, c.Hash
	t.reloads["success"]++
}

// contactFailed counts a failed attempt to reach the API server.
func (t *telemetry) contactFailed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reachable = false
	t.contactErrors++
}

// setReachable records whether the API server was reached.
func (t *telemetry) setReachable(ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reachable = ok
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(TelemetryPrefix+name, help, labels, nil)
}

var (
	descBuildInfo    = desc("build_info", "Build information of the running binary; always 1.", "version", "revision", "goversion")
	descObjects      = desc("resource_objects", "Objects in the informer cache of a watched resource: configured, or read by get() and byIndex().", "resource", "namespace")
	descSynced       = desc("resource_synced", "Whether the informer cache of a resource has synced (1) or not (0).", "resource", "namespace")
	descHealthy      = desc("resource_healthy", "Whether the list and watch requests of a resource's informer succeed (1) or have been failing since the last success (0); its series are as last seen while they fail.", "resource", "namespace")
	descEvents       = desc("resource_events_total", "Informer events handled, by resource and type (add, update, delete).", "resource", "type")
	descLastEvent    = desc("resource_last_event_timestamp_seconds", "Unix time of the newest event of a resource.", "resource")
	descLists        = desc("list_requests_total", "List requests made for a resource's informer.", "resource", "namespace")
	descListErrors   = desc("list_request_errors_total", "List requests for a resource's informer that failed.", "resource", "namespace")
	descWatches      = desc("watch_requests_total", "Watch requests made for a resource's informer.", "resource", "namespace")
	descWatchErrors  = desc("watch_request_errors_total", "Watch requests for a resource's informer that failed.", "resource", "namespace")
	descRelists      = desc("relists_total", "Lists of a resource made after the first, when its informer's watch expired or could not be resumed.", "resource", "namespace")
	descIndexValues  = desc("index_values", "Distinct values an index holds.", "resource", "index")
	descReloadOK     = desc("config_last_reload_successful", "Whether the last config load succeeded (1) or failed (0).")
	descReloadOKTime = desc("config_last_reload_success_timestamp_seconds", "Unix time of the last successful config load.")
	descReloads      = desc("config_reloads_total", "Config loads by result (success, failure).", "result")
	descPending      = desc("events_pending", "Informer events received and not yet computed into series.")
	descConfigInfo   = desc("config_info", "The config in use, identified by the SHA-256 of its file; always 1.", "sha256")
	descReachable    = desc("api_server_reachable", "Whether the API server was reached to load the first config (1) or not yet (0); once loaded, resource_healthy tells of each resource's requests.")
	descContactErrs  = desc("api_server_contact_errors_total", "Failed attempts to reach the API server to load the first config, each retried after a backoff.")
)

// Describe implements prometheus.Collector.
func (t *telemetry) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuildInfo, descObjects, descSynced, descHealthy, descEvents, descLastEvent, descLists, descListErrors,
		descWatches, descWatchErrors, descRelists, descIndexValues, descReloadOK, descReloadOKTime, descReloads, descConfigInfo, descPending,
		descReachable, descContactErrs} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one snapshot of the counters.
// It walks no cache: object and index value counts are kept on events (see
// cacheCount).
func (t *telemetry) Collect(ch chan<- prometheus.Metric) {
	info := version.Get()
	ch <- prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, info.Version, info.Commit, info.GoVersion)

	t.mu.Lock()
	ok := 0.0
	if t.reloadOK {
		ok = 1
	}
	ch <- prometheus.MustNewConstMetric(descReloadOK, prometheus.GaugeValue, ok)
	if t.everLoaded {
		ch <- prometheus.MustNewConstMetric(descReloadOKTime, prometheus.GaugeValue, float64(t.reloadOKTime.Unix()))
		ch <- prometheus.MustNewConstMetric(descConfigInfo, prometheus.GaugeValue, 1, t.hash)
	}
	for _, r := range []string{"success", "failure"} {
		ch <- prometheus.MustNewConstMetric(descReloads, prometheus.CounterValue, float64(t.reloads[r]), r)
	}
	reachable := 0.0
	if t.reachable {
		reachable = 1
	}
	ch <- prometheus.MustNewConstMetric(descReachable, prometheus.GaugeValue, reachable)
	ch <- prometheus.MustNewConstMetric(descContactErrs, prometheus.CounterValue, float64(t.contactErrors))
	t.mu.Unlock()

	a := t.x.current()
	if a == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(a.engine.Pending()))
	// Every resource watched, configured or read only by get() and
	// byIndex(), by its resolved name; several informers of one resource
	// and namespace (different selectors) add up, and it is synced and
	// healthy when they all are.
	watched := a.watched()
	for _, w := range watched {
		var objects, lists, listErrors, watches, watchErrors, relists uint64
		synced, healthy := 1.0, 1.0
		for _, inf := range w.infs {
			if count := a.counts[inf]; count != nil {
				objects += uint64(count.Objects()) //nolint:gosec // G115: a count of objects is never negative
			}
			if !inf.Informer.HasSynced() {
				synced = 0
			}
			if inf.Healthy() != nil {
				healthy = 0
			}
			lists += inf.Requests.Lists.Load()
			listErrors += inf.Requests.ListErrors.Load()
			watches += inf.Requests.Watches.Load()
			watchErrors += inf.Requests.WatchErrors.Load()
			relists += inf.Requests.Relists.Load()
		}
		ch <- prometheus.MustNewConstMetric(descObjects, prometheus.GaugeValue, float64(objects), w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descSynced, prometheus.GaugeValue, synced, w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descHealthy, prometheus.GaugeValue, healthy, w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descLists, prometheus.CounterValue, float64(lists), w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descListErrors, prometheus.CounterValue, float64(listErrors), w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descWatches, prometheus.CounterValue, float64(watches), w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descWatchErrors, prometheus.CounterValue, float64(watchErrors), w.name, w.namespace)
		ch <- prometheus.MustNewConstMetric(descRelists, prometheus.CounterValue, float64(relists), w.name, w.namespace)
	}
	// Events and indexes of the configured resources, by resolved name.
	events := map[string]*[3]uint64{}
	lastEvent := map[string]int64{}
	type indexKey struct{ resource, index string }
	indexed := map[indexKey]sets.Set[*factory.Informer]{}
	configured := sets.New[string]()
	for i, rs := range a.engine.resources {
		name := a.names[i]
		configured.Insert(name)
		if events[name] == nil {
			events[name] = &[3]uint64{}
		}
		for t := range eventNames {
			events[name][t] += rs.events[t].Load()
		}
		lastEvent[name] = max(lastEvent[name], rs.lastEvent.Load())
		for ix := range a.engine.compiled.Resources[i].Indexes {
			k := indexKey{name, ix}
			if indexed[k] == nil {
				indexed[k] = sets.New[*factory.Informer]()
			}
			for _, inf := range a.informers[i] {
				indexed[k].Insert(inf)
			}
		}
	}
	// The events of the resources read only by lookups, as their caches
	// received them.
	for _, w := range watched {
		if configured.Has(w.name) {
			continue
		}
		if events[w.name] == nil {
			events[w.name] = &[3]uint64{}
		}
		for _, inf := range w.infs {
			if count := a.counts[inf]; count != nil {
				for t := range eventNames {
					events[w.name][t] += count.events[t].Load()
				}
				lastEvent[w.name] = max(lastEvent[w.name], count.lastEvent.Load())
			}
		}
	}
	for name, counts := range events {
		for t, typ := range eventNames {
			ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(counts[t]), name, typ)
		}
		if last := lastEvent[name]; last > 0 {
			ch <- prometheus.MustNewConstMetric(descLastEvent, prometheus.GaugeValue, float64(last), name)
		}
	}
	for k, infs := range indexed {
		n := 0
		for inf := range infs {
			if count := a.counts[inf]; count != nil {
				n += count.IndexValues(k.index)
			}
		}
		ch <- prometheus.MustNewConstMetric(descIndexValues, prometheus.GaugeValue, float64(n), k.resource, k.index)
	}
}

// familyStatMetrics are the telemetry metrics of each configured metric,
// by its name in their label metric. They are five per configured metric
// (the kube-state-metrics profile has 297), and written by
// writeFamilyStats as the configured metrics' series are, rather than
// collected through the registry, which would build, sort and encode a
// message for each at every scrape.
var familyStatMetrics = []struct {
	name, help string
	counter    bool
	value      func(familyStats) float64
}{
	{"metric_series", "Series a configured metric exposes.", false,
		func(s familyStats) float64 { return float64(s.series) }},
	{"metric_series_dropped_total", "Series of a configured metric dropped by --max-series-per-metric.", true,
		func(s familyStats) float64 { return float64(s.dropped) }},
	{"metric_series_capped", "Series of a configured metric wanted now and not served because of --max-series-per-metric; 0 when all are served.", false,
		func(s familyStats) float64 { return float64(s.unserved) }},
	{"metric_series_duplicate_total", "Series of a configured metric without aggregate left out because another of its series has the same labels.", true,
		func(s familyStats) float64 { return float64(s.duplicates) }},
	{"metric_evaluation_errors_total", "Failed evaluations of a configured metric's expressions.", true,
		func(s familyStats) float64 { return float64(s.errors) }},
}

// familyStatsCollector collects the familyStatMetrics of the stats it
// is given (those of the active config), for a registry: what
// writeFamilyStats writes, as const metrics (TestWriteFamilyStats
// compares the two).
type familyStatsCollector struct{ stats func() []familyStats }

// familyStatDescs are the descriptions of familyStatMetrics, in their
// order.
var familyStatDescs = func() []*prometheus.Desc {
	var out []*prometheus.Desc
	for _, m := range familyStatMetrics {
		out = append(out, desc(m.name, m.help, "metric"))
	}
	return out
}()

// Describe implements prometheus.Collector.
func (c familyStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range familyStatDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c familyStatsCollector) Collect(ch chan<- prometheus.Metric) {
	stats := c.stats()
	for i, m := range familyStatMetrics {
		typ := prometheus.GaugeValue
		if m.counter {
			typ = prometheus.CounterValue
		}
		for _, s := range stats {
			ch <- prometheus.MustNewConstMetric(familyStatDescs[i], typ, m.value(s), s.name)
		}
	}
}

// writeFamilyStats writes the familyStatMetrics of stats to w, in the
// text format or OpenMetrics, as client_golang's registry and expfmt's
// encoder write them: series sorted by metric, and in OpenMetrics a
// counter's family named without _total and values written with a
// decimal point.
func writeFamilyStats(w *bufio.Writer, openMetrics bool, stats []familyStats) {
	if len(stats) == 0 {
		return
	}
	stats = slices.SortedFunc(slices.Values(stats), func(a, b familyStats) int { return strings.Compare(a.name, b.name) })
	var num []byte
	for _, m := range familyStatMetrics {
		name, typ := TelemetryPrefix+m.name, TypeGauge
		if m.counter {
			typ = TypeCounter
		}
		writeHeader(w, name, typ, m.help, writeStyle{openMetrics: openMetrics})
		for _, s := range stats {
			_, _ = w.WriteString(name)
			_, _ = w.WriteString(`{metric="`)
			_, _ = w.WriteString(escapeLabelValue(s.name))
			_, _ = w.WriteString(`"} `)
			num = strconv.AppendFloat(num[:0], m.value(s), 'g', -1, 64)
			if openMetrics && !bytes.ContainsAny(num, "e.") {
				num = append(num, '.', '0')
			}
			_, _ = w.Write(num)
			_ = w.WriteByte('\n')
		}
	}
}

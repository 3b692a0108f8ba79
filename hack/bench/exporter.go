package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// exporterResult is what benchExporter measured.
type exporterResult struct {
	// readies are the times to ready of several starts, sorted.
	readies []time.Duration
	// starts are those starts, in order, and floor the bare informer's
	// started alternately with them (runFloor).
	starts, floor []startStats
	hwmSynced     int64 // peak RSS of the last start, at ready
	rssSynced     int64
	scrapes       []time.Duration
	rssScraped    int64
	scrapeBytes   int
	series        int
	churns        []churnResult
}

// churnResult is what one rate of pod updates measured.
type churnResult struct {
	rate     int     // updates per second asked for
	achieved float64 // updates per second made
	seconds  float64
	cpu      float64 // cores the exporter used, without probing scrapes
	// apiserver is the cores the API server used meanwhile, and idle the
	// share of the machine's CPU time left idle.
	apiserver, idle float64
	rssAfter        int64
	// lags are the times from an update's response to its series on
	// /metrics, probed by scraping every probeEvery.
	lags       []time.Duration
	probed     int // updates probed
	unseen     int // probed updates never seen on /metrics
	pendingMax float64
	// interval is the median time between the starts of two probing
	// scrapes: at least probeEvery, more when a scrape takes longer. Lags
	// are known to within it.
	interval time.Duration
	// engine is what the exporter's own histogram of the time from an
	// event to its series (kubectl_informer_event_to_series_seconds)
	// counted while lags were probed.
	engine histogram
}

// probeEvery is how often /metrics is scraped while lags are probed: a lag
// is known to within this much.
const probeEvery = 200 * time.Millisecond

// benchExporter starts the exporter on config, measures time to ready and
// RSS, scrapes /metrics ten times, then, for each rate, updates pods at
// that rate for d while measuring the exporter's CPU, and for a further
// probe period while scraping to measure the lag from update to series.
// apiserverPID is the API server's process, whose CPU each start costs.
func benchExporter(plugin, kubeconfig, config string, cfg *rest.Config, apiserverPID, pods int, rates []int, d, probe time.Duration) (exporterResult, error) {
	var r exporterResult
	// Time to ready varies from start to start, and with the machine's
	// speed over a day: start it a few times, each after a start of the bare
	// informer it is compared with.
	var cmd *exec.Cmd
	var base string
	// Each start waits for the API server to settle after the previous one,
	// whose garbage it would otherwise collect on the next one's time.
	const settle = 2 * time.Second
	for i := range 5 {
		time.Sleep(settle)
		f, err := startFloor(kubeconfig, apiserverPID, pods)
		if err != nil {
			return r, err
		}
		r.floor = append(r.floor, f)
		time.Sleep(settle)
		c, b, s, err := startExporter(plugin, kubeconfig, config, apiserverPID)
		if err != nil {
			return r, err
		}
		r.starts = append(r.starts, s)
		r.readies = append(r.readies, s.ready)
		if i < 4 {
			_ = c.Process.Kill()
			_ = c.Wait()
			continue
		}
		cmd, base = c, b
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	slices.Sort(r.readies)
	pid := cmd.Process.Pid
	r.hwmSynced = procField(pid, "VmHWM:")
	// Once ready, the exporter returns the memory of the initial lists to
	// the operating system: measure after that.
	time.Sleep(time.Second)
	r.rssSynced = procRSS(pid)

	sc := &scraper{base: base}
	for range 10 {
		t := time.Now()
		b, err := sc.scrape()
		if err != nil {
			return r, err
		}
		r.scrapes = append(r.scrapes, time.Since(t))
		r.scrapeBytes = len(b)
		r.series = 0
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "kube_") {
				r.series++
			}
		}
	}
	r.rssScraped = procRSS(pid)

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // the update rate is the harness's, not client-go's default 5/s
	// Protobuf costs the updater and the API server less CPU than JSON.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return r, err
	}
	u := &updater{cs: cs, pods: list.Items}
	for _, rate := range rates {
		c := churnResult{rate: rate}
		cpu0, api0, t0 := procCPU(pid), procCPU(apiserverPID), time.Now()
		idle0, total0 := machineCPU()
		n, err := u.run(rate, d, nil)
		if err != nil {
			return r, err
		}
		c.seconds = time.Since(t0).Seconds()
		c.cpu = (procCPU(pid) - cpu0) / c.seconds
		c.apiserver = (procCPU(apiserverPID) - api0) / c.seconds
		if idle1, total1 := machineCPU(); total1 > total0 {
			c.idle = (idle1 - idle0) / (total1 - total0)
		}
		c.achieved = float64(n) / c.seconds
		c.rssAfter = procRSS(pid)
		if err := c.probeLags(u, sc, rate, probe); err != nil {
			return r, err
		}
		r.churns = append(r.churns, c)
	}
	return r, nil
}

// scraper reads the exporter's /metrics, uncompressed, as Prometheus reads a
// target's: into a buffer kept from the previous scrape, so that a scrape
// of the same size allocates nothing. What scrape returns is valid until
// the next scrape.
type scraper struct {
	base string
	buf  []byte
}

func (s *scraper) scrape() ([]byte, error) {
	req, _ := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b := s.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	s.buf = b
	return b, nil
}

// updater bumps the restart count of the first container of Running pods,
// round robin.
type updater struct {
	cs   kubernetes.Interface
	pods []corev1.Pod
	next int
}

// update is one update made: the pod's UID, the new restart count of its
// first container, and when the API server answered.
type update struct {
	uid   string
	count int32
	at    time.Time
}

// run updates pods at rate per second for d, with enough requests in flight
// to keep the rate, reporting each update to done (when not nil), and
// returns how many it made.
func (u *updater) run(rate int, d time.Duration, done func(update)) (int, error) {
	workers := max(4, rate/25)
	jobs := make(chan int)
	var mu sync.Mutex // guards made, firstErr and done calls
	made := 0
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := u.pods[i].DeepCopy()
				p.Status.ContainerStatuses[0].RestartCount++
				got, err := u.cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("updating pod %s/%s: %w", p.Namespace, p.Name, err)
					}
				} else {
					made++
					u.pods[i] = *got
					if done != nil {
						done(update{uid: string(got.UID), count: got.Status.ContainerStatuses[0].RestartCount, at: time.Now()})
					}
				}
				mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for t0 := time.Now(); time.Since(t0) < d; {
		<-tick.C
		jobs <- u.next
		// Each pod is updated by one request at a time: a pod comes back
		// round only after all the others.
		u.next = (u.next + 1) % len(u.pods)
	}
	close(jobs)
	wg.Wait()
	return made, firstErr
}

// probeLags updates pods at rate for d while scraping /metrics every
// probeEvery, and records for each update the time from the API server's
// answer to the first scrape that started after it and shows the new
// restart count. It also records the largest backlog of events the
// exporter reported.
func (c *churnResult) probeLags(u *updater, sc *scraper, rate int, d time.Duration) error {
	var mu sync.Mutex // guards pending and updating
	pending := map[string]update{}
	updating := true
	var starts []time.Time
	stop := make(chan struct{})
	scraped := make(chan error, 1)
	var first, last histogram
	go func() {
		var err error
		defer func() { scraped <- err }()
		for {
			start := time.Now()
			starts = append(starts, start)
			var b []byte
			if b, err = sc.scrape(); err != nil {
				return
			}
			last = parseHistogram(b, eventToSeries)
			if first == nil {
				first = last
			}
			seen := restarts(b)
			mu.Lock()
			for uid, up := range pending {
				if seen[uid] >= up.count {
					if up.at.Before(start) {
						c.lags = append(c.lags, start.Sub(up.at))
					} else {
						c.lags = append(c.lags, 0) // answered while this scrape ran
					}
					delete(pending, uid)
				}
			}
			done := !updating && len(pending) == 0
			mu.Unlock()
			if done {
				return
			}
			if v, ok := gauge(b, "kubectl_informer_events_pending"); ok && v > c.pendingMax {
				c.pendingMax = v
			}
			select {
			case <-stop:
				return
			case <-time.After(probeEvery - time.Since(start)):
			}
		}
	}()
	_, err := u.run(rate, d, func(up update) {
		mu.Lock()
		defer mu.Unlock()
		c.probed++
		pending[up.uid] = up
	})
	mu.Lock()
	updating = false
	mu.Unlock()
	// The scraper ends once every update has shown up; an update that has
	// not after 30 s is counted as unseen.
	select {
	case serr := <-scraped:
		if err == nil {
			err = serr
		}
	case <-time.After(30 * time.Second):
		close(stop)
		if serr := <-scraped; err == nil {
			err = serr
		}
	}
	mu.Lock()
	defer mu.Unlock()
	c.unseen = len(pending)
	c.engine = last.minus(first)
	slices.Sort(c.lags)
	var gaps []time.Duration
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, starts[i].Sub(starts[i-1]))
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		c.interval = gaps[len(gaps)/2]
	}
	return err
}

// restarts returns the restart count of the first container ("app") of
// each pod in the kube_pod_container_status_restarts_total series, by UID.
func restarts(b []byte) map[string]int32 {
	out := map[string]int32{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(`kube_pod_container_status_restarts_total{container="app",`))
		if !ok {
			continue
		}
		i := bytes.Index(rest, []byte(`uid="`))
		if i < 0 {
			continue
		}
		uid := rest[i+5:]
		j := bytes.IndexByte(uid, '"')
		if j < 0 {
			continue
		}
		sp := bytes.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(string(rest[sp+1:]), 64)
		if err != nil {
			continue
		}
		out[string(uid[:j])] = int32(v)
	}
	return out
}

// gauge returns the value of an unlabelled sample of name in b.
func gauge(b []byte, name string) (float64, bool) {
	i := bytes.Index(b, []byte("\n"+name+" "))
	if i < 0 {
		return 0, false
	}
	rest := b[i+len(name)+2:]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	v, err := strconv.ParseFloat(string(rest), 64)
	return v, err == nil
}

// startExporter starts the exporter and waits until /readyz answers 200.
func startExporter(plugin, kubeconfig, config string, apiserverPID int) (*exec.Cmd, string, startStats, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", startStats{}, err
	}
	// No series may be dropped: at 100,000 pods the KSM config has 500,000
	// phase series, over the default cap of 100,000 per metric.
	cmd := exec.Command(plugin, "export", "--kubeconfig="+kubeconfig, "--config="+config, "--web.listen-address="+addr, "--max-series-per-metric=10000000")
	cmd.Stderr = io.Discard
	api0 := procCPU(apiserverPID)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, "", startStats{}, err
	}
	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s := startStats{ready: time.Since(start), apiserver: procCPU(apiserverPID) - api0}
				s.cpu, s.hwm = procCPU(cmd.Process.Pid), procField(cmd.Process.Pid, "VmHWM:")
				return cmd, base, s, nil
			}
		}
		if time.Since(start) > 2*time.Minute {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, "", startStats{}, fmt.Errorf("the exporter was not ready after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// freeAddr returns a localhost address with a port free at the time of
// asking, for a server the harness starts.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// procRSS returns the resident set size of pid in bytes.
func procRSS(pid int) int64 { return procField(pid, "VmRSS:") }

// procField returns a size field of /proc/PID/status (VmRSS:, VmHWM:) in
// bytes.
func procField(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// machineCPU returns the machine's idle and total CPU time so far, in
// clock ticks, from /proc/stat.
func machineCPU() (idle, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, x := range f[1:] {
		v, _ := strconv.ParseFloat(x, 64)
		total += v
		if i == 3 {
			idle = v
		}
	}
	return idle, total
}

// procCPU returns the CPU seconds pid has used (user + system).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

func (r exporterResult) render(config string, pods int) string {
	rssTarget := "≤ 120 MiB"
	if pods != 10000 {
		rssTarget = "< 1 GiB at 100,000 pods"
	}
	var b strings.Builder
	s := slices.Clone(r.scrapes)
	slices.Sort(s)
	med := s[len(s)/2]
	n := len(r.readies)
	fmt.Fprintf(&b, "\n## Exporter (%s)\n\n", config)
	fmt.Fprintf(&b, "| measure | kubectl-informer | kube-state-metrics (same workload and series, measured earlier) | target |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| time to ready, median of %d starts (min–max) | %s (%s–%s) | 0.61 s | ≤ 0.61 s |\n", n, secs(r.readies[n/2]), secs(r.readies[0]), secs(r.readies[n-1]))
	fmt.Fprintf(&b, "| RSS after sync (1 s after ready) | %s | 174 MiB | %s |\n", mib(r.rssSynced), rssTarget)
	steady := r.rssScraped // without updates: after the scrapes
	steadyName := "after the 10 scrapes"
	if len(r.churns) > 0 {
		steady, steadyName = r.churns[0].rssAfter, fmt.Sprintf("after %d updates/s", r.churns[0].rate)
	}
	fmt.Fprintf(&b, "| peak RSS while syncing (VmHWM at ready) | %s: %.2f× the steady state (RSS %s) | | ≤ 1.5× steady state |\n",
		mib(r.hwmSynced), float64(r.hwmSynced)/float64(steady), steadyName)
	fmt.Fprintf(&b, "| `/metrics` latency, uncompressed, median of 10 (min–max), read as Prometheus reads it: into the previous scrape's buffer | %.1f ms (%.1f–%.1f ms) | 33 ms | ≤ 33 ms |\n",
		ms(med), ms(s[0]), ms(s[len(s)-1]))
	fmt.Fprintf(&b, "| RSS after the 10 scrapes | %s | | |\n", mib(r.rssScraped))
	fmt.Fprintf(&b, "| series (`kube_*`), response size | %d, %d KiB | | |\n", r.series, r.scrapeBytes/1024)
	if len(r.floor) > 0 {
		fmt.Fprintf(&b, "\nThe time to ready above is compared with a figure measured at another time, and this machine's speed varies\n")
		fmt.Fprintf(&b, "about 2× over a day. In the same conditions, each start of the exporter followed a start of the least a client-go\n")
		fmt.Fprintf(&b, "program does to cache the same pods: a SharedInformerFactory with client-go's defaults (HTTP/2, WatchList),\n")
		fmt.Fprintf(&b, "protobuf, one pod informer, no handlers, no metrics (`-%s` in hack/bench/floor.go). Medians of %d starts each.\n\n", floorFlag, len(r.floor))
		fmt.Fprintf(&b, "| measure | exporter | bare client-go informer |\n|---|---|---|\n")
		ex, fl := medianStats(r.starts), medianStats(r.floor)
		fmt.Fprintf(&b, "| time to ready (exporter: `/readyz` 200; informer: synced), min–max | %s (%s–%s) | %s (%s–%s) |\n",
			secs(ex.ready), secs(minReady(r.starts)), secs(maxReady(r.starts)), secs(fl.ready), secs(minReady(r.floor)), secs(maxReady(r.floor)))
		fmt.Fprintf(&b, "| its CPU until then | %.2f s | %.2f s |\n", ex.cpu, fl.cpu)
		fmt.Fprintf(&b, "| the API server's CPU until then | %.2f s | %.2f s |\n", ex.apiserver, fl.apiserver)
		fmt.Fprintf(&b, "| its peak RSS (VmHWM at ready) | %s | %s |\n", mib(ex.hwm), mib(fl.hwm))
	}
	if len(r.churns) > 0 {
		fmt.Fprintf(&b, "\nPod updates (the restart count of a Running pod's first container) at a steady rate: CPU and RSS of the exporter\n")
		fmt.Fprintf(&b, "over %.0f s of updates; then, while updating at the same rate, /metrics is scraped continuously (at most every %s) and each\n", r.churns[0].seconds, probeEvery)
		fmt.Fprintf(&b, "update's lag is the time from the API server's answer to the start of the first scrape that shows it: known to within\n")
		fmt.Fprintf(&b, "the interval between scrapes, which grows with the size of /metrics. An update not seen within 30 s of the last is unseen.\n\n")
		fmt.Fprintf(&b, "The API server's CPU and the machine's idle share over the same 30 s show what bounds the rate made.\n")
		fmt.Fprintf(&b, "The exporter's own histogram of the time from an event reaching it to its series computed (`%s`),\n", eventToSeries)
		fmt.Fprintf(&b, "over the same probe period, bounds the exporter's part of that lag: each quantile is at most the bucket bound given.\n\n")
		fmt.Fprintf(&b, "| updates/s asked (made) | exporter CPU | API server CPU, machine idle | RSS after | lag p50 | lag p99 | lag max | scrape interval | probed (unseen) | events pending, max | event to series: events, p50, p99 |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range r.churns {
			p50, p99, pmax := "–", "–", "–"
			if l := c.lags; len(l) > 0 {
				p50, p99, pmax = msd(l[len(l)/2]), msd(l[len(l)*99/100]), msd(l[len(l)-1])
			}
			fmt.Fprintf(&b, "| %d (%.0f) | %.2f cores | %.2f cores, %.0f%% | %s | %s | %s | %s | %s | %d (%d) | %.0f | %.0f, ≤ %s, ≤ %s |\n",
				c.rate, c.achieved, c.cpu, c.apiserver, 100*c.idle, mib(c.rssAfter), p50, p99, pmax, msd(c.interval), c.probed, c.unseen, c.pendingMax,
				c.engine.count(), bound(c.engine.quantile(0.5)), bound(c.engine.quantile(0.99)))
		}
	}
	return b.String()
}

func msd(d time.Duration) string { return fmt.Sprintf("%.0f ms", ms(d)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// medianStats returns the median of each measure of starts, separately.
func medianStats(starts []startStats) startStats {
	med := func(f func(startStats) float64) float64 {
		v := make([]float64, len(starts))
		for i, s := range starts {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return startStats{
		ready:     time.Duration(med(func(s startStats) float64 { return float64(s.ready) })),
		cpu:       med(func(s startStats) float64 { return s.cpu }),
		apiserver: med(func(s startStats) float64 { return s.apiserver }),
		hwm:       int64(med(func(s startStats) float64 { return float64(s.hwm) })),
	}
}

func minReady(starts []startStats) time.Duration {
	return slices.MinFunc(starts, func(a, b startStats) int { return cmp.Compare(a.ready, b.ready) }).ready
}

func maxReady(starts []startStats) time.Duration {
	return slices.MaxFunc(starts, func(a, b startStats) int { return cmp.Compare(a.ready, b.ready) }).ready
}

// eventToSeries is the exporter's histogram of the time from an informer
// event to its object's series.
const eventToSeries = "kubectl_informer_event_to_series_seconds"

// histogram is a Prometheus histogram's cumulative bucket counts by upper
// bound (le).
type histogram map[float64]float64

// parseHistogram reads the buckets of the histogram name from an
// exposition.
func parseHistogram(b []byte, name string) histogram {
	h := histogram{}
	prefix := []byte(name + `_bucket{le="`)
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		le, v, ok := bytes.Cut(rest, []byte(`"} `))
		if !ok {
			continue
		}
		bound, err1 := strconv.ParseFloat(string(le), 64)
		count, err2 := strconv.ParseFloat(string(v), 64)
		if err1 == nil && err2 == nil {
			h[bound] = count
		}
	}
	return h
}

// minus returns the counts of h less those of earlier.
func (h histogram) minus(earlier histogram) histogram {
	out := histogram{}
	for le, n := range h {
		out[le] = n - earlier[le]
	}
	return out
}

// count is the number of observations.
func (h histogram) count() float64 { return h[math.Inf(1)] }

// quantile returns the upper bound of the bucket holding the q-quantile:
// the q-quantile is at most that.
func (h histogram) quantile(q float64) float64 {
	bounds := slices.Sorted(maps.Keys(h))
	for _, le := range bounds {
		if h[le] >= q*h.count() {
			return le
		}
	}
	return math.Inf(1)
}

// bound prints a histogram bucket bound in seconds as milliseconds.
func bound(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le*1000, 'g', -1, 64) + " ms"
}

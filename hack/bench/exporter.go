package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
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

	"github.com/kubectl-informer/kubectl-informer/test/memcg"
)

// exporterResult is what benchExporter measured.
type exporterResult struct {
	// exp is the exporter, ksm kube-state-metrics on the same families
	// (nil: not measured), ksmArgs its flags.
	exp     side
	ksm     *side
	ksmArgs []string
	// compared is the series-for-series comparison of the two
	// expositions before any update (nil: kube-state-metrics not measured).
	compared *comparison
	// floor are the bare informer's starts (runFloor), each before a
	// start of the exporter.
	floor []startStats
	// quiet are starts of the exporter with only its /readyz polled, no
	// /metrics scraped while it starts, each after a polled one.
	quiet  []startStats
	churns []churnResult
}

// side is what was measured of one of the two exporters.
type side struct {
	// starts are several starts, in order, alternating with the other's.
	starts []startStats
	// rssSynced is the last start's RSS 1 s after its first full /metrics.
	rssSynced int64
	// scrapes as Prometheus makes them (gzip) and uncompressed.
	gzipped, plain []scrapeStat
	series         int
	// churn is what each rate of pod updates cost it, in the order of
	// exporterResult.churns.
	churn []sideChurn
	// limited are starts under a memory limit of limitFactor times its
	// steadyRSS, after the updates.
	limited []limitedStart
}

// sideChurn is one exporter's CPU and memory while pods are updated.
type sideChurn struct {
	cpu float64 // cores
	// rss is sampled every second while pods are updated, sorted.
	rss []int64
}

// churnResult is what one rate of pod updates measured.
type churnResult struct {
	rate     int     // updates per second asked for
	achieved float64 // updates per second made
	seconds  float64
	// apiserver is the cores the API server used meanwhile, and idle the
	// share of the machine's CPU time left idle.
	apiserver, idle float64
	// lags are the times from an update's response to its series on the
	// exporter's /metrics, probed by scraping every probeEvery.
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

// benchExporter starts the bare informer, the exporter on config and, when
// ksmBin is not empty, kube-state-metrics on the same families, in turn,
// starts times (at least 1), measuring time to ready and memory. The last starts of
// both exporters stay up: each is scraped ten times as Prometheus scrapes
// and ten times uncompressed; then, for each rate, pods are updated at
// that rate for d while the CPU and RSS of both are measured, and for a
// further probe period while the exporter is scraped to measure the lag
// from update to series. Last, both are stopped and started again, starts
// times each, under a memory limit derived from their RSS under updates
// (measureLimited). apiserverPID is the API server's process, whose CPU
// each start costs.
func benchExporter(plugin, ksmBin, kubeconfig string, target exporterTarget, cfg *rest.Config, apiserverPID, starts int, rates []int, d, probe time.Duration) (exporterResult, error) {
	var r exporterResult
	var exp, ksm *process
	defer func() {
		for _, p := range []*process{exp, ksm} {
			if p != nil {
				p.stop()
			}
		}
	}()
	if ksmBin != "" {
		r.ksm = &side{}
	}
	// The workload's controllers own pods of their own beside those asked
	// for: every client must cache all of them.
	pods, err := countPods(cfg)
	if err != nil {
		return r, err
	}
	// Time to ready varies from start to start, and with the machine's
	// speed over a day: start each a few times, in turn.
	// Each start waits for the API server to settle after the previous one,
	// whose garbage it would otherwise collect on the next one's time.
	const settle = 2 * time.Second
	// No series may be dropped: at 100,000 pods the KSM config has
	// 500,000 phase series, over the default cap of 100,000 per metric.
	args := func(addr string) []string {
		a := append([]string{"export", "--kubeconfig=" + kubeconfig}, target.args...)
		return append(a, "--web.listen-address="+addr, "--max-series-per-metric=10000000")
	}
	for i := range starts {
		last := i == starts-1
		time.Sleep(settle)
		f, err := startFloor(kubeconfig, apiserverPID, pods)
		if err != nil {
			return r, err
		}
		r.floor = append(r.floor, f)

		time.Sleep(settle)
		addr, err := freeAddr()
		if err != nil {
			return r, err
		}
		p, s, err := startProcess("the exporter", plugin, args(addr), addr, pollBoth, apiserverPID, pods)
		if err != nil {
			return r, err
		}
		r.exp.starts = append(r.exp.starts, s)
		if last {
			exp = p
		} else {
			// Scraping it every pollEvery while it starts costs it CPU:
			// a start with only /readyz polled tells how much.
			p.stop()
			time.Sleep(settle)
			if addr, err = freeAddr(); err != nil {
				return r, err
			}
			q, qs, err := startProcess("the exporter", plugin, args(addr), addr, pollReadyz, apiserverPID, pods)
			if err != nil {
				return r, err
			}
			q.stop()
			r.quiet = append(r.quiet, qs)
		}

		if ksmBin == "" {
			continue
		}
		time.Sleep(settle)
		addr, err = freeAddr()
		if err != nil {
			return r, err
		}
		taddr, err := freeAddr()
		if err != nil {
			return r, err
		}
		r.ksmArgs = kubeStateMetricsArgs(target, kubeconfig, addr, taddr)
		// Its /readyz answers once its own metrics are registered, before
		// its lists are in: only the first full /metrics tells it is ready.
		p, s, err = startProcess("kube-state-metrics", ksmBin, r.ksmArgs, addr, pollMetrics, apiserverPID, pods)
		if err != nil {
			return r, err
		}
		r.ksm.starts = append(r.ksm.starts, s)
		if last {
			ksm = p
		} else {
			p.stop()
		}
	}
	// The exporter returns the memory of the initial lists to the operating
	// system once synced: a second figure, measured after that.
	time.Sleep(time.Second)
	r.exp.rssSynced = procRSS(exp.pid())
	if ksm != nil {
		r.ksm.rssSynced = procRSS(ksm.pid())
	}

	type scraped struct {
		side *side
		gz   *scraper
		pl   *scraper
	}
	targets := []scraped{{&r.exp, &scraper{base: exp.base}, &scraper{base: exp.base, plain: true}}}
	if ksm != nil {
		targets = append(targets, scraped{r.ksm, &scraper{base: ksm.base}, &scraper{base: ksm.base, plain: true}})
	}
	bodies := make([][]byte, len(targets))
	for range 10 {
		for i, t := range targets {
			_, st, err := t.gz.scrape()
			if err != nil {
				return r, err
			}
			t.side.gzipped = append(t.side.gzipped, st)
			b, st, err := t.pl.scrape()
			if err != nil {
				return r, err
			}
			t.side.plain = append(t.side.plain, st)
			t.side.series = countSeries(b)
			bodies[i] = append(bodies[i][:0], b...)
		}
	}
	if ksm != nil {
		// Compared in the text format: the scrapes above are OpenMetrics,
		// as Prometheus asks.
		for i, t := range targets {
			b, _, err := (&scraper{base: t.pl.base, plain: true, text: true}).scrape()
			if err != nil {
				return r, err
			}
			bodies[i] = append(bodies[i][:0], b...)
		}
		c, err := compareSeries(bodies[0], bodies[1], target.families)
		if err != nil {
			return r, err
		}
		r.compared = c
	}

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // the update rate is the harness's, not client-go's default 5/s
	// Protobuf costs the updater and the API server less CPU than JSON.
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = protobufType + "," + jsonType
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return r, err
	}
	// The pods the workload's controllers own may have no container status
	// to bump.
	running := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 0 })
	u := &updater{cs: cs, pods: running}
	procs := []*process{exp}
	sides := []*side{&r.exp}
	if ksm != nil {
		procs, sides = append(procs, ksm), append(sides, r.ksm)
	}
	sc := &scraper{base: exp.base}
	for _, rate := range rates {
		c := churnResult{rate: rate}
		cpu0 := make([]float64, len(procs))
		for i, p := range procs {
			cpu0[i] = procCPU(p.pid())
		}
		api0, t0 := procCPU(apiserverPID), time.Now()
		idle0, total0 := machineCPU()
		stop := make(chan struct{})
		sampled := make(chan [][]int64)
		go func() { sampled <- sampleRSS(procs, time.Second, stop) }()
		n, err := u.run(rate, d, nil)
		close(stop)
		rss := <-sampled
		if err != nil {
			return r, err
		}
		c.seconds = time.Since(t0).Seconds()
		for i, p := range procs {
			sides[i].churn = append(sides[i].churn, sideChurn{cpu: (procCPU(p.pid()) - cpu0[i]) / c.seconds, rss: rss[i]})
		}
		c.apiserver = (procCPU(apiserverPID) - api0) / c.seconds
		if idle1, total1 := machineCPU(); total1 > total0 {
			c.idle = (idle1 - idle0) / (total1 - total0)
		}
		c.achieved = float64(n) / c.seconds
		if err := c.probeLags(u, sc, rate, probe); err != nil {
			return r, err
		}
		r.churns = append(r.churns, c)
	}
	return r, r.measureLimited(plugin, ksmBin, kubeconfig, target, args, procs, starts, pods)
}

// measureLimited stops the running exporters procs, then starts each side
// starts times in turn under a memory limit of limitFactor times its
// steady RSS (see startLimited). A start may take up to ten times the
// longest unlimited one to serve a full /metrics (at least two minutes):
// a collector working against its limit slows it.
func (r *exporterResult) measureLimited(plugin, ksmBin, kubeconfig string, target exporterTarget, args func(string) []string, procs []*process, starts, pods int) error {
	for _, p := range procs {
		p.stop()
	}
	const settle = 2 * time.Second
	giveUp := func(s side) time.Duration {
		longest := slices.MaxFunc(s.starts, func(a, b startStats) int { return cmp.Compare(a.full, b.full) }).full
		return max(2*time.Minute, 10*longest).Round(time.Second)
	}
	for range starts {
		time.Sleep(settle)
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "starting the exporter under a memory limit of %s…\n", mib(int64(limitFactor*float64(r.exp.steadyRSS()))))
		l, err := startLimited("the exporter", plugin, args(addr), addr, pollReadyz, pods, int64(limitFactor*float64(r.exp.steadyRSS())), giveUp(r.exp))
		if err != nil {
			return err
		}
		r.exp.limited = append(r.exp.limited, l)
		if ksmBin == "" {
			continue
		}
		time.Sleep(settle)
		if addr, err = freeAddr(); err != nil {
			return err
		}
		taddr, err := freeAddr()
		if err != nil {
			return err
		}
		l, err = startLimited("kube-state-metrics", ksmBin, kubeStateMetricsArgs(target, kubeconfig, addr, taddr), addr, pollMetrics, pods,
			int64(limitFactor*float64(r.ksm.steadyRSS())), giveUp(*r.ksm))
		if err != nil {
			return err
		}
		r.ksm.limited = append(r.ksm.limited, l)
	}
	return nil
}

// sampleRSS samples the RSS of each process every interval until stop is
// closed, and returns the samples of each, sorted.
func sampleRSS(procs []*process, interval time.Duration, stop <-chan struct{}) [][]int64 {
	out := make([][]int64, len(procs))
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			for _, s := range out {
				slices.Sort(s)
			}
			return out
		case <-tick.C:
			for i, p := range procs {
				out[i] = append(out[i], procRSS(p.pid()))
			}
		}
	}
}

// process is a started exporter: kubectl-informer's or kube-state-metrics.
type process struct {
	cmd    *exec.Cmd
	base   string // http://ADDR
	stderr *tailWriter
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// tailWriter keeps the last 4 KiB written to it, for an error message.
type tailWriter struct{ b []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4<<10 {
		t.b = t.b[len(t.b)-4<<10:]
	}
	return len(p), nil
}

// pollEvery is how often a starting exporter is asked whether it is ready.
const pollEvery = 10 * time.Millisecond

// polling is how startProcess tells that a process has started.
type polling int

const (
	// pollMetrics scrapes /metrics every pollEvery until it is full.
	pollMetrics polling = iota
	// pollBoth polls /readyz as well, until it answers 200.
	pollBoth
	// pollReadyz polls /readyz alone until it answers 200; then one
	// scrape of /metrics must be full. Its CPU is read when it is ready.
	pollReadyz
)

// startProcess starts an exporter serving /metrics on addr and waits until
// its /metrics holds a kube_pod_info series for each of pods (its first
// full /metrics) and, unless it polls /metrics only, until its /readyz
// answers 200, polling every pollEvery. /metrics is read as Prometheus
// reads it, uncompressed.
func startProcess(name, path string, args []string, addr string, how polling, apiserverPID, pods int) (*process, startStats, error) {
	p := &process{cmd: exec.Command(path, args...), base: "http://" + addr, stderr: &tailWriter{}} //nolint:gosec // G204: runs the binary the benchmark was told to measure
	p.cmd.Stderr = p.stderr
	api0 := procCPU(apiserverPID)
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, startStats{}, err
	}
	var s startStats
	sc := &scraper{base: p.base, plain: true}
	for {
		if how != pollMetrics && s.ready == 0 {
			if resp, err := http.Get(p.base + "/readyz"); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					s.ready = time.Since(start)
					if how == pollReadyz {
						s.cpu, s.apiserver = procCPU(p.pid()), procCPU(apiserverPID)-api0
					}
				}
			}
		}
		if s.full == 0 && (how != pollReadyz || s.ready > 0) {
			b, _, err := sc.scrape()
			switch {
			case err == nil && podInfoSeries(b) >= pods:
				s.full = time.Since(start)
			case how == pollReadyz:
				p.stop()
				return nil, s, fmt.Errorf("%s was ready with %d kube_pod_info series for %d pods (%v)", name, podInfoSeries(b), pods, err)
			}
		}
		if s.full > 0 && (how == pollMetrics || s.ready > 0) {
			break
		}
		if time.Since(start) > 2*time.Minute {
			p.stop()
			return nil, s, fmt.Errorf("%s had not served every pod's kube_pod_info after 2 minutes (ready: %v); its last output:\n%s", name, s.ready > 0, p.stderr.b)
		}
		time.Sleep(pollEvery)
	}
	if how == pollMetrics {
		s.ready = s.full
	}
	if how != pollReadyz {
		s.apiserver = procCPU(apiserverPID) - api0
		s.cpu = procCPU(p.pid())
	}
	s.hwm = procField(p.pid(), "VmHWM:")
	return p, s, nil
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
			if b, _, err = sc.scrape(); err != nil {
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
// The labels may come in any order.
func restarts(b []byte) map[string]int32 {
	out := map[string]int32{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(`kube_pod_container_status_restarts_total{`))
		if !ok {
			continue
		}
		rest = append([]byte{','}, rest...) // every label after a comma
		if !bytes.Contains(rest, []byte(`,container="app"`)) {
			continue
		}
		i := bytes.Index(rest, []byte(`,uid="`))
		if i < 0 {
			continue
		}
		uid := rest[i+6:]
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

// freeAddr returns a localhost address with a port free at the time of
// asking, for a server the harness starts.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
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

func (r exporterResult) render(target exporterTarget, ksmVersion string) string {
	var b strings.Builder
	notMeasured := "not measured"
	fmt.Fprintf(&b, "\n## Exporter (%s)\n\n", target.name)
	fmt.Fprintf(&b, "```text\nkubectl informer export %s\n```\n\n", strings.Join(target.args, " "))
	if r.ksm != nil {
		fmt.Fprintf(&b, "Beside it, kube-state-metrics (%s) on the same families and resources, started in turn with it\n", ksmVersion)
		fmt.Fprintf(&b, "and, under updates, running at the same time on the same updates:\n\n```text\nkube-state-metrics %s\n```\n\n", strings.Join(r.ksmArgs, " "))
	} else {
		fmt.Fprintf(&b, "kube-state-metrics was not measured in this run: `make bench KSM=/path/to/kube-state-metrics` measures it beside the exporter.\n\n")
	}
	ksm := func(f func(s *side) string) string {
		if r.ksm == nil {
			return notMeasured
		}
		return f(r.ksm)
	}
	fmt.Fprintf(&b, "| measure | kubectl-informer export | kube-state-metrics |\n|---|---|---|\n")
	for i, c := range r.churns {
		name := fmt.Sprintf("**RSS under %d pod updates/s**: median of samples every second over %.0f s (max)", c.rate, c.seconds)
		if i > 0 {
			name = fmt.Sprintf("RSS under %d pod updates/s (asked; %.0f made), as above", c.rate, c.achieved)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, churnRSS(r.exp.churn[i]), ksm(func(s *side) string { return churnRSS(s.churn[i]) }))
	}
	n := len(r.exp.starts)
	fmt.Fprintf(&b, "| time to first full `/metrics` (a `kube_pod_info` series for every pod; polled every %s), median of %d starts (min–max) | %s | %s |\n",
		pollEvery, n, durations(r.exp.starts, func(s startStats) time.Duration { return s.full }),
		ksm(func(s *side) string { return durations(s.starts, func(s startStats) time.Duration { return s.full }) }))
	fmt.Fprintf(&b, "| time to ready (`/readyz` 200), as above | %s | – (its `/readyz` answers before its lists are in) |\n",
		durations(r.exp.starts, func(s startStats) time.Duration { return s.ready }))
	if len(r.quiet) > 0 {
		fmt.Fprintf(&b, "| time to ready with only `/readyz` polled (every %s; no `/metrics` scraped while it starts, one after: every pod's `kube_pod_info` there), median of %d starts (min–max); its CPU until ready, median (the polled starts': until both ready and full) | %s; %.2f s (%.2f s) | – (nothing but a full scrape tells when it has its lists) |\n",
			pollEvery, len(r.quiet), durations(r.quiet, func(s startStats) time.Duration { return s.ready }), medianStats(r.quiet).cpu, medianStats(r.exp.starts).cpu)
	}
	fmt.Fprintf(&b, "| peak RSS while syncing (VmHWM at the first full `/metrics`), median of the starts | %s | %s |\n",
		peak(r.exp), ksm(func(s *side) string { return peak(*s) }))
	fmt.Fprintf(&b, "| **started under a memory limit of %.1f× the RSS under %d pod updates/s**, `GOMEMLIMIT` set to it (starts below) | %s | %s |\n",
		limitFactor, firstRate(r.churns), limitedSummary(r.exp.limited), ksm(func(s *side) string { return limitedSummary(s.limited) }))
	fmt.Fprintf(&b, "| `/metrics` as Prometheus 3 scrapes it (its default Accept, gzip), read and decompressed, median of 10 (min–max) | %s | %s |\n",
		scrapes(r.exp.gzipped), ksm(func(s *side) string { return scrapes(s.gzipped) }))
	fmt.Fprintf(&b, "| the same, uncompressed (`Accept-Encoding: identity`) | %s | %s |\n",
		scrapes(r.exp.plain), ksm(func(s *side) string { return scrapes(s.plain) }))
	fmt.Fprintf(&b, "| series (`kube_*` samples) | %d | %s |\n", r.exp.series, ksm(func(s *side) string { return strconv.Itoa(s.series) }))
	if r.compared != nil {
		fmt.Fprintf(&b, "| families identical to kube-state-metrics' series for series (HELP, TYPE, label sets, values), before any update | %s | |\n", r.compared.summary())
	}
	for i, c := range r.churns {
		// Three decimals and the CPU time per update made: a few
		// hundredths of a core apart, on a machine that made fewer updates
		// than asked, the two would otherwise round alike.
		perUpdate := func(cpu float64) string {
			if c.achieved <= 0 {
				return fmt.Sprintf("%.3f cores", cpu)
			}
			return fmt.Sprintf("%.3f cores (%.2f ms per update made)", cpu, 1000*cpu/c.achieved)
		}
		fmt.Fprintf(&b, "| CPU under %d pod updates/s (asked) | %s | %s |\n", c.rate, perUpdate(r.exp.churn[i].cpu),
			ksm(func(s *side) string { return perUpdate(s.churn[i].cpu) }))
	}
	fmt.Fprintf(&b, "| secondary: RSS 1 s after the last start's first full `/metrics`, no updates (the exporter has just returned the initial lists' memory to the operating system) | %s | %s |\n",
		mib(r.exp.rssSynced), ksm(func(s *side) string { return mib(s.rssSynced) }))
	if len(r.exp.limited) > 0 {
		var ksmLimited []limitedStart
		var ksmSteady int64
		if r.ksm != nil {
			ksmLimited, ksmSteady = r.ksm.limited, r.ksm.steadyRSS()
		}
		how := "cgroup v1"
		if memcg.IsV2() {
			how = "cgroup v2"
		}
		b.WriteString(renderLimited(r.exp.limited, r.exp.steadyRSS(), ksmLimited, ksmSteady, how))
	}
	if len(r.floor) > 0 {
		fmt.Fprintf(&b, "\nThe least a client-go program does to cache the same pods, started in turn with the exporter: a\n")
		fmt.Fprintf(&b, "SharedInformerFactory with client-go's defaults (HTTP/2, WatchList), protobuf, one pod informer, no handlers,\n")
		fmt.Fprintf(&b, "no metrics (`-%s` in hack/bench/floor.go). Medians of %d starts each.\n\n", floorFlag, len(r.floor))
		fmt.Fprintf(&b, "| measure | exporter | bare client-go informer |\n|---|---|---|\n")
		ex, fl := medianStats(r.exp.starts), medianStats(r.floor)
		fmt.Fprintf(&b, "| time to ready (exporter: `/readyz` 200; informer: synced), min–max | %s | %s |\n",
			durations(r.exp.starts, func(s startStats) time.Duration { return s.ready }), durations(r.floor, func(s startStats) time.Duration { return s.ready }))
		fmt.Fprintf(&b, "| its CPU until then (exporter: until its first full `/metrics`) | %.2f s | %.2f s |\n", ex.cpu, fl.cpu)
		fmt.Fprintf(&b, "| the API server's CPU until then | %.2f s | %.2f s |\n", ex.apiserver, fl.apiserver)
		fmt.Fprintf(&b, "| its peak RSS (VmHWM then) | %s | %s |\n", mib(ex.hwm), mib(fl.hwm))
	}
	if len(r.churns) > 0 {
		fmt.Fprintf(&b, "\nPod updates (the restart count of a Running pod's first container) at a steady rate: CPU and RSS\n")
		fmt.Fprintf(&b, "over %.0f s of updates; then, while updating at the same rate, the exporter's /metrics is scraped as Prometheus\n", r.churns[0].seconds)
		fmt.Fprintf(&b, "scrapes it, continuously (at most every %s), and each update's lag is the time from the API server's answer\n", probeEvery)
		fmt.Fprintf(&b, "to the start of the first scrape that shows it: known to within the interval between scrapes, which grows with the\n")
		fmt.Fprintf(&b, "size of /metrics. An update not seen within 30 s of the last is unseen.\n\n")
		fmt.Fprintf(&b, "The API server's CPU and the machine's idle share over the same %.0f s show what bounds the rate made.\n", r.churns[0].seconds)
		fmt.Fprintf(&b, "The exporter's own histogram of the time from an event reaching it to its series computed (`%s`),\n", eventToSeries)
		fmt.Fprintf(&b, "over the same probe period, bounds the exporter's part of that lag: each quantile is at most the bucket bound given.\n\n")
		fmt.Fprintf(&b, "| updates/s asked (made) | exporter CPU | API server CPU, machine idle | exporter RSS, median (max) | lag p50 | lag p99 | lag max | scrape interval | probed (unseen) | events pending, max | event to series: events, p50, p99 |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for i, c := range r.churns {
			p50, p99, pmax := "–", "–", "–"
			if l := c.lags; len(l) > 0 {
				p50, p99, pmax = msd(l[len(l)/2]), msd(l[len(l)*99/100]), msd(l[len(l)-1])
			}
			fmt.Fprintf(&b, "| %d (%.0f) | %.2f cores | %.2f cores, %.0f%% | %s | %s | %s | %s | %s | %d (%d) | %.0f | %.0f, ≤ %s, ≤ %s |\n",
				c.rate, c.achieved, r.exp.churn[i].cpu, c.apiserver, 100*c.idle, churnRSS(r.exp.churn[i]), p50, p99, pmax, msd(c.interval), c.probed, c.unseen, c.pendingMax,
				c.engine.count(), bound(c.engine.quantile(0.5)), bound(c.engine.quantile(0.99)))
		}
	}
	return b.String()
}

// firstRate is the first rate of updates measured (0: none).
func firstRate(churns []churnResult) int {
	if len(churns) == 0 {
		return 0
	}
	return churns[0].rate
}

// churnRSS is the median of the RSS samples taken under updates, with their
// maximum.
func churnRSS(c sideChurn) string {
	if len(c.rss) == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%s)", mib(c.rss[len(c.rss)/2]), mib(c.rss[len(c.rss)-1]))
}

// durations is the median, min and max of a measure of starts.
func durations(starts []startStats, f func(startStats) time.Duration) string {
	d := make([]time.Duration, len(starts))
	for i, s := range starts {
		d[i] = f(s)
	}
	slices.Sort(d)
	return fmt.Sprintf("%s (%s–%s)", secs(d[len(d)/2]), secs(d[0]), secs(d[len(d)-1]))
}

// peak is the median peak RSS of the starts of s, and its ratio to the RSS
// under the first rate of updates.
func peak(s side) string {
	hwm := medianStats(s.starts).hwm
	if len(s.churn) == 0 || len(s.churn[0].rss) == 0 {
		return mib(hwm)
	}
	under := s.churn[0].rss[len(s.churn[0].rss)/2]
	return fmt.Sprintf("%s: %.2f× the RSS under updates", mib(hwm), float64(hwm)/float64(under))
}

// scrapes is the median time of scrapes, with min and max, what was sent
// and what it decompressed to.
func scrapes(st []scrapeStat) string {
	st = slices.Clone(st)
	slices.SortFunc(st, func(a, b scrapeStat) int { return cmp.Compare(a.took, b.took) })
	m := st[len(st)/2]
	enc := m.encoding
	if enc == "" {
		enc = "identity"
	}
	size := fmt.Sprintf("%d KiB", m.body/1024)
	if m.wire != m.body {
		size = fmt.Sprintf("%d KiB sent, %d KiB decompressed", m.wire/1024, m.body/1024)
	}
	return fmt.Sprintf("%.1f ms (%.1f–%.1f ms); %s; `%s`, %s", ms(m.took), ms(st[0].took), ms(st[len(st)-1].took), size, m.contentType, enc)
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
		full:      time.Duration(med(func(s startStats) float64 { return float64(s.full) })),
		cpu:       med(func(s startStats) float64 { return s.cpu }),
		apiserver: med(func(s startStats) float64 { return s.apiserver }),
		hwm:       int64(med(func(s startStats) float64 { return float64(s.hwm) })),
	}
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

// countPods returns the number of pods in the cluster.
func countPods(cfg *rest.Config) (int, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("counting the pods: %w", err)
	}
	return len(list.Items), nil
}

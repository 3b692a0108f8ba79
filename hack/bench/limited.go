package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/memcg"
)

// limitFactor is the memory limit of a limited start, in times the RSS
// under updates measured in the same run.
const limitFactor = 1.5

// limitedStart is one start of an exporter inside a memory cgroup of its
// own, with GOMEMLIMIT set to the cgroup's limit, as the shipped manifests
// set it from the container's limits.memory.
type limitedStart struct {
	limit int64
	// ready is when /readyz first answered 200 (kube-state-metrics: when
	// /metrics was first full), full when /metrics first held a
	// kube_pod_info series for every pod; 0: never.
	ready, full time.Duration
	// served is the kube_pod_info series of the last scrape.
	served int
	// cg is what the kernel counted in the cgroup by then, hwm the
	// process's VmHWM then (0 when it had ended).
	cg  memcg.Stats
	hwm int64
	// ended is how the process ended before it served a full /metrics
	// ("": it did not end), gaveUp set when it neither ended nor served
	// one within the time allowed.
	ended  string
	gaveUp time.Duration
	stderr string
}

// ok reports whether the start became ready and served a full /metrics,
// with no process killed for want of memory.
func (l limitedStart) ok() bool {
	return l.ready > 0 && l.full > 0 && l.ended == "" && l.cg.OOMKills == 0
}

// startLimited starts name (path with args, serving /metrics on addr)
// inside a memory cgroup limited to limit bytes, with GOMEMLIMIT=limit in
// its environment, and waits until it has served a full /metrics (every
// pod's kube_pod_info; when how is pollReadyz, only once /readyz answers
// 200, as a kubelet's readiness probe and then Prometheus would find it),
// until it ends, or until giveUp has passed. The binary's cached pages are
// dropped first: the pages it reads are counted against its limit, as in a
// container. It then reads the cgroup's
// counts, stops the process and removes the cgroup. An error is the
// harness's: a start that fails under the limit is a result.
func startLimited(name, path string, args []string, addr string, how polling, pods int, limit int64, giveUp time.Duration) (limitedStart, error) {
	l := limitedStart{limit: limit}
	if err := memcg.DropPageCache(path); err != nil {
		return l, err
	}
	g, err := memcg.New("kubectl-informer-bench", limit)
	if err != nil {
		return l, err
	}
	defer func() { _ = g.Remove() }()
	l.limit = g.Limit
	cmd := g.Command(path, args...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(g.Limit, 10))
	stderr := &tailWriter{}
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return l, fmt.Errorf("starting %s under a memory limit: %w", name, err)
	}
	var waitErr error // set before done is closed
	done := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	base := "http://" + addr
	sc := &scraper{base: base, plain: true}
	for l.full == 0 {
		select {
		case <-done:
			exited = true
			l.ended = exitText(waitErr)
		default:
		}
		if exited {
			break
		}
		if time.Since(start) > giveUp {
			l.gaveUp = giveUp
			break
		}
		if how != pollMetrics && l.ready == 0 {
			if resp, err := http.Get(base + "/readyz"); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					l.ready = time.Since(start)
				}
			}
		}
		if how == pollMetrics || l.ready > 0 {
			if b, _, err := sc.scrape(); err == nil {
				l.served = podInfoSeries(b)
				if l.served >= pods {
					l.full = time.Since(start)
				}
			}
		}
		if l.full == 0 {
			time.Sleep(pollEvery)
		}
	}
	if how == pollMetrics {
		l.ready = l.full
	}
	if !exited {
		l.hwm = procField(cmd.Process.Pid, "VmHWM:")
	}
	if l.cg, err = g.Stats(); err != nil {
		return l, err
	}
	if !l.ok() {
		l.stderr = string(stderr.b)
	}
	return l, nil
}

// exitText says how a process ended.
func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.String() // "signal: killed", "exit status 1"
	}
	if err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// steadyRSS is the RSS a side's memory limit is derived from: the median
// of its RSS samples under the first rate of updates, else its RSS after
// its last start.
func (s side) steadyRSS() int64 {
	if len(s.churn) > 0 && len(s.churn[0].rss) > 0 {
		return s.churn[0].rss[len(s.churn[0].rss)/2]
	}
	return s.rssSynced
}

// limitedSummary is the row of the main table: how many limited starts
// were ready, in what time, and the most the cgroup held.
func limitedSummary(starts []limitedStart) string {
	if len(starts) == 0 {
		return "not measured"
	}
	ok := 0
	var times []time.Duration
	var peak, kills int64
	for _, l := range starts {
		if l.ok() {
			ok++
			times = append(times, l.full)
		}
		peak = max(peak, l.cg.Peak)
		kills += l.cg.OOMKills
	}
	s := fmt.Sprintf("**%d of %d** starts ready with a full `/metrics`", ok, len(starts))
	if len(times) > 0 {
		slices.Sort(times)
		s += fmt.Sprintf(" (median %s)", secs(times[len(times)/2]))
	}
	return s + fmt.Sprintf("; %d OOM kills; the cgroup's peak %s of its %s limit", kills, mib(peak), mib(starts[0].limit))
}

// renderLimited is the table of each limited start of both sides.
func renderLimited(exp []limitedStart, expSteady int64, ksm []limitedStart, ksmSteady int64, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nStarts under a memory limit, after the updates above, each side in turn, %d each: the same command line as its other\n", len(exp))
	fmt.Fprintf(&b, "starts, run inside a memory cgroup of its own (%s) limited to %.1f× its RSS under %s (the median above),\n", how, limitFactor, "the first rate of updates")
	fmt.Fprintf(&b, "with `GOMEMLIMIT` set to that limit in bytes, as deploy/base/deployment.yaml sets it from the container's `limits.memory`;\n")
	fmt.Fprintf(&b, "no swap. The exporter's `/readyz` is polled every %s, then its `/metrics` until it is full (kube-state-metrics':\n", pollEvery)
	fmt.Fprintf(&b, "`/metrics` alone, its `/readyz` answering before its lists are in). The peak is the cgroup's most ever used\n")
	fmt.Fprintf(&b, "(memory.max_usage_in_bytes, or memory.peak: what the kernel holds against the limit, page cache included; the\n")
	fmt.Fprintf(&b, "binary's cached pages are dropped before each start, so that those it reads are counted there, as in a container);\n")
	fmt.Fprintf(&b, "OOM kills are the kernel's count in the cgroup (oom_kill).\n\n")
	fmt.Fprintf(&b, "| start | limit | ready | first full `/metrics` | cgroup peak | OOM kills | VmHWM then | outcome |\n|---|---|---|---|---|---|---|---|\n")
	row := func(who string, i int, l limitedStart, steady int64) {
		t := func(d time.Duration) string {
			if d == 0 {
				return "–"
			}
			return secs(d)
		}
		outcome := "ready, full"
		switch {
		case l.ended != "":
			outcome = fmt.Sprintf("**ended before it was full: %s**", l.ended)
		case l.gaveUp > 0:
			outcome = fmt.Sprintf("**not full after %s** (%d `kube_pod_info` series)", l.gaveUp, l.served)
		case l.cg.OOMKills > 0:
			outcome = "**ready, full, but a process was OOM-killed**"
		case l.cg.Peak >= l.limit:
			outcome = "ready, full, **the cgroup at its limit**"
		}
		hwm := "–"
		if l.hwm > 0 {
			hwm = mib(l.hwm)
		}
		fmt.Fprintf(&b, "| %s %d | %s (%d bytes: %.1f× %s) | %s | %s | %s (%.0f%%) | %d | %s | %s |\n", who, i+1, mib(l.limit), l.limit, limitFactor, mib(steady),
			t(l.ready), t(l.full), mib(l.cg.Peak), 100*float64(l.cg.Peak)/float64(l.limit), l.cg.OOMKills, hwm, outcome)
	}
	for i, l := range exp {
		row("exporter", i, l, expSteady)
	}
	for i, l := range ksm {
		row("kube-state-metrics", i, l, ksmSteady)
	}
	for _, l := range append(slices.Clone(exp), ksm...) {
		if !l.ok() && l.stderr != "" {
			fmt.Fprintf(&b, "\nThe last output of a start that failed under the limit:\n\n```text\n%s\n```\n", strings.TrimSpace(l.stderr))
			break
		}
	}
	return b.String()
}

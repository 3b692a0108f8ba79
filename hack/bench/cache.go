package main

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// cacheResult compares a query's peak memory with the memory of the cache
// it builds, once built: `query --watch` keeps its cache after printing the
// answer, so its RSS once the output has gone quiet is the steady cache,
// and its VmHWM the peak of filling it.
type cacheResult struct {
	steady, peak []int64 // bytes, one per run
}

// benchCache runs `query ARGS --watch` runs times. Each run ends when the
// output has been quiet for quiet after the answer began.
func benchCache(plugin string, args []string, runs int, quiet time.Duration) (cacheResult, error) {
	var r cacheResult
	for range runs {
		cmd := exec.Command(plugin, append(args, "--watch")...) //nolint:gosec // G204: runs the binary the benchmark was told to measure
		out, err := cmd.StdoutPipe()
		if err != nil {
			return r, err
		}
		if err := cmd.Start(); err != nil {
			return r, err
		}
		var mu sync.Mutex
		var last time.Time
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := out.Read(buf)
				if n > 0 {
					mu.Lock()
					last = time.Now()
					mu.Unlock()
				}
				if err != nil {
					_, _ = io.Copy(io.Discard, out)
					return
				}
			}
		}()
		start := time.Now()
		for {
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			l := last
			mu.Unlock()
			if !l.IsZero() && time.Since(l) > quiet {
				break
			}
			if time.Since(start) > 5*time.Minute {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return r, fmt.Errorf("query --watch printed no answer within 5 minutes")
			}
		}
		r.steady = append(r.steady, procRSS(cmd.Process.Pid))
		r.peak = append(r.peak, procField(cmd.Process.Pid, "VmHWM:"))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	return r, nil
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// render describes the result for the report.
func (r cacheResult) render(name string) string {
	if len(r.steady) == 0 {
		return ""
	}
	steady, peak := median(r.steady), median(r.peak)
	return fmt.Sprintf("\n`%s --watch`, median of %d: RSS once the answer is printed and the cache steady %s, peak RSS while filling it %s: %.2f× the steady cache (target ≤ 3×).\n",
		name, len(r.steady), mib(steady), mib(peak), float64(peak)/float64(steady))
}

package app

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// setMemoryLimit sets the Go runtime's soft memory limit to ratio of the
// memory limit of the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes) or, without one, of the system's memory, as
// kube-state-metrics' --auto-gomemlimit does, and logs what it set. A
// GOMEMLIMIT in the environment wins, and nothing is set.
func setMemoryLimit(ratio float64, log *slog.Logger) {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		log.Info("--auto-gomemlimit: GOMEMLIMIT is set in the environment and stays", "GOMEMLIMIT", v)
		return
	}
	total, source := factory.MemoryLimit()
	from := "cgroup"
	if !source {
		var err error
		if total, err = systemMemory("/proc/meminfo"); err != nil {
			log.Error("--auto-gomemlimit: no memory limit found: the runtime's limit stays unset", "err", err)
			return
		}
		from = "system"
	}
	limit := int64(float64(total) * ratio)
	debug.SetMemoryLimit(limit)
	log.Info("--auto-gomemlimit: set the Go runtime's memory limit (GOMEMLIMIT)", "bytes", limit, "ratio", ratio, "of", total, "from", from)
}

// systemMemory returns the MemTotal of a /proc/meminfo file, in bytes.
func systemMemory(path string) (uint64, error) {
	f, err := os.Open(path) //nolint:gosec // G304: /proc/meminfo
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal %q: %w", path, fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no MemTotal", path)
}

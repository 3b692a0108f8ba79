// Package spawn runs the commands the benchmark measures, from a process
// of its own that stays small.
//
// The peak RSS of a command is its rusage's ru_maxrss, which Linux carries
// over exec from the memory the process had before: Go starts a command by
// vfork, sharing its parent's memory until the exec, so the command's peak
// would be at least its parent's. The harness holds outputs and samples,
// and links client-go, whose initialisation alone takes tens of MiB; the
// spawner (hack/bench/spawner) links only this package and the standard
// library, so the peaks of the commands it starts are theirs above a floor
// of a few MiB, which it reports.
package spawn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Request is a command for the spawner: a JSON line on its stdin.
type Request struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
}

// Reply is what the spawner measured of a command: a JSON line on its
// stdout.
type Reply struct {
	Wall   time.Duration `json:"wall"`
	MaxRSS int64         `json:"maxRSS"` // bytes
	// CPU is the command's user and system CPU time: what it cost the
	// machine, which the wall time shares with the API server.
	CPU time.Duration `json:"cpu"`
	Out int           `json:"out"` // bytes written to stdout
	Err string        `json:"err,omitempty"`
	// Floor is the spawner's own peak RSS, in bytes.
	Floor int64 `json:"floor"`
}

// Serve runs each command read from in, one at a time, and writes what it
// measured to out, until in ends.
func Serve(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	enc := json.NewEncoder(out)
	for {
		var req Request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		cmd := exec.Command(req.Path, req.Args...) //nolint:gosec // G204: runs the binary the benchmark was told to measure
		var stdout counter
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		reply := Reply{Wall: time.Since(start), Out: int(stdout), Floor: ownPeak()}
		if err != nil {
			reply.Err = fmt.Sprintf("%v\n%s", err, stderr.String())
		}
		// A command that could not be started (its binary gone, say) has
		// no ProcessState: its error is the reply.
		if cmd.ProcessState == nil {
			reply.Err = fmt.Sprintf("%v", err)
		} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			reply.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
			reply.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if err := enc.Encode(reply); err != nil {
			return err
		}
	}
}

type counter int

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

// ownPeak returns the process's peak RSS (VmHWM), in bytes.
func ownPeak() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

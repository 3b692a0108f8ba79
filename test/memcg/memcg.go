// Package memcg runs a process under a memory limit of its own, as a
// container runs: in a memory cgroup made for it (cgroup v1's memory
// hierarchy, or cgroup v2's unified one), and reads what the kernel
// counted there: the limit, the most the cgroup ever used, and the
// processes it killed for want of memory. Making a cgroup needs root (or a
// delegated hierarchy): New says so in its error.
package memcg

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Root is where the machine's cgroup hierarchies are mounted.
const Root = "/sys/fs/cgroup"

// Group is a memory cgroup made by New.
type Group struct {
	// Dir is the cgroup's directory.
	Dir string
	// Limit is its memory limit in bytes: the one asked for, rounded down
	// to a whole page as the kernel rounds it.
	Limit int64
	// V2 is set on a unified (v2) hierarchy.
	V2 bool
}

// Stats is what the kernel counted in a group.
type Stats struct {
	// Limit is the group's memory limit, in bytes.
	Limit int64
	// Peak is the most memory the group ever used, in bytes
	// (memory.max_usage_in_bytes, v2: memory.peak), page cache included.
	Peak int64
	// OOMKills is the number of processes the kernel killed in the group
	// for want of memory (oom_kill in memory.oom_control, v2:
	// memory.events).
	OOMKills int64
}

// made numbers the groups of this process.
var made atomic.Int64

// New makes a memory cgroup limited to limit bytes (see Group.Limit),
// named after name, the process's ID and a count. On cgroup v1 it is a child of the cgroup this
// process runs in when that is visible, else of the memory hierarchy's
// root; on v2, a child of the hierarchy's root, with the memory controller
// enabled there. Remove it when done.
func New(name string, limit int64) (*Group, error) {
	leaf := fmt.Sprintf("%s-%d-%d", name, os.Getpid(), made.Add(1))
	g := &Group{V2: IsV2(), Limit: limit &^ int64(os.Getpagesize()-1)}
	if g.V2 {
		if err := enableMemoryV2(Root); err != nil {
			return nil, err
		}
		g.Dir = filepath.Join(Root, leaf)
	} else {
		g.Dir = filepath.Join(parentV1(), leaf)
	}
	if err := os.Mkdir(g.Dir, 0o755); err != nil { //nolint:gosec // G301: a cgroup's directory, as the kernel makes them
		return nil, fmt.Errorf("making the memory cgroup %s (run as root, on a machine with cgroups mounted at %s): %w", g.Dir, Root, err)
	}
	files := []string{"memory.limit_in_bytes"}
	if g.V2 {
		// No swap: a process over its limit is killed, as the kubelet's
		// containers are.
		files = []string{"memory.max", "memory.swap.max"}
	} else if _, err := os.Stat(filepath.Join(g.Dir, "memory.memsw.limit_in_bytes")); err == nil {
		// Memory and swap together, set after memory alone.
		files = append(files, "memory.memsw.limit_in_bytes")
	}
	for i, f := range files {
		v := strconv.FormatInt(g.Limit, 10)
		if f == "memory.swap.max" {
			v = "0"
		}
		if err := g.write(f, v); err != nil && (i == 0 || !errors.Is(err, os.ErrNotExist)) {
			_ = g.Remove()
			return nil, err
		}
	}
	return g, nil
}

// IsV2 reports whether the machine's cgroups are one unified (v2)
// hierarchy rather than one per controller (v1).
func IsV2() bool {
	_, err := os.Stat(filepath.Join(Root, "cgroup.controllers"))
	return err == nil
}

// parentV1 is the memory cgroup this process runs in, when its directory
// is visible (it is not inside a container that mounts only its own), else
// the memory hierarchy's root.
func parentV1() string {
	root := filepath.Join(Root, "memory")
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return root
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		// ID:CONTROLLERS:PATH
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !hasController(parts[1], "memory") {
			continue
		}
		dir := filepath.Join(root, parts[2])
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	return root
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// enableMemoryV2 enables the memory controller for the children of dir.
func enableMemoryV2(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")) //nolint:gosec // G304: a cgroup's file
	if err != nil {
		return fmt.Errorf("reading the cgroup v2 root's controllers (run as root): %w", err)
	}
	if hasController(strings.Join(strings.Fields(string(b)), ","), "memory") {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0o644); err != nil { //nolint:gosec // G306: a cgroup's file
		return fmt.Errorf("enabling the memory controller in %s (run as root): %w", dir, err)
	}
	return nil
}

func (g *Group) write(file, value string) error {
	if err := os.WriteFile(filepath.Join(g.Dir, file), []byte(value), 0o644); err != nil { //nolint:gosec // G306: a cgroup's file
		return fmt.Errorf("writing %s to %s/%s: %w", value, g.Dir, file, err)
	}
	return nil
}

// Command returns a command that runs path with args inside the group from
// its first instruction: a shell joins the group, then replaces itself with
// path (exec), so that the command's process is path's and every page it
// touches is counted in the group.
func (g *Group) Command(path string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(g.Dir, "cgroup.procs"), path}, args...)...) //nolint:gosec // G204: the program the caller runs under the limit
}

// DropPageCache asks the kernel to drop the cached pages of the file at
// path that no process maps (fsync, then posix_fadvise
// POSIX_FADV_DONTNEED), so that
// the next process to run it reads them again and has them counted in its
// own cgroup, as a container started on a node that has not run its image
// does; pages read before by a process of another cgroup stay counted
// there otherwise.
func DropPageCache(path string) error {
	f, err := os.Open(path) //nolint:gosec // G304: the program the caller runs under the limit
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	// Pages not yet written back (a binary just built) are not dropped.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing back %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("dropping the cached pages of %s: %w", path, err)
	}
	return nil
}

// Stats reads what the kernel counted in the group.
func (g *Group) Stats() (Stats, error) {
	var s Stats
	var err error
	limitFile, peakFile, eventsFile := "memory.limit_in_bytes", "memory.max_usage_in_bytes", "memory.oom_control"
	if g.V2 {
		limitFile, peakFile, eventsFile = "memory.max", "memory.peak", "memory.events"
	}
	if s.Limit, err = g.number(limitFile); err != nil {
		return s, err
	}
	if s.Peak, err = g.number(peakFile); err != nil {
		return s, err
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, eventsFile))
	if err != nil {
		return s, err
	}
	if s.OOMKills, err = Field(string(b), "oom_kill"); err != nil {
		return s, fmt.Errorf("%s/%s: %w", g.Dir, eventsFile, err)
	}
	return s, nil
}

// number reads the number in the group's file.
func (g *Group) number(file string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s/%s: %w", g.Dir, file, err)
	}
	return n, nil
}

// Field returns the number of a "NAME VALUE" line of a cgroup file such as
// memory.oom_control or memory.events. A kernel that counts no such thing
// (oom_kill came in Linux 4.13) makes it an error.
func Field(content, name string) (int64, error) {
	for line := range strings.SplitSeq(content, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %q line in %q", name, content)
}

// Remove removes the group. Its processes must have ended and been
// reaped (exec.Cmd.Wait): the kernel keeps a group that holds one.
func (g *Group) Remove() error {
	if err := os.Remove(g.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		b, _ := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs"))
		return fmt.Errorf("removing the memory cgroup %s (processes in it: %q): %w", g.Dir, strings.Fields(string(b)), err)
	}
	return nil
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// downNode stops the node's processes and every container, then removes
// what they leave on the machine: mounts under c.dir, the kubepods
// cgroups and kube-proxy's and the kubelet's iptables rules; it stops the
// API server and etcd before it deletes the bridge holding their address.
// It is safe to run when no node ran.
func (c *cluster) downNode() error {
	var errs []error
	// The kubelet first, so that it restarts nothing.
	for _, name := range []string{"kubelet", "kube-proxy", "kube-scheduler", "kube-controller-manager"} {
		c.stop(name)
	}
	// Every container process lives in a kubepods cgroup.
	errs = append(errs, killCgroupTree("kubepods"))
	c.stop("containerd")
	killShims(c.containerdSocket())
	errs = append(errs, unmountUnder(c.dir), removeCgroupTree("kubepods"))
	// kube-proxy removes its own rules.
	if kp := filepath.Join(c.bin, "kube-proxy"); fileExists(kp) {
		if out, err := exec.Command(kp, "--cleanup").CombinedOutput(); err != nil { //nolint:gosec // G204: the kube-proxy in the -bin directory
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %v: %s", err, out))
		}
	}
	errs = append(errs, removeKubeletChains())
	// The API server listens on the bridge's address: stopped after the
	// address is gone, it waits for its connections to that address to end
	// until its shutdown times out.
	for _, name := range []string{"kube-apiserver", "etcd"} {
		c.stop(name)
	}
	if _, err := net.InterfaceByName(bridgeLink); err == nil {
		if out, err := exec.Command("ip", "link", "delete", bridgeLink).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link delete %s: %v: %s", bridgeLink, err, out))
		}
	}
	if b, err := os.ReadFile(nodeLock); err == nil {
		if abs, _ := filepath.Abs(c.dir); strings.TrimSpace(string(b)) == abs {
			_ = os.Remove(nodeLock)
		}
	}
	return errors.Join(errs...)
}

// stop sends SIGTERM to the process recorded as name, waits for it to end
// and kills it if it does not within 15 seconds.
func (c *cluster) stop(name string) {
	pid, ok := c.running(name)
	if !ok {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, ok := c.running(name); !ok {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, ok := c.running(name); !ok {
			return
		}
	}
}

// cgroupRoots are the mounted cgroup hierarchies: each v1 controller's
// directory, or the one v2 directory.
func cgroupRoots() []string {
	var roots []string
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fs := fields[sep+1]; fs == "cgroup" || fs == "cgroup2" {
			roots = append(roots, fields[4])
		}
	}
	return roots
}

// killCgroupTree kills every process in the cgroup named name, and its
// descendants, in every hierarchy, and waits until none is left.
func killCgroupTree(name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := 0
		for _, root := range cgroupRoots() {
			_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return nil
				}
				b, err := os.ReadFile(filepath.Join(p, "cgroup.procs")) //nolint:gosec // G304: a cgroup's process list
				if err != nil {
					return nil
				}
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
						left++
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				return nil
			})
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes left in the %s cgroups after SIGKILL", left, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroupTree removes the cgroup named name and its descendants,
// deepest first, in every hierarchy.
func removeCgroupTree(name string) error {
	var errs []error
	for _, root := range cgroupRoots() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// killShims kills the containerd shims serving the containerd at socket.
func killShims(socket string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") && slices.Contains(args, socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder lazily unmounts every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var errs []error
	for range 5 {
		points := mountsUnder(abs)
		if len(points) == 0 {
			return nil
		}
		sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
		errs = errs[:0]
		for _, p := range points {
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
			}
		}
	}
	if points := mountsUnder(abs); len(points) > 0 {
		errs = append(errs, fmt.Errorf("still mounted: %s", strings.Join(points, ", ")))
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	return points
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// kubeletChains are the iptables chains the kubelet makes, per table.
var kubeletChains = map[string][]string{
	"mangle": {"KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY"},
	"nat":    {"KUBE-KUBELET-CANARY"},
	"filter": {"KUBE-FIREWALL", "KUBE-KUBELET-CANARY"},
}

// removeKubeletChains removes the kubelet's iptables chains, and the jumps
// to them, for IPv4 and IPv6; kube-proxy --cleanup leaves them.
func removeKubeletChains() error {
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(tool); err != nil {
			continue
		}
		for table, chains := range kubeletChains {
			for _, chain := range chains {
				if exec.Command(tool, "-w", "-t", table, "-n", "-L", chain).Run() != nil { //nolint:gosec // G204: iptables or ip6tables on the kubelet's chains
					continue // not there
				}
				for _, from := range []string{"INPUT", "OUTPUT"} {
					for exec.Command(tool, "-w", "-t", table, "-D", from, "-j", chain).Run() == nil { //nolint:gosec,revive // G204: iptables on the kubelet's chains; each call deletes one jump
					}
				}
				for _, op := range []string{"-F", "-X"} {
					if out, err := exec.Command(tool, "-w", "-t", table, op, chain).CombinedOutput(); err != nil { //nolint:gosec // G204: iptables on the kubelet's chains
						errs = append(errs, fmt.Errorf("%s -t %s %s %s: %v: %s", tool, table, op, chain, err, out))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

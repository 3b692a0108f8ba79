package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/kubectl-informer/kubectl-informer/hack/bench/spawn"
)

// The commands measured are started by the spawner (see package spawn),
// so that their peak RSS is theirs.

// spawner is the running spawner of the harness.
type spawner struct {
	mu    sync.Mutex
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	floor int64 // the largest Floor it reported
}

var (
	theSpawner     *spawner
	theSpawnerErr  error
	theSpawnerOnce sync.Once
)

// startSpawner builds and starts the spawner, once.
func startSpawner() (*spawner, error) {
	theSpawnerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-informer-bench-spawner-")
		if err != nil {
			theSpawnerErr = err
			return
		}
		bin := filepath.Join(dir, "spawner")
		build := exec.Command("go", "build", "-o", bin, "github.com/kubectl-informer/kubectl-informer/hack/bench/spawner") //nolint:gosec // G204: the go command on a temporary path
		if out, err := build.CombinedOutput(); err != nil {
			theSpawnerErr = fmt.Errorf("building the spawner: %v\n%s", err, out)
			return
		}
		s := &spawner{cmd: exec.Command(bin)} //nolint:gosec // G204: built just above
		s.cmd.Stderr = os.Stderr
		if s.in, err = s.cmd.StdinPipe(); err != nil {
			theSpawnerErr = err
			return
		}
		stdout, err := s.cmd.StdoutPipe()
		if err != nil {
			theSpawnerErr = err
			return
		}
		s.out = bufio.NewScanner(stdout)
		s.out.Buffer(make([]byte, 1<<20), 1<<20)
		err = s.cmd.Start()
		_ = os.RemoveAll(dir) // the running spawner keeps its binary open
		if err != nil {
			theSpawnerErr = err
			return
		}
		theSpawner = s
	})
	return theSpawner, theSpawnerErr
}

// run has the spawner run the command and returns what it measured.
func (s *spawner) run(m measured) (spawn.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line, err := json.Marshal(spawn.Request{Path: m.path, Args: m.args})
	if err != nil {
		return spawn.Reply{}, err
	}
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		return spawn.Reply{}, fmt.Errorf("the spawner: %w", err)
	}
	if !s.out.Scan() {
		return spawn.Reply{}, fmt.Errorf("the spawner ended: %v", s.out.Err())
	}
	var r spawn.Reply
	if err := json.Unmarshal(s.out.Bytes(), &r); err != nil {
		return r, err
	}
	s.floor = max(s.floor, r.Floor)
	if r.Err != "" {
		return r, fmt.Errorf("%s: %s", m.name, r.Err)
	}
	return r, nil
}

// spawnerFloor returns the spawner's largest peak RSS yet: the least peak
// RSS a command it runs can have.
func spawnerFloor() int64 {
	if theSpawner == nil {
		return 0
	}
	theSpawner.mu.Lock()
	defer theSpawner.mu.Unlock()
	return theSpawner.floor
}

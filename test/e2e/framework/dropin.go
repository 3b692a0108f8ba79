package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// dropIn is the plugin's binary built for DropInBinary, once per test
// binary.
var dropIn struct {
	once sync.Once
	path string
	err  error
}

// DropInBinary builds the plugin's binary once, into the cluster's
// directory (removed by Stop), and returns the path of a link to it named
// kube-state-metrics, as the image has: run under that name, the binary
// takes kube-state-metrics' command line.
func (c *Cluster) DropInBinary(t testing.TB) string {
	t.Helper()
	dropIn.once.Do(func() {
		dir := filepath.Join(c.Dir, "dropin")
		if dropIn.err = os.MkdirAll(dir, 0o750); dropIn.err != nil {
			return
		}
		bin := filepath.Join(dir, "kubectl-informer")
		build := exec.Command("go", "build", "-o", bin, "github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer")
		if out, err := build.CombinedOutput(); err != nil {
			dropIn.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		link := filepath.Join(dir, "kube-state-metrics")
		if dropIn.err = os.Symlink("kubectl-informer", link); dropIn.err == nil {
			dropIn.path = link
		}
	})
	if dropIn.err != nil {
		t.Fatal(dropIn.err)
	}
	return dropIn.path
}

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// TestVersionOfAPlainBuild builds the plugin with go build in the checkout,
// without the -ldflags of make build, and expects version to name the
// checkout's commit and the module version the Go toolchain derived from it.
func TestVersionOfAPlainBuild(t *testing.T) {
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = cluster.Root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	if fi, err := os.Stat(filepath.Join(cluster.Root, ".git")); err != nil || !fi.IsDir() {
		t.Skipf("%s is not a git clone whose .git is a directory (a worktree, or no checkout): the Go toolchain records no VCS information there", cluster.Root)
	}
	head := git("rev-parse", "HEAD")
	tags := git("tag", "--points-at", "HEAD")

	bin := filepath.Join(t.TempDir(), exeName("kubectl-informer"))
	// -buildvcs=true: GOFLAGS may turn VCS stamping off.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/kubectl-informer")
	build.Dir = cluster.Root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubectl-informer version: %v\n%s", err, out)
	}
	var got version.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version -o json printed %q: %v", out, err)
	}
	if got.Commit != head && got.Commit != head+"-dirty" {
		t.Errorf("commit %q, want %q (with -dirty if the work tree has changes)", got.Commit, head)
	}
	// Untagged, the toolchain's version is a pseudo-version naming the
	// commit, v0.0.0-20261123200000-3599f69d0c6d; tagged, the tag.
	if tags == "" && (!strings.HasPrefix(got.Version, "v") || !strings.Contains(got.Version, "-"+head[:12])) {
		t.Errorf("version %q, want a pseudo-version of commit %s", got.Version, head[:12])
	}
	if tags != "" && !strings.HasPrefix(got.Version, "v") {
		t.Errorf("version %q, want one of the tags %q", got.Version, tags)
	}
}

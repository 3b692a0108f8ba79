package e2e

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/hack/dist/krew"
)

// The version and commit the release under test is stamped with.
const (
	releaseVersion = "v0.0.0-e2e"
	releaseCommit  = "e2e1234"
)

// hostPlatforms are the released platforms; the tests build the one they
// run on.
var hostPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// release is the release of the host platform, built once for the package
// by the dist tool (go build for one platform only, to keep the tests short).
var release struct {
	once sync.Once
	err  error
	// dist is the dist tool's output directory.
	dist string
	// bin holds the host archive's files, unpacked.
	bin string
}

func hostPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

func hostArchive() string {
	return fmt.Sprintf("kubectl-informer_%s_%s_%s.tar.gz", releaseVersion, runtime.GOOS, runtime.GOARCH)
}

func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// hostRelease returns the dist directory of the host platform's release and
// the directory its archive is unpacked in, building them on first use.
func hostRelease(t *testing.T) (dist, bin string) {
	t.Helper()
	found := false
	for _, p := range hostPlatforms {
		found = found || p == hostPlatform()
	}
	if !found {
		t.Skipf("%s is not a released platform", hostPlatform())
	}
	release.once.Do(func() {
		release.dist, release.bin, release.err = buildRelease()
	})
	if release.err != nil {
		t.Fatal(release.err)
	}
	return release.dist, release.bin
}

// buildRelease runs the dist tool for the host platform into a directory
// removed with the cluster, and unpacks the archive it writes.
func buildRelease() (string, string, error) {
	dir, err := os.MkdirTemp(cluster.Dir, "release-")
	if err != nil {
		return "", "", err
	}
	dist, bin := filepath.Join(dir, "dist"), filepath.Join(dir, "bin")
	const v = "github.com/kubectl-informer/kubectl-informer/pkg/version"
	cmd := exec.Command("go", "run", "./hack/dist",
		"--version", releaseVersion,
		"--platforms", hostPlatform(),
		"--out", dist,
		"--ldflags", "-s -w -X "+v+".Version="+releaseVersion+" -X "+v+".Commit="+releaseCommit)
	cmd.Dir = cluster.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go run ./hack/dist: %v\n%s", err, out)
	}
	if err := untar(filepath.Join(dist, hostArchive()), bin); err != nil {
		return "", "", err
	}
	return dist, bin, nil
}

// untar unpacks the regular files of a .tar.gz into dir with their modes.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "/") {
			return fmt.Errorf("%s: unexpected entry %q", archive, h.Name)
		}
		out, err := os.OpenFile(filepath.Join(dir, h.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode))
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// TestDistHostRelease checks what the dist tool writes for the host
// platform: the manifest against krew's rules and the archive, the
// checksums, and the binary in the archive, built without cgo and stamped.
func TestDistHostRelease(t *testing.T) {
	dist, bin := hostRelease(t)

	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"checksums.txt", hostArchive(), "plugin.yaml"}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("dist holds %v, want %v", names, want)
	}

	p, err := krew.Load(filepath.Join(dist, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := krew.Validate(p, "informer"); err != nil {
		t.Fatalf("dist/plugin.yaml: %v", err)
	}
	archive, err := krew.ReadArchive(filepath.Join(dist, hostArchive()))
	if err != nil {
		t.Fatal(err)
	}
	if err := krew.ValidateArchives(p, map[string]*krew.Archive{archive.Name: archive}); err != nil {
		t.Fatalf("dist/plugin.yaml against the archive: %v", err)
	}
	if len(p.Spec.Platforms) != 1 || p.Spec.Version != releaseVersion {
		t.Fatalf("manifest of version %s with %d platforms; want %s and the host's only", p.Spec.Version, len(p.Spec.Platforms), releaseVersion)
	}
	if goos, goarch := p.Spec.Platforms[0].OSArch(); goos != runtime.GOOS || goarch != runtime.GOARCH {
		t.Errorf("the platform selects %s/%s, want %s", goos, goarch, hostPlatform())
	}
	root, err := krew.Load(filepath.Join(cluster.Root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Description != root.Spec.Description || p.Spec.Caveats != root.Spec.Caveats || p.Spec.ShortDescription != root.Spec.ShortDescription {
		t.Error("dist/plugin.yaml does not carry the texts of the root plugin.yaml")
	}

	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := archive.SHA256 + "  " + archive.Name + "\n"; string(sums) != want {
		t.Errorf("checksums.txt is %q, want %q", sums, want)
	}
	if p.Spec.Platforms[0].SHA256 != archive.SHA256 {
		t.Errorf("the manifest's sha256 %s is not the archive's %s", p.Spec.Platforms[0].SHA256, archive.SHA256)
	}

	plugin := filepath.Join(bin, exeName("kubectl-informer"))
	out, err := exec.Command(plugin, "version", "--client").CombinedOutput()
	wantVersion := fmt.Sprintf("kubectl-informer %s (commit %s, %s, %s)\n", releaseVersion, releaseCommit, runtime.Version(), hostPlatform())
	if err != nil || string(out) != wantVersion {
		t.Errorf("kubectl-informer version: %v, printed %q; want %q", err, out, wantVersion)
	}
	// The build settings Go records: no cgo, no local paths.
	info, err := exec.Command("go", "version", "-m", plugin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	for _, setting := range []string{"build\tCGO_ENABLED=0", "build\t-trimpath=true"} {
		if !strings.Contains(string(info), setting) {
			t.Errorf("the binary was not built with %q:\n%s", setting, info)
		}
	}
}

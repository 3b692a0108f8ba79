package image_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kubectl-informer/kubectl-informer/pkg/version"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// unpacked is the host platform's image, unpacked once for the package.
var unpacked struct {
	once sync.Once
	err  error
	// root is the image's file system.
	root string
	// config is the image's config.
	config *v1.ConfigFile
	// annotations are the image manifest's.
	annotations map[string]string
}

// hostImage returns the unpacked file system of the layout's image for the
// host's platform, with its config and annotations.
func hostImage(t *testing.T) (string, *v1.ConfigFile, map[string]string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("the image holds linux binaries; this is %s", runtime.GOOS)
	}
	unpacked.once.Do(func() {
		unpacked.root, unpacked.config, unpacked.annotations, unpacked.err = unpackHostImage()
	})
	if unpacked.err != nil {
		t.Fatal(unpacked.err)
	}
	return unpacked.root, unpacked.config, unpacked.annotations
}

func layoutDir() string {
	if d := os.Getenv("IMAGE_LAYOUT"); d != "" {
		return d
	}
	return filepath.Join(cluster.Root, "_output", "image")
}

func unpackHostImage() (string, *v1.ConfigFile, map[string]string, error) {
	dir := layoutDir()
	p, err := layout.FromPath(dir)
	if err != nil {
		return "", nil, nil, fmt.Errorf("no OCI image layout at %s (IMAGE_LAYOUT): run make image IMAGE_PLATFORMS=linux/%s, or make test-e2e: %w", dir, runtime.GOARCH, err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		return "", nil, nil, err
	}
	rm, err := root.IndexManifest()
	if err != nil {
		return "", nil, nil, err
	}
	if len(rm.Manifests) != 1 {
		return "", nil, nil, fmt.Errorf("%s lists %d entries, want the one image index make image writes", dir, len(rm.Manifests))
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		return "", nil, nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return "", nil, nil, err
	}
	var img v1.Image
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		if d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			if img, err = idx.Image(d.Digest); err != nil {
				return "", nil, nil, err
			}
		}
	}
	if img == nil {
		return "", nil, nil, fmt.Errorf("%s has images for %q, none for linux/%s: run make image IMAGE_PLATFORMS=linux/%s", dir, platforms, runtime.GOARCH, runtime.GOARCH)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", nil, nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", nil, nil, err
	}
	fs, err := os.MkdirTemp(cluster.Dir, "image-root-")
	if err != nil {
		return "", nil, nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return "", nil, nil, err
	}
	for i, l := range layers {
		if err := unpackLayer(fs, l); err != nil {
			return "", nil, nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return fs, cfg, m.Annotations, nil
}

// unpackLayer writes a layer's directories, files and symbolic links under
// root (whiteouts are not honoured: the image has none).
func unpackLayer(root string, l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q escapes the file system", h.Name)
		}
		p := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode).Perm()|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm()) //nolint:gosec // G304: under the test's own directory
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr) //nolint:gosec // G110: the project's own image
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q has type %q, which the image should not hold", h.Name, h.Typeflag)
		}
	}
}

// resolve returns the file that path, a path inside the image, names,
// following symbolic links inside root as a container would.
func resolve(t *testing.T, root, path string) string {
	t.Helper()
	for range 16 {
		p := filepath.Join(root, path)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s is not in the image: %v", path, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	t.Fatalf("%s: too many symbolic links", path)
	return ""
}

// TestImageBinaryReportsItsVersion runs the image's /kubectl-informer
// version and expects the version and commit the image's annotations
// name, for the image's platform; the binary is static and holds no
// path of the machine that built it.
func TestImageBinaryReportsItsVersion(t *testing.T) {
	root, cfg, annotations := hostImage(t)
	bin := resolve(t, root, "/kubectl-informer")
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("/kubectl-informer version: %v", err)
	}
	var got version.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version -o json printed %q: %v", out, err)
	}
	wantVersion := annotations["org.opencontainers.image.version"]
	revision := annotations["org.opencontainers.image.revision"]
	if wantVersion == "" || got.Version != wantVersion {
		t.Errorf("version %q, the image is version %q", got.Version, wantVersion)
	}
	if got.Commit == "" || got.Commit == "unknown" || !strings.HasPrefix(revision, strings.TrimSuffix(got.Commit, "-dirty")) {
		t.Errorf("commit %q, the image's revision is %q", got.Commit, revision)
	}
	if want := cfg.OS + "/" + cfg.Architecture; got.Platform != want {
		t.Errorf("platform %q, the image's is %q", got.Platform, want)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader: it is not static")
		}
	}
	data, err := os.ReadFile(bin) //nolint:gosec // G304: the test's own image
	if err != nil {
		t.Fatal(err)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{cluster.Root, strings.TrimSpace(string(goroot))} {
		if dir != "" && bytes.Contains(data, []byte(dir+"/")) {
			t.Errorf("the binary holds the build machine's path %s: it is not built with -trimpath", dir)
		}
	}
}

// TestImageEntrypointServesAsKubeStateMetrics runs the image's entrypoint
// with kube-prometheus' command line for kube-state-metrics and expects
// kube-state-metrics' probes, the profile's series and the self-metrics
// kube-prometheus' alerts read (requests counted, shard).
func TestImageEntrypointServesAsKubeStateMetrics(t *testing.T) {
	root, cfg, _ := hostImage(t)
	if len(cfg.Config.Entrypoint) == 0 {
		t.Fatal("the image has no entrypoint")
	}
	ns := cluster.NewNamespace(t, "image")
	cluster.CreatePod(t, ns, "web-0", map[string]string{"app": "web"})

	mainAddr, telemetryAddr := freePort(t), freePort(t)
	// As the container runtime runs it: the entrypoint, then the
	// container's args, argv[0] being the entrypoint's path.
	args := append([]string{}, cfg.Config.Entrypoint...)
	args = append(args,
		"--host=127.0.0.1", "--port="+port(t, mainAddr),
		"--telemetry-host=127.0.0.1", "--telemetry-port="+port(t, telemetryAddr),
		"--kubeconfig="+cluster.Kubeconfig)
	var stderr framework.SyncBuffer
	cmd := &exec.Cmd{
		Path: resolve(t, root, cfg.Config.Entrypoint[0]),
		Args: args,
		Dir:  root,
		// The image's environment names paths inside the image; the
		// process runs outside it, with the test's.
		Env:    os.Environ(),
		Stdout: &stderr,
		Stderr: &stderr,
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; t.Failed() {
			t.Logf("the entrypoint ended (%v); its output:\n%s", err, stderr.String())
		}
	})

	get := func(url string) (int, string, bool) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%q exited (%v) before it answered %s\noutput:\n%s", args, err, url, stderr.String())
		default:
		}
		resp, err := http.Get(url) //nolint:gosec,noctx // G107: the test's own process
		if err != nil {
			return 0, "", false
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err == nil
	}
	status := func(url string, want int) func() bool {
		return func() bool { code, _, ok := get(url); return ok && code == want }
	}
	mainURL, telemetryURL := "http://"+mainAddr, "http://"+telemetryAddr
	framework.Eventually(t, mainURL+"/livez answers 200", status(mainURL+"/livez", http.StatusOK))
	framework.Eventually(t, mainURL+"/healthz answers 200", status(mainURL+"/healthz", http.StatusOK))
	framework.Eventually(t, telemetryURL+"/readyz answers 200", status(telemetryURL+"/readyz", http.StatusOK))
	framework.Eventually(t, "kube_pod_info of "+ns+"/web-0 on "+mainURL+"/metrics", func() bool {
		for _, m := range framework.Scrape(t, mainURL)["kube_pod_info"].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["pod"] == "web-0" {
				return true
			}
		}
		return false
	})
	// kube-state-metrics' self-metrics that kube-prometheus' alerts read:
	// the pods' initial list counted, by a list or by a watch streaming
	// it (client-go's streaming lists), under kube-state-metrics' name of
	// the type; and the shard.
	framework.Eventually(t, "the pods' list counted on "+telemetryURL+"/metrics", func() bool {
		mfs := framework.Scrape(t, telemetryURL)
		for _, name := range []string{"kube_state_metrics_list_total", "kube_state_metrics_watch_total"} {
			for _, m := range mfs[name].GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["resource"] == "*v1.Pod" && labels["result"] == "success" && framework.SampleValue(m) > 0 {
					return true
				}
			}
		}
		return false
	})
	mfs := framework.Scrape(t, telemetryURL)
	for _, name := range []string{"kube_state_metrics_shard_ordinal", "kube_state_metrics_total_shards", "kube_state_metrics_build_info"} {
		if len(mfs[name].GetMetric()) != 1 {
			t.Errorf("%s/metrics has %d series of %s, want 1", telemetryURL, len(mfs[name].GetMetric()), name)
		}
	}
	// The main port serves the families alone, as kube-state-metrics' does.
	if mfs := framework.Scrape(t, mainURL); mfs["go_goroutines"] != nil || mfs["kube_state_metrics_build_info"] != nil || mfs["kubectl_informer_build_info"] != nil {
		t.Errorf("%s/metrics serves the process's own metrics, which kube-state-metrics serves on the telemetry port only", mainURL)
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	return framework.ClosedPort(t)
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

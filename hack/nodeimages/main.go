// Command nodeimages writes the images the local node runs, as OCI
// archives that `localcluster up -node -images DIR` imports into the node's
// containerd, so that nothing is pulled from a registry:
//
//   - kubectl-informer.test/pause:1, the sandbox image (./pause);
//   - kubectl-informer.test/testapp:1, the tests' workload (./testapp);
//   - ghcr.io/kubectl-informer/kubectl-informer:dev, the project's image
//     for this machine's platform, from the OCI layout make image wrote.
//
// Each archive is an OCI image layout whose index names the image with
// containerd's io.containerd.image.name annotation.
//
//	go run ./hack/nodeimages -out _output/node-images -layout _output/image
package main

import (
	"archive/tar"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

// Names of the images, as pods name them.
const (
	PauseImage   = "kubectl-informer.test/pause:1"
	TestappImage = "kubectl-informer.test/testapp:1"
	ProjectImage = "ghcr.io/kubectl-informer/kubectl-informer:dev"
)

// annotationImageName is the annotation containerd names an imported
// image by.
const annotationImageName = "io.containerd.image.name"

func main() {
	out := flag.String("out", "_output/node-images", "directory to write the archives into")
	layoutDir := flag.String("layout", "_output/image", "the OCI image layout make image wrote (its only index)")
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	if err := run(context.Background(), *root, *out, *layoutDir); err != nil {
		fmt.Fprintf(os.Stderr, "nodeimages: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root, out, layoutDir string) error {
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	p := ociimage.Platform{OS: "linux", Arch: runtime.GOARCH}
	tmp, err := os.MkdirTemp("", "nodeimages-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for _, prog := range []struct{ name, image string }{{"pause", PauseImage}, {"testapp", TestappImage}} {
		bin := filepath.Join(tmp, prog.name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", bin, "./hack/nodeimages/"+prog.name) //nolint:gosec // G204: go build of this tool's own programs
		cmd.Dir = root
		cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), p.GoEnv()...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./hack/nodeimages/%s: %v: %s", prog.name, err, b)
		}
		idx, err := programIndex(p, prog.name, bin)
		if err != nil {
			return err
		}
		if err := writeArchive(filepath.Join(out, prog.name+".tar"), idx, prog.image); err != nil {
			return err
		}
	}
	idx, err := ociimage.ReadLayout(layoutDir, "")
	if err != nil {
		return err
	}
	return writeArchive(filepath.Join(out, "kubectl-informer.tar"), idx, ProjectImage)
}

// programIndex is an index over one image for p whose entrypoint is the
// static binary bin, run as nobody.
func programIndex(p ociimage.Platform, name, bin string) (v1.ImageIndex, error) {
	created := time.Unix(0, 0).UTC()
	layer, err := ociimage.NewLayer([]ociimage.Entry{{Name: name, Type: tar.TypeReg, Mode: 0o755, Source: bin}}, created)
	if err != nil {
		return nil, err
	}
	md := ociimage.Metadata{Title: name, Description: "the local node's " + name, Created: created}
	img, err := ociimage.Image(p, ociimage.Config{
		Metadata:     md,
		User:         ociimage.User{UID: 65534, GID: 65534},
		Entrypoint:   []string{"/" + name},
		ExposedPorts: []string{},
	}, ociimage.Layer{Layer: layer, CreatedBy: "go build ./hack/nodeimages/" + name})
	if err != nil {
		return nil, err
	}
	return ociimage.Index([]ociimage.PlatformImage{{Platform: p, Image: img}}, md)
}

// writeArchive writes idx as an OCI image layout in a tar archive at path,
// named image for containerd.
func writeArchive(path string, idx v1.ImageIndex, image string) error {
	dir, err := os.MkdirTemp("", "nodeimages-layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{annotationImageName: image})); err != nil {
		return err
	}
	f, err := os.Create(path) //nolint:gosec // G304: the archive the caller names
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p) //nolint:gosec // G304: a file of the layout just written
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		return errors.Join(err, src.Close())
	})
	return errors.Join(err, tw.Close(), f.Close())
}

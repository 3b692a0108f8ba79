package ociimage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI annotation keys (image-spec annotations.md).
const (
	AnnotationCreated     = "org.opencontainers.image.created"
	AnnotationSource      = "org.opencontainers.image.source"
	AnnotationVersion     = "org.opencontainers.image.version"
	AnnotationRevision    = "org.opencontainers.image.revision"
	AnnotationLicenses    = "org.opencontainers.image.licenses"
	AnnotationTitle       = "org.opencontainers.image.title"
	AnnotationDescription = "org.opencontainers.image.description"
	AnnotationRefName     = "org.opencontainers.image.ref.name"
)

// Metadata describes the build: the index, every manifest and every
// config's labels carry it as OCI annotations.
type Metadata struct {
	Title       string
	Description string
	// Source is the URL of the source repository.
	Source string
	// Version is the release version, the tag the image is pushed as.
	Version string
	// Revision is the commit the image is built from.
	Revision string
	// Licenses is an SPDX license expression ("Apache-2.0").
	Licenses string
	// Created is the commit's time (or SOURCE_DATE_EPOCH): the config's
	// and the history's created time, every file's mtime, and the created
	// annotation.
	Created time.Time
}

// Annotations are m's OCI annotations; empty fields are left out.
func (m Metadata) Annotations() map[string]string {
	a := map[string]string{}
	for k, v := range map[string]string{
		AnnotationTitle:       m.Title,
		AnnotationDescription: m.Description,
		AnnotationSource:      m.Source,
		AnnotationVersion:     m.Version,
		AnnotationRevision:    m.Revision,
		AnnotationLicenses:    m.Licenses,
	} {
		if v != "" {
			a[k] = v
		}
	}
	if !m.Created.IsZero() {
		a[AnnotationCreated] = m.Created.UTC().Format(time.RFC3339)
	}
	return a
}

// Config is what every platform's image runs.
type Config struct {
	Metadata Metadata
	// User runs the entrypoint.
	User User
	// Entrypoint is the command, DefaultEntrypoint when nil.
	Entrypoint []string
	// ExposedPorts are port/protocol, DefaultPorts when nil.
	ExposedPorts []string
}

// DefaultEntrypoint is kube-state-metrics' image's entrypoint: the binary
// run under its drop-in name on KSM's ports.
var DefaultEntrypoint = []string{DropInPath, "--port=8080", "--telemetry-port=8081"}

// DefaultPorts are kube-state-metrics' main and telemetry ports.
var DefaultPorts = []string{"8080/tcp", "8081/tcp"}

// Env is the environment of the image's process.
var Env = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=" + CACertificatesPath,
}

// Layer is a layer with the history entry that says what it holds.
type Layer struct {
	Layer     v1.Layer
	CreatedBy string
}

// Image is the OCI image of platform p: layers in order under c's config,
// with c's metadata as the manifest's annotations and the config's labels.
func Image(p Platform, c Config, layers ...Layer) (v1.Image, error) {
	entrypoint := c.Entrypoint
	if entrypoint == nil {
		entrypoint = DefaultEntrypoint
	}
	ports := c.ExposedPorts
	if ports == nil {
		ports = DefaultPorts
	}
	if c.User.UID == 0 {
		return nil, errors.New("the image's user is root: name a non-root user")
	}
	created := v1.Time{Time: c.Metadata.Created.UTC()}
	exposed := map[string]struct{}{}
	for _, port := range ports {
		exposed[port] = struct{}{}
	}
	cfg := &v1.ConfigFile{
		Architecture: p.Arch,
		OS:           p.OS,
		Variant:      p.Variant,
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:         c.User.Spec(),
			Entrypoint:   entrypoint,
			Env:          Env,
			WorkingDir:   "/",
			ExposedPorts: exposed,
			Labels:       c.Metadata.Annotations(),
		},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		adds[i] = mutate.Addendum{
			Layer:     l.Layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: l.CreatedBy},
		}
	}
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	annotated, ok := mutate.Annotations(img, c.Metadata.Annotations()).(v1.Image)
	if !ok {
		return nil, errors.New("annotating the image did not give an image")
	}
	return annotated, nil
}

// PlatformImage is the image of one platform.
type PlatformImage struct {
	Platform Platform
	Image    v1.Image
}

// Index is the OCI image index over images, in order, each described by
// its platform, annotated with m.
func Index(images []PlatformImage, m Metadata) (v1.ImageIndex, error) {
	if len(images) == 0 {
		return nil, errors.New("no platform to build: name at least one")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pi := range images {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        pi.Image,
			Descriptor: v1.Descriptor{Platform: pi.Platform.OCI()},
		})
	}
	annotated, ok := mutate.Annotations(idx, m.Annotations()).(v1.ImageIndex)
	if !ok {
		return nil, errors.New("annotating the index did not give an index")
	}
	return annotated, nil
}

// WriteLayout writes idx as the one entry of a new OCI image layout at dir,
// named refName (org.opencontainers.image.ref.name, the tag). A layout
// already at dir is replaced; anything else there is an error, so that no
// other directory is removed by mistake.
func WriteLayout(dir string, idx v1.ImageIndex, refName string) error {
	if err := removeLayout(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{AnnotationRefName: refName}))
}

func removeLayout(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return fmt.Errorf("%q holds files but no OCI image layout: remove it or name another output directory", dir)
	}
	return os.RemoveAll(dir)
}

// ReadLayout returns the image index named refName in the OCI layout at
// dir; refName "" takes the layout's only index.
func ReadLayout(dir, refName string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%q is not an OCI image layout (run make image): %w", dir, err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	var found []v1.Descriptor
	var names []string
	for _, d := range m.Manifests {
		if !d.MediaType.IsIndex() {
			continue
		}
		names = append(names, d.Annotations[AnnotationRefName])
		if refName == "" || d.Annotations[AnnotationRefName] == refName {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 0 && refName == "":
		return nil, fmt.Errorf("the OCI layout %q holds no image index: run make image", dir)
	case len(found) == 0:
		return nil, fmt.Errorf("the OCI layout %q holds no image index named %q, only %q: build that version with make image VERSION=%s", dir, refName, names, refName)
	case len(found) > 1:
		return nil, fmt.Errorf("the OCI layout %q holds %d image indexes named %q: name one of %q", dir, len(found), refName, names)
	}
	return root.ImageIndex(found[0].Digest)
}

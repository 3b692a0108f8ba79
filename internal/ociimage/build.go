package ociimage

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Binary is the plugin's binary built for a platform.
type Binary struct {
	Platform Platform
	// Path is the binary's file.
	Path string
	// CreatedBy says how it was built, for the image's history.
	CreatedBy string
}

// Build describes a multi-platform image.
type Build struct {
	Config Config
	Base   Base
	// BaseCreatedBy says what the base layer holds, for the history.
	BaseCreatedBy string
	// Binaries are the platforms' binaries, one image each, in the index's
	// order.
	Binaries []Binary
}

// BuildIndex builds the image index of b: every platform's image is the
// base layer (shared, so stored once) and a layer with its binary and the
// drop-in link. skipped names the files of the base left out (see
// BaseEntries).
func BuildIndex(b Build) (idx v1.ImageIndex, skipped []string, err error) {
	mtime := b.Config.Metadata.Created
	entries, skipped, err := BaseEntries(b.Base)
	if err != nil {
		return nil, nil, err
	}
	base, err := NewLayer(entries, mtime)
	if err != nil {
		return nil, nil, fmt.Errorf("base layer: %w", err)
	}
	c := b.Config
	c.User = b.Base.User
	var images []PlatformImage
	for _, bin := range b.Binaries {
		app, err := NewLayer(AppEntries(bin.Path), mtime)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: binary layer: %w", bin.Platform, err)
		}
		img, err := Image(bin.Platform, c, Layer{Layer: base, CreatedBy: b.BaseCreatedBy}, Layer{Layer: app, CreatedBy: bin.CreatedBy})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", bin.Platform, err)
		}
		images = append(images, PlatformImage{Platform: bin.Platform, Image: img})
	}
	idx, err = Index(images, c.Metadata)
	return idx, skipped, err
}

package ociimage

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Reference is the tag registry/repository:tag, where registry is a host
// with an optional path ("ghcr.io/kubectl-informer").
func Reference(registry, repository, tag string) (name.Tag, error) {
	registry = strings.TrimSuffix(registry, "/")
	if registry == "" || strings.Contains(registry, "://") {
		return name.Tag{}, fmt.Errorf("registry %q: want a host and an optional path, such as REGISTRY=ghcr.io/kubectl-informer", registry)
	}
	ref, err := name.NewTag(registry + "/" + repository + ":" + tag)
	if err != nil {
		return name.Tag{}, fmt.Errorf("registry %q, repository %q, tag %q: %w", registry, repository, tag, err)
	}
	return ref, nil
}

// PushIndex writes idx, every manifest it lists with their configs and
// layers, to ref, and returns the digest it is stored under. opts name the
// credentials (remote.WithAuthFromKeychain(authn.DefaultKeychain) reads
// the docker config and its credential helpers).
func PushIndex(ctx context.Context, idx v1.ImageIndex, ref name.Tag, opts ...remote.Option) (name.Digest, error) {
	if err := remote.WriteIndex(ref, idx, append(opts, remote.WithContext(ctx))...); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(d.String()), nil
}

// PushImage writes img (an image or an artifact such as a chart's) to ref
// and returns the digest it is stored under.
func PushImage(ctx context.Context, img v1.Image, ref name.Tag, opts ...remote.Option) (name.Digest, error) {
	if err := remote.Write(ref, img, append(opts, remote.WithContext(ctx))...); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(d.String()), nil
}

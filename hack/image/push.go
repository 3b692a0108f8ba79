package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

// repository is the image's name under the registry.
const repository = "kubectl-informer"

type pushOptions struct {
	layout   string
	version  string
	registry string
}

func (o *pushOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.layout, "layout", "_output/image", "the OCI image layout make image wrote")
	fs.StringVar(&o.version, "version", "", "the version to push: the layout's tag and the registry's (required)")
	fs.StringVar(&o.registry, "registry", "", "where to push, host/path: the image goes to REGISTRY/kubectl-informer:VERSION (required)")
}

// keychain finds the registry's credentials: the docker config
// ($DOCKER_CONFIG or ~/.docker/config.json) and the credential helpers it
// names, as docker login and crane auth login write them.
var keychain = authn.DefaultKeychain

func (o *pushOptions) run(ctx context.Context, stdout, _ io.Writer) error {
	if o.version == "" {
		return fmt.Errorf("--version is required: the tag make image wrote, e.g. make image-push VERSION=v1.2.3 REGISTRY=ghcr.io/kubectl-informer")
	}
	ref, err := ociimage.Reference(o.registry, repository, o.version)
	if err != nil {
		return fmt.Errorf("--registry: %w", err)
	}
	idx, err := ociimage.ReadLayout(o.layout, o.version)
	if err != nil {
		return err
	}
	d, err := ociimage.PushIndex(ctx, idx, ref, remote.WithAuthFromKeychain(keychain))
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, desc := range m.Manifests {
		_, _ = fmt.Fprintf(stdout, "pushed %s %s\n", desc.Platform, ref.Context().Digest(desc.Digest.String()))
	}
	_, err = fmt.Fprintf(stdout, "pushed %s as %s\n", d, ref)
	return err
}

type chartOptions struct {
	chart           string
	registry        string
	version         string
	appVersion      string
	sourceDateEpoch string
	out             string
}

func (o *chartOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.chart, "chart", "charts/kubectl-informer", "the chart directory (Chart.yaml, templates/, ...)")
	fs.StringVar(&o.registry, "registry", "", "where to push, host/path: the chart goes to REGISTRY/NAME:VERSION, as helm push does (required)")
	fs.StringVar(&o.version, "chart-version", "", "replaces Chart.yaml's version, as helm package --version does")
	fs.StringVar(&o.appVersion, "app-version", "", "replaces Chart.yaml's appVersion, as helm package --app-version does")
	fs.StringVar(&o.sourceDateEpoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the time of the archive's files and the created annotation, in seconds since 1970: the commit's (required)")
	fs.StringVar(&o.out, "out", "", "also write the chart archive NAME-VERSION.tgz into this directory")
}

func (o *chartOptions) run(ctx context.Context, stdout, _ io.Writer) error {
	created, err := parseEpoch(o.sourceDateEpoch)
	if err != nil {
		return err
	}
	ch, err := ociimage.PackageChart(o.chart, ociimage.ChartOptions{Version: o.version, AppVersion: o.appVersion, MTime: created})
	if err != nil {
		return err
	}
	ref, err := ociimage.Reference(o.registry, ch.Metadata.Name, ch.Tag())
	if err != nil {
		return fmt.Errorf("--registry: %w", err)
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil { //nolint:gosec // G301: the chart is published, readable by all
			return err
		}
		if err := os.WriteFile(filepath.Join(o.out, ch.FileName()), ch.Archive, 0o644); err != nil { //nolint:gosec // G306: the chart is published, readable by all
			return err
		}
	}
	art, err := ch.Artifact(created)
	if err != nil {
		return err
	}
	d, err := ociimage.PushImage(ctx, art, ref, remote.WithAuthFromKeychain(keychain))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "pushed chart %s %s as %s (helm install NAME oci://%s --version %s)\n",
		ch.Metadata.Name, ch.Metadata.Version, d, ref.Context(), ch.Metadata.Version)
	return err
}

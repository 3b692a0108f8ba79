package ociimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"
)

// Helm's media types for a chart stored in an OCI registry.
const (
	// HelmConfigMediaType is the config blob: the chart's metadata
	// (Chart.yaml) as JSON.
	HelmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	// HelmChartLayerMediaType is the one layer: the chart archive (.tgz).
	HelmChartLayerMediaType types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ChartOptions change what PackageChart packs.
type ChartOptions struct {
	// Version, when set, replaces Chart.yaml's version, as helm package
	// --version does.
	Version string
	// AppVersion, when set, replaces Chart.yaml's appVersion, as helm
	// package --app-version does.
	AppVersion string
	// MTime dates every file of the archive.
	MTime time.Time
}

// Chart is a packed chart.
type Chart struct {
	// Metadata is the chart's Chart.yaml, as Helm reads it.
	Metadata *chart.Metadata
	// Archive is the chart archive, as helm package writes it: the files
	// under a directory named after the chart, gzip-compressed.
	Archive []byte
}

// FileName is the archive's name as helm package names it.
func (c *Chart) FileName() string { return c.Metadata.Name + "-" + c.Metadata.Version + ".tgz" }

// Tag is the tag the chart is pushed as: its version, with "+" (not
// allowed in a tag) written "_", as helm push writes it.
func (c *Chart) Tag() string { return strings.ReplaceAll(c.Metadata.Version, "+", "_") }

// PackageChart packs the chart directory dir reproducibly: the files Helm's
// loader takes (honouring .helmignore), sorted, mode 0644, dated o.MTime,
// under a directory named after the chart. Chart.yaml is checked as Helm
// checks it (name, a semantic version, apiVersion); with o.Version or
// o.AppVersion set, it is written anew from its metadata, as helm package
// does then.
func PackageChart(dir string, o ChartOptions) (*Chart, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chart %q: %w", dir, err)
	}
	if o.Version != "" {
		ch.Metadata.Version = o.Version
	}
	if o.AppVersion != "" {
		ch.Metadata.AppVersion = o.AppVersion
	}
	if err := ch.Validate(); err != nil {
		return nil, fmt.Errorf("chart %q: Chart.yaml: %w", dir, err)
	}
	var chartYAML []byte
	if o.Version != "" || o.AppVersion != "" {
		if chartYAML, err = yaml.Marshal(ch.Metadata); err != nil {
			return nil, err
		}
	}
	var entries []Entry
	for _, f := range ch.Raw {
		data := f.Data
		if f.Name == "Chart.yaml" && chartYAML != nil {
			data = chartYAML
		}
		entries = append(entries, File(path.Join(ch.Metadata.Name, f.Name), 0o644, data))
	}
	var b bytes.Buffer
	if err := WriteLayer(&b, entries, o.MTime); err != nil {
		return nil, fmt.Errorf("chart %q: %w", dir, err)
	}
	return &Chart{Metadata: ch.Metadata, Archive: b.Bytes()}, nil
}

// Artifact is the chart as the OCI artifact helm push writes: a manifest
// whose config is the metadata as JSON (HelmConfigMediaType) and whose one
// layer is the archive (HelmChartLayerMediaType), annotated as Helm
// annotates it (title, version, description, url, source, authors, the
// chart's own annotations) with created as the created time.
func (c *Chart) Artifact(created time.Time) (v1.Image, error) {
	config, err := json.Marshal(c.Metadata)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(c.Archive, HelmChartLayerMediaType)
	ld, err := partial.Descriptor(layer)
	if err != nil {
		return nil, err
	}
	cd, err := partial.Descriptor(static.NewLayer(config, HelmConfigMediaType))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        *cd,
		Layers:        []v1.Descriptor{*ld},
		Annotations:   chartAnnotations(c.Metadata, created),
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifact{manifest: raw, config: config, layer: layer})
}

// chartAnnotations are the annotations helm push gives a chart's manifest.
func chartAnnotations(md *chart.Metadata, created time.Time) map[string]string {
	a := map[string]string{}
	// The chart's own annotations first: title and version are Helm's.
	for k, v := range md.Annotations {
		if k != AnnotationTitle && k != AnnotationVersion {
			a[k] = v
		}
	}
	set := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			a[k] = v
		}
	}
	set(AnnotationDescription, md.Description)
	set(AnnotationTitle, md.Name)
	set(AnnotationVersion, md.Version)
	set("org.opencontainers.image.url", md.Home)
	set(AnnotationCreated, created.UTC().Format(time.RFC3339))
	if len(md.Sources) > 0 {
		set(AnnotationSource, md.Sources[0])
	}
	var authors []string
	for _, m := range md.Maintainers {
		s := m.Name
		if m.Email != "" {
			s += " (" + m.Email + ")"
		}
		authors = append(authors, s)
	}
	set("org.opencontainers.image.authors", strings.Join(authors, ", "))
	return a
}

// artifact is an OCI manifest with a config of any media type, which
// go-containerregistry's mutate cannot write.
type artifact struct {
	manifest []byte
	config   []byte
	layer    v1.Layer
}

var _ partial.CompressedImageCore = (*artifact)(nil)

func (a *artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }
func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, err := a.layer.Digest(); err == nil && d == h {
		return a.layer, nil
	}
	if d, _, err := v1.SHA256(bytes.NewReader(a.config)); err == nil && d == h {
		return static.NewLayer(a.config, HelmConfigMediaType), nil
	}
	return nil, fmt.Errorf("the chart artifact has no blob %s", h)
}

// ChartMetadataOf reads the Helm chart metadata of an artifact's config.
func ChartMetadataOf(img v1.Image) (*chart.Metadata, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	if m.Config.MediaType != HelmConfigMediaType {
		return nil, fmt.Errorf("config media type %q, want %q", m.Config.MediaType, HelmConfigMediaType)
	}
	if !slices.ContainsFunc(m.Layers, func(d v1.Descriptor) bool { return d.MediaType == HelmChartLayerMediaType }) {
		return nil, errors.New("no layer holds a chart archive")
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, err
	}
	var md chart.Metadata
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, err
	}
	return &md, nil
}

package ociimage_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmregistry "helm.sh/helm/v4/pkg/registry"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

const chartYAML = `apiVersion: v2
name: demo
description: A chart the tests pack.
type: application
version: 1.2.3+build.4
appVersion: "v1.2.3"
home: https://example.com/demo
sources:
- https://example.com/demo/source
keywords: [metrics, kube-state-metrics]
maintainers:
- name: Ada
  email: ada@example.com
annotations:
  example.com/team: observability
`

// writeChart writes a small chart: templates, values, a .helmignore and a
// file it ignores.
func writeChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	for name, content := range map[string]string{
		"Chart.yaml":                chartYAML,
		"values.yaml":               "replicas: 1\n",
		"values.schema.json":        `{"type": "object"}`,
		"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
		"templates/_helpers.tpl":    "{{- define \"demo.name\" -}}demo{{- end -}}\n",
		".helmignore":               "*.bak\n",
		"notes.bak":                 "not packed\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPackageChartIsReproducible(t *testing.T) {
	dir := writeChart(t)
	a, err := ociimage.PackageChart(dir, ociimage.ChartOptions{MTime: created})
	if err != nil {
		t.Fatal(err)
	}
	// The files' own times differ from one packing to the next.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "values.yaml"), later, later); err != nil {
		t.Fatal(err)
	}
	b, err := ociimage.PackageChart(dir, ociimage.ChartOptions{MTime: created})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Archive, b.Archive) {
		t.Error("two packings of one chart differ")
	}
	c, err := ociimage.PackageChart(dir, ociimage.ChartOptions{MTime: created.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Archive, c.Archive) {
		t.Error("packings dated a second apart are the same bytes")
	}
	if got, want := a.FileName(), "demo-1.2.3+build.4.tgz"; got != want {
		t.Errorf("file name %q, want %q", got, want)
	}

	// Helm reads the archive back: the templates and values, not the
	// ignored file.
	ch, err := loader.LoadArchive(bytes.NewReader(a.Archive))
	if err != nil {
		t.Fatalf("helm cannot load the archive: %v", err)
	}
	var templates []string
	for _, f := range ch.Templates {
		templates = append(templates, f.Name)
	}
	slices.Sort(templates)
	if want := []string{"templates/_helpers.tpl", "templates/deployment.yaml"}; !slices.Equal(templates, want) {
		t.Errorf("templates %q, want %q", templates, want)
	}
	if ch.Values["replicas"] != float64(1) || string(ch.Schema) != `{"type": "object"}` {
		t.Errorf("values %v, schema %q", ch.Values, ch.Schema)
	}
	for _, f := range ch.Raw {
		if strings.HasSuffix(f.Name, ".bak") {
			t.Errorf("%s, which .helmignore names, is packed", f.Name)
		}
	}
}

func TestPackageChartOverridesVersions(t *testing.T) {
	ch, err := ociimage.PackageChart(writeChart(t), ociimage.ChartOptions{Version: "2.0.0", AppVersion: "v2.0.0", MTime: created})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := loader.LoadArchive(bytes.NewReader(ch.Archive))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Metadata.Version != "2.0.0" || loaded.Metadata.AppVersion != "v2.0.0" || loaded.Metadata.Description != "A chart the tests pack." {
		t.Errorf("packed Chart.yaml: version %q appVersion %q description %q", loaded.Metadata.Version, loaded.Metadata.AppVersion, loaded.Metadata.Description)
	}
	if _, err := ociimage.PackageChart(writeChart(t), ociimage.ChartOptions{Version: "not-semver"}); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("a version that is not semantic: %v, want an error about the version", err)
	}
	if _, err := ociimage.PackageChart(t.TempDir(), ociimage.ChartOptions{}); err == nil || !strings.Contains(err.Error(), "Chart.yaml") {
		t.Errorf("a directory without Chart.yaml: %v, want an error naming Chart.yaml", err)
	}
}

func TestChartArtifactIsWhatHelmPulls(t *testing.T) {
	dir := writeChart(t)
	ch, err := ociimage.PackageChart(dir, ociimage.ChartOptions{MTime: created})
	if err != nil {
		t.Fatal(err)
	}
	art, err := ch.Artifact(created)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := ociimage.Reference(host+"/org/charts", ch.Metadata.Name, ch.Tag())
	if err != nil {
		t.Fatal(err)
	}
	if ref.TagStr() != "1.2.3_build.4" {
		t.Errorf("tag %q, want the version with + written _", ref.TagStr())
	}
	pushed, err := ociimage.PushImage(t.Context(), art, ref)
	if err != nil {
		t.Fatal(err)
	}

	// The media types, as Helm's registry package names them.
	img, err := remote.Image(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if got := digest(t, img).String(); got != pushed.DigestStr() {
		t.Errorf("pulled %s, pushed %s", got, pushed.DigestStr())
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Config.MediaType) != helmregistry.ConfigMediaType {
		t.Errorf("config media type %q, want %q", m.Config.MediaType, helmregistry.ConfigMediaType)
	}
	if len(m.Layers) != 1 || string(m.Layers[0].MediaType) != helmregistry.ChartLayerMediaType {
		t.Errorf("layers %+v, want one of media type %q", m.Layers, helmregistry.ChartLayerMediaType)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.title":       "demo",
		"org.opencontainers.image.version":     "1.2.3+build.4",
		"org.opencontainers.image.description": "A chart the tests pack.",
		"org.opencontainers.image.created":     "2026-11-02T10:30:00Z",
		"org.opencontainers.image.source":      "https://example.com/demo/source",
		"org.opencontainers.image.authors":     "Ada (ada@example.com)",
		"example.com/team":                     "observability",
	} {
		if m.Annotations[k] != want {
			t.Errorf("manifest annotation %s = %q, want %q", k, m.Annotations[k], want)
		}
	}

	// The config is Chart.yaml's metadata as JSON.
	raw, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(chartYAML), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config:\n%s\nwant Chart.yaml's metadata:\n%v", raw, want)
	}

	// Helm's own client pulls it as a chart.
	hc, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(io.Discard),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := hc.Pull(ref.String())
	if err != nil {
		t.Fatalf("helm pull %s: %v", ref, err)
	}
	if !bytes.Equal(res.Chart.Data, ch.Archive) {
		t.Error("helm pulled another archive than the one packed")
	}
	if res.Chart.Meta.Name != "demo" || res.Chart.Meta.Version != "1.2.3+build.4" || res.Chart.Meta.AppVersion != "v1.2.3" {
		t.Errorf("helm pulled chart %s %s (app %s)", res.Chart.Meta.Name, res.Chart.Meta.Version, res.Chart.Meta.AppVersion)
	}
}

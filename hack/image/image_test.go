package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

func TestSPDXOfTheProjectsLicense(t *testing.T) {
	text, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	got, err := spdxOf(text)
	if err != nil {
		t.Fatal(err)
	}
	// The file's own title line, as SPDX names that license.
	if first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(string(text)), "\n", 2)[0]); first == "Apache License" && got != "Apache-2.0" {
		t.Errorf("LICENSE titled %q is %q, want Apache-2.0", first, got)
	}
	mit := "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy"
	if got, err := spdxOf([]byte(mit)); err != nil || got != "MIT" {
		t.Errorf("the MIT license: %q, %v", got, err)
	}
	if _, err := spdxOf([]byte("All rights reserved.")); err == nil || !strings.Contains(err.Error(), "--licenses") {
		t.Errorf("an unknown license: %v, want an error naming --licenses", err)
	}
}

func TestParseEpoch(t *testing.T) {
	got, err := parseEpoch("1700000000")
	if err != nil || !got.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("1700000000: %v, %v", got, err)
	}
	for _, bad := range []string{"", "yesterday", "-5"} {
		if _, err := parseEpoch(bad); err == nil || !strings.Contains(err.Error(), "--source-date-epoch") {
			t.Errorf("%q: %v, want an error naming --source-date-epoch", bad, err)
		}
	}
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "no command"},
		{[]string{"bake"}, `unknown command "bake"`},
		{[]string{"build", "--version", "v1 2"}, `--version "v1 2"`},
		{[]string{"build", "--version", "v1", "--source-date-epoch", "1", "--platforms", "linux/mips"}, `platform "linux/mips"`},
		{[]string{"push", "--registry", "ghcr.io/x"}, "--version is required"},
		{[]string{"push", "--version", "v1", "--registry", ""}, "REGISTRY="},
		{[]string{"push", "--version", "v1", "--registry", "r.example/x", "--layout", "/nonexistent"}, "run make image"},
		{[]string{"chart-push", "--registry", "r.example/x", "--source-date-epoch", "1", "--chart", "/nonexistent"}, `chart "/nonexistent"`},
		{[]string{"build", "extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.err)
		}
	}
}

// TestPushCommands runs push and chart-push against an in-process
// registry, with the default keychain reading an empty docker config.
func TestPushCommands(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("stand-in"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "zoneinfo"), 0o750); err != nil {
		t.Fatal(err)
	}
	idx, _, err := ociimage.BuildIndex(ociimage.Build{
		Config:   ociimage.Config{Metadata: ociimage.Metadata{Version: "v0.0.1", Created: time.Unix(1700000000, 0)}},
		Base:     ociimage.Base{CACertificates: bin, Zoneinfo: filepath.Join(dir, "zoneinfo"), User: ociimage.Nobody},
		Binaries: []ociimage.Binary{{Platform: ociimage.DefaultPlatforms[0], Path: bin}},
	})
	if err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(dir, "image")
	if err := ociimage.WriteLayout(layout, idx, "v0.0.1"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"push", "--layout", layout, "--version", "v0.0.1", "--registry", host + "/org"}, &out, &out); err != nil {
		t.Fatalf("push: %v\n%s", err, &out)
	}
	ref, err := name.ParseReference(host + "/org/kubectl-informer:v0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pulled.Digest(); err != nil || got != want {
		t.Errorf("pulled %s (%v), pushed %s", got, err, want)
	}
	if !strings.Contains(out.String(), want.String()) {
		t.Errorf("push printed no digest %s:\n%s", want, &out)
	}

	chart := filepath.Join(dir, "chart")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: demo\nversion: 0.1.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	archives := filepath.Join(dir, "charts")
	err = run(t.Context(), []string{"chart-push", "--chart", chart, "--registry", host + "/org/charts", "--source-date-epoch", "1700000000",
		"--chart-version", "1.0.0", "--app-version", "v1.0.0", "--out", archives}, &out, &out)
	if err != nil {
		t.Fatalf("chart-push: %v\n%s", err, &out)
	}
	cref, err := name.ParseReference(host + "/org/charts/demo:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(cref)
	if err != nil {
		t.Fatalf("the chart is not at %s: %v", cref, err)
	}
	md, err := ociimage.ChartMetadataOf(img)
	if err != nil {
		t.Fatal(err)
	}
	if md.Name != "demo" || md.Version != "1.0.0" || md.AppVersion != "v1.0.0" {
		t.Errorf("pushed chart %s %s app %s, want demo 1.0.0 app v1.0.0", md.Name, md.Version, md.AppVersion)
	}
	if _, err := os.Stat(filepath.Join(archives, "demo-1.0.0.tgz")); err != nil {
		t.Errorf("the archive was not written: %v", err)
	}
}

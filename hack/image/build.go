package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

// The image's descriptive metadata.
const (
	title       = "kubectl-informer"
	description = "Kubernetes objects indexed by CEL: queries, a query server and a Prometheus exporter that serves kube-state-metrics' metrics; runs as kube-state-metrics under /kube-state-metrics"
	source      = "https://github.com/kubectl-informer/kubectl-informer"
)

type buildOptions struct {
	out             string
	platforms       string
	version         string
	commit          string
	revision        string
	sourceDateEpoch string
	ldflags         string
	root            string
	caCertificates  string
	zoneinfo        string
	licenses        string
}

func (o *buildOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "_output/image", "the OCI image layout to write (replaced if it holds one)")
	fs.StringVar(&o.platforms, "platforms", "", "os/arch list, comma-separated (default: linux/amd64, arm64, arm (v7), ppc64le and s390x)")
	fs.StringVar(&o.version, "version", "", "the version: the layout's tag and the version annotation (required)")
	fs.StringVar(&o.commit, "commit", "", "the commit as the binary's -ldflags stamp it (informational)")
	fs.StringVar(&o.revision, "revision", "", "the full commit id for the revision annotation")
	fs.StringVar(&o.sourceDateEpoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the build's time in seconds since 1970, the commit's: git log -1 --format=%ct (required)")
	fs.StringVar(&o.ldflags, "ldflags", "", "go build -ldflags, as make build passes them (-buildid= is added)")
	fs.StringVar(&o.root, "root", ".", "the module's root directory")
	fs.StringVar(&o.caCertificates, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to copy (Debian's ca-certificates package)")
	fs.StringVar(&o.zoneinfo, "zoneinfo", "/usr/share/zoneinfo", "the time zone database to copy (Debian's tzdata package)")
	fs.StringVar(&o.licenses, "licenses", "", "SPDX license expression (default: recognised from ROOT/LICENSE)")
}

// tagPattern is what a registry takes as a tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func (o *buildOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if !tagPattern.MatchString(o.version) {
		return fmt.Errorf("--version %q: want a tag (letters, digits, _ . -, at most 128), e.g. make image VERSION=v1.2.3", o.version)
	}
	created, err := parseEpoch(o.sourceDateEpoch)
	if err != nil {
		return err
	}
	platforms, err := ociimage.ParsePlatforms(o.platforms)
	if err != nil {
		return fmt.Errorf("--platforms: %w", err)
	}
	licenses := o.licenses
	if licenses == "" {
		text, err := os.ReadFile(filepath.Join(o.root, "LICENSE"))
		if err != nil {
			return fmt.Errorf("%w (name the license with --licenses)", err)
		}
		if licenses, err = spdxOf(text); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "kubectl-informer-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	b := ociimage.Build{
		Config: ociimage.Config{Metadata: ociimage.Metadata{
			Title:       title,
			Description: description,
			Source:      source,
			Version:     o.version,
			Revision:    o.revision,
			Licenses:    licenses,
			Created:     created,
		}},
		Base: ociimage.Base{CACertificates: o.caCertificates, Zoneinfo: o.zoneinfo, User: ociimage.Nobody},
		BaseCreatedBy: fmt.Sprintf("/etc/passwd and /etc/group (%s %s), CA certificates (%s), time zone data (%s), /tmp",
			ociimage.Nobody.Name, ociimage.Nobody.Spec(), provenance("ca-certificates", o.caCertificates), provenance("tzdata", o.zoneinfo)),
	}
	ldflags := strings.TrimSpace(o.ldflags + " -buildid=")
	for _, p := range platforms {
		_, _ = fmt.Fprintf(stderr, "building %s\n", strings.Join(append([]string{p.String()}, p.GoEnv()[2:]...), " "))
		bin := filepath.Join(work, strings.ReplaceAll(p.String(), "/", "_"), "kubectl-informer")
		if err := goBuild(ctx, o.root, bin, p, ldflags, stderr); err != nil {
			return err
		}
		b.Binaries = append(b.Binaries, ociimage.Binary{
			Platform: p,
			Path:     bin,
			CreatedBy: fmt.Sprintf("CGO_ENABLED=0 %s go build -trimpath -buildvcs=false -ldflags '%s' ./cmd/kubectl-informer (commit %s); ln -s kubectl-informer /kube-state-metrics",
				strings.Join(p.GoEnv(), " "), ldflags, o.commit),
		})
	}
	idx, skipped, err := ociimage.BuildIndex(b)
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		_, _ = fmt.Fprintf(stderr, "left out of the time zone data (links outside %s, or not files): %s\n", o.zoneinfo, strings.Join(skipped, ", "))
	}
	if err := ociimage.WriteLayout(o.out, idx, o.version); err != nil {
		return err
	}
	return report(stdout, o.out, o.version, idx)
}

// parseEpoch reads SOURCE_DATE_EPOCH's format: seconds since 1970.
func parseEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("--source-date-epoch is required: the commit's time, git log -1 --format=%ct (make image passes it)")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("--source-date-epoch %q: want seconds since 1970, as git log -1 --format=%%ct prints them", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// goBuild builds the plugin for p into out as make build does: no cgo, no
// local paths, the version stamped by ldflags.
func goBuild(ctx context.Context, root, out string, p ociimage.Platform, ldflags string, stderr io.Writer) error {
	// -buildvcs=false: the version and commit are the ones ldflags stamp,
	// which the image's annotations name, whether or not the checkout is
	// one the toolchain reads VCS information from.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/kubectl-informer") //nolint:gosec // G204: go build of this image, with its version flags
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), p.GoEnv()...)
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", p, err)
	}
	return nil
}

// provenance names where the base's files come from: the Debian package
// and its version when dpkg knows it, else the path.
func provenance(pkg, path string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output() //nolint:gosec // G204: dpkg-query of a package this tool names
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return path
	}
	return "Debian " + pkg + " " + string(bytes.TrimSpace(out))
}

// licenseMarkers recognise a LICENSE file's license by phrases of its text.
var licenseMarkers = []struct {
	spdx    string
	phrases []string
}{
	{"Apache-2.0", []string{"Apache License", "Version 2.0"}},
	{"MIT", []string{"Permission is hereby granted, free of charge"}},
	{"MPL-2.0", []string{"Mozilla Public License Version 2.0"}},
	{"BSD-3-Clause", []string{"Redistribution and use in source and binary forms", "Neither the name"}},
	{"BSD-2-Clause", []string{"Redistribution and use in source and binary forms"}},
}

// spdxOf is the SPDX identifier of the license whose text is text.
func spdxOf(text []byte) (string, error) {
	s := strings.Join(strings.Fields(string(text)), " ")
	for _, l := range licenseMarkers {
		all := true
		for _, p := range l.phrases {
			all = all && strings.Contains(s, p)
		}
		if all {
			return l.spdx, nil
		}
	}
	return "", errors.New("LICENSE: not a license this tool recognises (Apache-2.0, MIT, MPL-2.0, BSD): name it with --licenses")
}

// report prints each platform's manifest digest and compressed size (its
// manifest, config and layers: what a pull of that platform fetches), the
// index's digest and the layout's total (each blob once).
func report(w io.Writer, dir, version string, idx v1.ImageIndex) error {
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	blobs := map[v1.Hash]int64{d: int64(len(raw))}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "PLATFORM\tMANIFEST\tCOMPRESSED")
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		im, err := img.Manifest()
		if err != nil {
			return err
		}
		size := desc.Size + im.Config.Size
		blobs[desc.Digest] = desc.Size
		blobs[im.Config.Digest] = im.Config.Size
		for _, l := range im.Layers {
			size += l.Size
			blobs[l.Digest] = l.Size
		}
		p := ociimage.Platform{OS: desc.Platform.OS, Arch: desc.Platform.Architecture, Variant: desc.Platform.Variant}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", p, desc.Digest, mib(size))
	}
	var total int64
	for _, s := range blobs {
		total += s
	}
	_, _ = fmt.Fprintf(tw, "index\t%s\t%s\n", d, mib(total))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "wrote %s (OCI image layout, tag %s)\n", dir, version)
	return err
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

package ociimage_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-informer/kubectl-informer/internal/ociimage"
)

var created = time.Date(2026, 11, 2, 10, 30, 0, 0, time.UTC)

// standIn is the content of the stand-in binary the tests pack.
const standIn = "#!/bin/false\nstand-in for kubectl-informer\n"

// testBuild describes a small image of platforms: a stand-in binary, a CA
// bundle and a time zone tree with a link inside it and one outside it.
func testBuild(t *testing.T, platforms ...ociimage.Platform) ociimage.Build {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin := write("bin/kubectl-informer", standIn, 0o700)
	ca := write("ca.crt", "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n", 0o600)
	write("zoneinfo/Etc/UTC", "TZif utc", 0o600)
	write("zoneinfo/Europe/Paris", "TZif paris", 0o600)
	for link, target := range map[string]string{"UTC": "Etc/UTC", "localtime": "/etc/localtime", "Europe/Lutetia": "Paris"} {
		if err := os.Symlink(target, filepath.Join(dir, "zoneinfo", link)); err != nil {
			t.Fatal(err)
		}
	}
	b := ociimage.Build{
		Config: ociimage.Config{Metadata: ociimage.Metadata{
			Title:       "kubectl-informer",
			Description: "test image",
			Source:      "https://example.com/kubectl-informer",
			Version:     "v1.2.3",
			Revision:    "0123456789abcdef0123456789abcdef01234567",
			Licenses:    "Apache-2.0",
			Created:     created,
		}},
		Base:          ociimage.Base{CACertificates: ca, Zoneinfo: filepath.Join(dir, "zoneinfo"), User: ociimage.Nobody},
		BaseCreatedBy: "base",
	}
	for _, p := range platforms {
		b.Binaries = append(b.Binaries, ociimage.Binary{Platform: p, Path: bin, CreatedBy: "binary for " + p.String()})
	}
	return b
}

var amd64 = ociimage.Platform{OS: "linux", Arch: "amd64"}

func writeLayout(t *testing.T, b ociimage.Build) (string, v1.ImageIndex) {
	t.Helper()
	idx, _, err := ociimage.BuildIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	if err := ociimage.WriteLayout(dir, idx, b.Config.Metadata.Version); err != nil {
		t.Fatal(err)
	}
	read, err := ociimage.ReadLayout(dir, b.Config.Metadata.Version)
	if err != nil {
		t.Fatal(err)
	}
	return dir, read
}

func digest(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// blobs lists the layout's blob files with their contents' digests.
func blobs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestBuildTwiceGivesTheSameDigest(t *testing.T) {
	b := testBuild(t, amd64)
	dir1, idx1 := writeLayout(t, b)
	dir2, idx2 := writeLayout(t, b)
	if d1, d2 := digest(t, idx1), digest(t, idx2); d1 != d2 {
		t.Errorf("two builds of the same inputs: index digests %s and %s", d1, d2)
	}
	if b1, b2 := blobs(t, dir1), blobs(t, dir2); !slices.Equal(b1, b2) {
		t.Errorf("two builds of the same inputs wrote different blobs:\n%q\n%q", b1, b2)
	}
	j1, err := os.ReadFile(filepath.Join(dir1, "index.json")) //nolint:gosec // G304: the test's own layout
	if err != nil {
		t.Fatal(err)
	}
	j2, err := os.ReadFile(filepath.Join(dir2, "index.json")) //nolint:gosec // G304: the test's own layout
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(j1, j2) {
		t.Errorf("index.json differs:\n%s\n%s", j1, j2)
	}

	// The digest depends on the build's time, so the equality above is
	// not that of a constant.
	later := b
	later.Config.Metadata.Created = created.Add(time.Second)
	_, idx3 := writeLayout(t, later)
	if digest(t, idx3) == digest(t, idx1) {
		t.Errorf("a build dated a second later has the same digest %s", digest(t, idx1))
	}
}

// file is a layer entry as read back.
type file struct {
	hdr  *tar.Header
	data string
}

// filesOf reads every layer of img, in order, into one file system view.
func filesOf(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]file{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		var names []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			files[strings.TrimSuffix(h.Name, "/")] = file{hdr: h, data: string(data)}
		}
		_ = rc.Close()
		if !slices.IsSorted(names) {
			t.Errorf("a layer's entries are not sorted by name: %q", names)
		}
	}
	return files
}

func TestLayoutHoldsWhatTheImagePromises(t *testing.T) {
	arm := ociimage.Platform{OS: "linux", Arch: "arm", Variant: "v7"}
	b := testBuild(t, amd64, arm)
	_, idx := writeLayout(t, b)
	meta := b.Config.Metadata

	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	wantAnnotations := map[string]string{
		"org.opencontainers.image.title":       meta.Title,
		"org.opencontainers.image.description": meta.Description,
		"org.opencontainers.image.source":      meta.Source,
		"org.opencontainers.image.version":     meta.Version,
		"org.opencontainers.image.revision":    meta.Revision,
		"org.opencontainers.image.licenses":    meta.Licenses,
		"org.opencontainers.image.created":     "2026-11-02T10:30:00Z",
	}
	checkMap(t, "index annotations", im.Annotations, wantAnnotations)
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, fmt.Sprintf("%s/%s/%s", d.Platform.OS, d.Platform.Architecture, d.Platform.Variant))
	}
	if want := []string{"linux/amd64/", "linux/arm/v7"}; !slices.Equal(platforms, want) {
		t.Errorf("index platforms %q, want %q", platforms, want)
	}

	var baseLayers []v1.Hash
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		checkMap(t, d.Platform.String()+" manifest annotations", m.Annotations, wantAnnotations)
		baseLayers = append(baseLayers, m.Layers[0].Digest)

		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != d.Platform.OS || cf.Architecture != d.Platform.Architecture || cf.Variant != d.Platform.Variant {
			t.Errorf("config platform %s/%s/%s, index says %s", cf.OS, cf.Architecture, cf.Variant, d.Platform)
		}
		if !cf.Created.Equal(created) {
			t.Errorf("config created %s, want %s", cf.Created, created)
		}
		checkMap(t, "config labels", cf.Config.Labels, wantAnnotations)
		if want := []string{"/kube-state-metrics", "--port=8080", "--telemetry-port=8081"}; !slices.Equal(cf.Config.Entrypoint, want) {
			t.Errorf("entrypoint %q, want %q", cf.Config.Entrypoint, want)
		}
		if len(cf.Config.Cmd) != 0 {
			t.Errorf("cmd %q, want none: args are the entrypoint's flags", cf.Config.Cmd)
		}
		var ports []string
		for p := range cf.Config.ExposedPorts {
			ports = append(ports, p)
		}
		slices.Sort(ports)
		if want := []string{"8080/tcp", "8081/tcp"}; !slices.Equal(ports, want) {
			t.Errorf("exposed ports %q, want %q", ports, want)
		}

		files := filesOf(t, img)
		checkUser(t, cf.Config.User, files)
		checkFiles(t, files)
	}
	if baseLayers[0] != baseLayers[1] {
		t.Errorf("the platforms' base layers differ (%s, %s): they are the same files", baseLayers[0], baseLayers[1])
	}
}

func checkMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
}

// checkUser checks that the config's user is numeric, not root, and named
// in /etc/passwd and /etc/group.
func checkUser(t *testing.T, user string, files map[string]file) {
	t.Helper()
	uid, gid, ok := strings.Cut(user, ":")
	if !ok || strings.Trim(uid+gid, "0123456789") != "" {
		t.Fatalf("user %q, want numeric uid:gid so that runAsNonRoot can be checked", user)
	}
	if uid == "0" {
		t.Errorf("user %q is root", user)
	}
	if uid != "65534" || gid != "65534" {
		t.Errorf("user %q, want 65534:65534, the user kube-state-metrics' chart runs as", user)
	}
	found := false
	for _, line := range strings.Split(files["etc/passwd"].data, "\n") {
		f := strings.Split(line, ":")
		found = found || (len(f) == 7 && f[2] == uid && f[3] == gid && f[0] == "nobody")
	}
	if !found {
		t.Errorf("/etc/passwd has no user %s with group %s:\n%s", uid, gid, files["etc/passwd"].data)
	}
	found = false
	for _, line := range strings.Split(files["etc/group"].data, "\n") {
		f := strings.Split(line, ":")
		found = found || (len(f) == 4 && f[2] == gid)
	}
	if !found {
		t.Errorf("/etc/group has no group %s:\n%s", gid, files["etc/group"].data)
	}
}

func checkFiles(t *testing.T, files map[string]file) {
	t.Helper()
	type want struct {
		typ  byte
		mode int64
		link string
		data string
	}
	for name, w := range map[string]want{
		"kubectl-informer":                  {typ: tar.TypeReg, mode: 0o755, data: standIn},
		"kube-state-metrics":                {typ: tar.TypeSymlink, link: "kubectl-informer"},
		"etc/passwd":                        {typ: tar.TypeReg, mode: 0o644},
		"etc/group":                         {typ: tar.TypeReg, mode: 0o644},
		"etc/ssl/certs/ca-certificates.crt": {typ: tar.TypeReg, mode: 0o644, data: "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"},
		"tmp":                               {typ: tar.TypeDir, mode: 0o1777},
		"usr/share/zoneinfo":                {typ: tar.TypeDir, mode: 0o755},
		"usr/share/zoneinfo/Etc/UTC":        {typ: tar.TypeReg, mode: 0o644, data: "TZif utc"},
		"usr/share/zoneinfo/UTC":            {typ: tar.TypeSymlink, link: "Etc/UTC"},
		"usr/share/zoneinfo/Europe/Lutetia": {typ: tar.TypeSymlink, link: "Paris"},
	} {
		f, ok := files[name]
		if !ok {
			t.Errorf("/%s is missing", name)
			continue
		}
		h := f.hdr
		if h.Typeflag != w.typ || (w.typ != tar.TypeSymlink && h.Mode != w.mode) || h.Linkname != w.link {
			t.Errorf("/%s: type %q mode %o link %q, want type %q mode %o link %q", name, h.Typeflag, h.Mode, h.Linkname, w.typ, w.mode, w.link)
		}
		if w.data != "" && f.data != w.data {
			t.Errorf("/%s holds %q, want %q", name, f.data, w.data)
		}
	}
	if _, ok := files["usr/share/zoneinfo/localtime"]; ok {
		t.Errorf("/usr/share/zoneinfo/localtime, a link outside the image's files, is in the image")
	}
	for name, f := range files {
		if f.hdr.Uid != 0 || f.hdr.Gid != 0 || f.hdr.Uname != "" || f.hdr.Gname != "" {
			t.Errorf("/%s is owned by %d:%d (%q:%q), want root with no names", name, f.hdr.Uid, f.hdr.Gid, f.hdr.Uname, f.hdr.Gname)
		}
		if !f.hdr.ModTime.Equal(created) {
			t.Errorf("/%s is dated %s, want the build's time %s", name, f.hdr.ModTime, created)
		}
	}
}

func TestPushedIndexPullsBackWithTheSameDigests(t *testing.T) {
	arm64 := ociimage.Platform{OS: "linux", Arch: "arm64", Variant: "v8"}
	_, idx := writeLayout(t, testBuild(t, amd64, arm64))
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	ref, err := ociimage.Reference(host+"/org", "kubectl-informer", "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := ociimage.PushIndex(t.Context(), idx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if pushed.DigestStr() != digest(t, idx).String() {
		t.Errorf("PushIndex says %s, the index is %s", pushed, digest(t, idx))
	}
	pulled, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digest(t, pulled), digest(t, idx); got != want {
		t.Errorf("pulled %s: index digest %s, pushed %s", ref, got, want)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		local, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		// Pulled by platform, as a node of that platform pulls the tag.
		remoteImg, err := remote.Image(ref, remote.WithPlatform(*d.Platform), remote.WithContext(t.Context()))
		if err != nil {
			t.Fatalf("pulling %s for %s: %v", ref, d.Platform, err)
		}
		if got := digest(t, remoteImg); got != d.Digest {
			t.Errorf("%s: pulled manifest %s, pushed %s", d.Platform, got, d.Digest)
		}
		ll, err := local.Layers()
		if err != nil {
			t.Fatal(err)
		}
		rl, err := remoteImg.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(ll) != len(rl) {
			t.Fatalf("%s: pulled %d layers, pushed %d", d.Platform, len(rl), len(ll))
		}
		for i := range ll {
			// The registry's blob, read back whole, has the digest.
			rc, err := rl[i].Compressed()
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := v1.SHA256(rc)
			_ = rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if want := digest(t, ll[i]); got != want {
				t.Errorf("%s layer %d: pulled %s, pushed %s", d.Platform, i, got, want)
			}
		}
	}
}

func TestReferenceRejectsWhatIsNotARegistry(t *testing.T) {
	for _, r := range []string{"", "https://ghcr.io/org", "ghcr.io/Org With Spaces"} {
		if _, err := ociimage.Reference(r, "kubectl-informer", "v1"); err == nil {
			t.Errorf("registry %q: no error", r)
		}
	}
	ref, err := ociimage.Reference("ghcr.io/kubectl-informer/", "kubectl-informer", "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ref.String(), "ghcr.io/kubectl-informer/kubectl-informer:v1.2.3"; got != want {
		t.Errorf("reference %q, want %q", got, want)
	}
	var _ name.Reference = ref
}

func TestWriteLayoutReplacesOnlyALayout(t *testing.T) {
	_, idx := writeLayout(t, testBuild(t, amd64))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := ociimage.WriteLayout(dir, idx, "v1.2.3")
	if err == nil || !strings.Contains(err.Error(), "no OCI image layout") {
		t.Fatalf("writing over a directory of other files: %v, want an error saying it holds no layout", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("the directory's file is gone: %v", err)
	}
	// A layout is replaced: the second write leaves one index.
	out := filepath.Join(t.TempDir(), "image")
	for range 2 {
		if err := ociimage.WriteLayout(out, idx, "v1.2.3"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ociimage.ReadLayout(out, "v1.2.3"); err != nil {
		t.Errorf("after two writes: %v", err)
	}
	if _, err := ociimage.ReadLayout(out, "v9"); err == nil || !strings.Contains(err.Error(), `"v9"`) {
		t.Errorf("reading a tag the layout lacks: %v, want an error naming it", err)
	}
}

func TestParsePlatforms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: []string{"linux/amd64", "linux/arm64/v8", "linux/arm/v7", "linux/ppc64le", "linux/s390x"}},
		{in: "linux/arm", want: []string{"linux/arm/v7"}},
		{in: "linux/s390x, linux/amd64,linux/arm64/v8", want: []string{"linux/amd64", "linux/arm64/v8", "linux/s390x"}},
		{in: "linux/amd64,linux/amd64", want: []string{"linux/amd64"}},
		{in: "windows/amd64", err: `platform "windows/amd64": want os/arch, one of linux/amd64`},
		{in: "linux/arm/v6", err: `platform "linux/arm/v6"`},
	} {
		got, err := ociimage.ParsePlatforms(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		var names []string
		for _, p := range got {
			names = append(names, p.String())
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, names, tc.want)
		}
	}
	arm, err := ociimage.ParsePlatforms("linux/arm")
	if err != nil {
		t.Fatal(err)
	}
	if env := arm[0].GoEnv(); !slices.Contains(env, "GOARM=7") || !slices.Contains(env, "GOARCH=arm") {
		t.Errorf("linux/arm/v7 builds with %q, want GOARCH=arm GOARM=7", env)
	}
}

func TestBuildRefusesRootAndMissingFiles(t *testing.T) {
	b := testBuild(t, amd64)
	root := b
	root.Base.User = ociimage.User{Name: "root", Group: "root"}
	if _, _, err := ociimage.BuildIndex(root); err == nil || !strings.Contains(err.Error(), "non-root") {
		t.Errorf("a root user: %v, want an error asking for a non-root user", err)
	}
	noCA := b
	noCA.Base.CACertificates = filepath.Join(t.TempDir(), "missing.crt")
	if _, _, err := ociimage.BuildIndex(noCA); err == nil || !strings.Contains(err.Error(), "ca-certificates") {
		t.Errorf("a missing CA bundle: %v, want an error naming Debian's ca-certificates", err)
	}
	noTZ := b
	noTZ.Base.Zoneinfo = filepath.Join(t.TempDir(), "missing")
	if _, _, err := ociimage.BuildIndex(noTZ); err == nil || !strings.Contains(err.Error(), "tzdata") {
		t.Errorf("missing time zone data: %v, want an error naming Debian's tzdata", err)
	}
	none := b
	none.Binaries = nil
	if _, _, err := ociimage.BuildIndex(none); err == nil || !strings.Contains(err.Error(), "no platform") {
		t.Errorf("no platform: %v, want an error saying so", err)
	}
}

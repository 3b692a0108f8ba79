package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/kubectl-informer/kubectl-informer/hack/dist/krew"
)

// The module's root, where plugin.yaml and .krew.yaml live.
const root = "../.."

// pluginName is the plugin's name in krew-index: kubectl-informer is "kubectl informer".
const pluginName = "informer"

func loadRoot(t *testing.T) *krew.Plugin {
	t.Helper()
	p, err := krew.Load(filepath.Join(root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeBinary writes a small stand-in for the plugin's binary.
func fakeBinary(t *testing.T, dir string, p Platform) string {
	t.Helper()
	path := filepath.Join(dir, p.OS+"_"+p.Arch, BinaryName(p.OS))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("binary for "+p.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each binary written gets another mtime, which the archive must not keep.
	fakes++
	mtime := time.Now().Add(time.Duration(fakes) * time.Hour)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakes counts the fake binaries written.
var fakes int

// packAll packs an archive of version for every default platform from
// fake binaries into dir.
func packAll(t *testing.T, dir, version string) []Built {
	t.Helper()
	bins := t.TempDir()
	var built []Built
	for _, p := range DefaultPlatforms {
		a, err := PackArchive(dir, version, p, Entries(p.OS, fakeBinary(t, bins, p), root), defaultMTime)
		if err != nil {
			t.Fatal(err)
		}
		built = append(built, a)
	}
	return built
}

func readArchives(t *testing.T, dir string, built []Built) map[string]*krew.Archive {
	t.Helper()
	archives := map[string]*krew.Archive{}
	for _, a := range built {
		ar, err := krew.ReadArchive(filepath.Join(dir, a.Name))
		if err != nil {
			t.Fatal(err)
		}
		archives[a.Name] = ar
	}
	return archives
}

func TestParsePlatforms(t *testing.T) {
	all, err := ParsePlatforms("")
	if err != nil || !reflect.DeepEqual(all, DefaultPlatforms) || len(all) != 6 {
		t.Fatalf("default: %v, %v; want the six platforms", all, err)
	}
	got, err := ParsePlatforms("windows/arm64, linux/amd64,linux/amd64")
	want := []Platform{{"linux", "amd64"}, {"windows", "arm64"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"linux", "linux/riscv64", "plan9/amd64"} {
		if _, err := ParsePlatforms(bad); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

// TestArchiveLayout checks what an archive holds, entry by entry.
func TestArchiveLayout(t *testing.T) {
	dir := t.TempDir()
	built := packAll(t, dir, "v1.2.3")
	for _, a := range built {
		f, err := os.Open(filepath.Join(dir, a.Name)) //nolint:gosec // G304: an archive in the test's own directory
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		if zr.Name != "" || !zr.ModTime.IsZero() {
			t.Errorf("%s: gzip header has name %q and time %v, want neither", a.Name, zr.Name, zr.ModTime)
		}
		tr := tar.NewReader(zr)
		var names []string
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			wantMode := int64(0o644)
			if h.Name == BinaryName(a.Platform.OS) || h.Name == HelperName(a.Platform.OS) {
				wantMode = 0o755
			}
			if h.Mode != wantMode || !h.ModTime.Equal(defaultMTime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Typeflag != tar.TypeReg {
				t.Errorf("%s: %s: mode %o, mtime %v, owner %d/%d %q, type %c; want mode %o, mtime %v, owner 0",
					a.Name, h.Name, h.Mode, h.ModTime, h.Uid, h.Gid, h.Uname, h.Typeflag, wantMode, defaultMTime)
			}
			if h.Name == "LICENSE" {
				b, _ := io.ReadAll(tr)
				want, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
				if !bytes.Equal(b, want) {
					t.Errorf("%s: LICENSE differs from the repository's", a.Name)
				}
			}
		}
		_ = f.Close()
		want := []string{"LICENSE", "README.md", "kubectl-informer", "kubectl_complete-informer"}
		if a.Platform.OS == "windows" {
			want = []string{"LICENSE", "README.md", "kubectl-informer.exe", "kubectl_complete-informer.cmd"}
		}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("%s holds %v, want %v (sorted)", a.Name, names, want)
		}
		if wantName := fmt.Sprintf("kubectl-informer_v1.2.3_%s_%s.tar.gz", a.Platform.OS, a.Platform.Arch); a.Name != wantName {
			t.Errorf("archive %q, want %q", a.Name, wantName)
		}
	}
}

// TestArchivesAreReproducible packs the same contents twice, from files in
// other directories with other mtimes, and expects the same bytes.
func TestArchivesAreReproducible(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	a := packAll(t, one, "v1.2.3")
	b := packAll(t, two, "v1.2.3")
	for i := range a {
		x, _ := os.ReadFile(filepath.Join(one, a[i].Name)) //nolint:gosec // G304: an archive in the test's own directory
		y, _ := os.ReadFile(filepath.Join(two, b[i].Name)) //nolint:gosec // G304: an archive in the test's own directory
		if !bytes.Equal(x, y) || a[i].SHA256 != b[i].SHA256 {
			t.Errorf("%s differs between two packs", a[i].Name)
		}
		sum := sha256.Sum256(x)
		if a[i].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: recorded sha256 %s is not the file's", a[i].Name, a[i].SHA256)
		}
	}
}

func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	built := packAll(t, dir, "v1.2.3")
	sums := string(Checksums(built))
	lines := strings.Split(strings.TrimSuffix(sums, "\n"), "\n")
	if len(lines) != len(built) {
		t.Fatalf("%d lines for %d archives:\n%s", len(lines), len(built), sums)
	}
	line := regexp.MustCompile(`^([a-f0-9]{64})  (kubectl-informer_v1\.2\.3_[a-z0-9]+_[a-z0-9]+\.tar\.gz)$`)
	prev := ""
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q is not in sha256sum's format", l)
		}
		if m[2] <= prev {
			t.Errorf("%s is not sorted after %s", m[2], prev)
		}
		prev = m[2]
		b, err := os.ReadFile(filepath.Join(dir, m[2])) //nolint:gosec // G304: an archive in the test's own directory
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("%s: checksum %s is wrong", m[2], m[1])
		}
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		check := exec.Command("sha256sum", "--check", "--strict", "-")
		check.Dir = dir
		check.Stdin = strings.NewReader(sums)
		if out, err := check.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum --check: %v\n%s", err, out)
		}
	}
}

// TestRenderedManifest renders the release manifest for test archives of
// every platform and checks it against krew's rules and the archives.
func TestRenderedManifest(t *testing.T) {
	base := loadRoot(t)
	dir := t.TempDir()
	built := packAll(t, dir, "v1.2.3")
	p := Render(base, "v1.2.3", built)
	if err := krew.Validate(p, pluginName); err != nil {
		t.Fatal(err)
	}
	if err := krew.ValidateArchives(p, readArchives(t, dir, built)); err != nil {
		t.Fatal(err)
	}
	// The texts are the root manifest's, as written.
	if p.Metadata != base.Metadata || p.Spec.Description != base.Spec.Description || p.Spec.Caveats != base.Spec.Caveats ||
		p.Spec.ShortDescription != base.Spec.ShortDescription || p.Spec.Homepage != base.Spec.Homepage {
		t.Error("the rendered manifest's metadata or texts differ from plugin.yaml's")
	}
	for i, pl := range p.Spec.Platforms {
		a := built[i]
		if pl.SHA256 != a.SHA256 || pl.URI != "https://github.com/kubectl-informer/kubectl-informer/releases/download/v1.2.3/"+a.Name {
			t.Errorf("platform %d: uri %s sha256 %s; want the archive %s, %s", i, pl.URI, pl.SHA256, a.Name, a.SHA256)
		}
		if goos, goarch := pl.OSArch(); goos != a.Platform.OS || goarch != a.Platform.Arch {
			t.Errorf("platform %d selects %s/%s, want %s", i, goos, goarch, a.Platform)
		}
	}
	y, err := krew.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := krew.Parse(y)
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("the written manifest does not read back the same: %v\n%s", err, y)
	}

	// A platform missing from the archives is caught.
	p.Spec.Platforms[0].URI = ReleaseURL("v1.2.4", built[0].Name)
	if err := krew.ValidateArchives(p, readArchives(t, dir, built[1:])); err == nil {
		t.Error("a platform without its archive passed")
	}
}

// layoutArchives are the archives of version as listings without
// checksums: what each holds, by name and mode.
func layoutArchives(version string) map[string]*krew.Archive {
	out := map[string]*krew.Archive{}
	for _, p := range DefaultPlatforms {
		a := &krew.Archive{Name: ArchiveName(version, p), Entries: map[string]os.FileMode{}}
		for _, e := range Entries(p.OS, "", root) {
			a.Entries[e.Name] = e.Mode
		}
		out[a.Name] = a
	}
	return out
}

// TestRootManifest checks the root plugin.yaml, the manifest as submitted
// to krew-index: krew's rules, and platforms exactly as make dist renders
// them for its version.
func TestRootManifest(t *testing.T) {
	p := loadRoot(t)
	if err := krew.Validate(p, pluginName); err != nil {
		t.Fatal(err)
	}
	if err := krew.ValidateArchives(p, layoutArchives(p.Spec.Version)); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Platforms) != len(DefaultPlatforms) {
		t.Fatalf("%d platforms, want %d", len(p.Spec.Platforms), len(DefaultPlatforms))
	}
	var built []Built
	for i, pf := range DefaultPlatforms {
		built = append(built, Built{Platform: pf, Name: ArchiveName(p.Spec.Version, pf), SHA256: p.Spec.Platforms[i].SHA256})
	}
	want := Render(p, p.Spec.Version, built)
	if !reflect.DeepEqual(p, want) {
		got, _ := krew.Marshal(p)
		w, _ := krew.Marshal(want)
		t.Fatalf("plugin.yaml differs from what make dist renders for %s:\n--- plugin.yaml\n%s\n--- rendered\n%s", p.Spec.Version, got, w)
	}
}

// renderReleaseBot renders a krew-release-bot template as the bot does:
// the values {TagName}, addURIAndSha rendering its URL template with
// {TagName, Version} and writing "uri: URL" and "sha256: SUM" on the next
// line indented by four spaces, and indent. shas gives the checksum of
// each URL, as the bot would download and hash it.
func renderReleaseBot(t *testing.T, text, tag string, shas map[string]string) []byte {
	t.Helper()
	version := regexp.MustCompile(`\d+(\.\d+)+`).FindString(tag)
	funcs := template.FuncMap{
		"addURIAndSha": func(url, tag string) (string, error) {
			var b bytes.Buffer
			tmpl, err := template.New("url").Parse(url)
			if err != nil {
				return "", err
			}
			if err := tmpl.Execute(&b, struct{ TagName, Version string }{tag, version}); err != nil {
				return "", err
			}
			sum, ok := shas[b.String()]
			if !ok {
				return "", fmt.Errorf("no release asset %s", b.String())
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", b.String(), sum), nil
		},
		"indent": func(spaces int, v string) string {
			pad := strings.Repeat(" ", spaces)
			return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
		},
	}
	tmpl, err := template.New(".krew.yaml").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ TagName string }{tag}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReleaseBotTemplate renders .krew.yaml for a tag and expects exactly
// the manifest make dist renders for that version from plugin.yaml.
func TestReleaseBotTemplate(t *testing.T) {
	const tag = "v1.2.3"
	text, err := os.ReadFile(filepath.Join(root, ".krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var built []Built
	shas := map[string]string{}
	for _, p := range DefaultPlatforms {
		name := ArchiveName(tag, p)
		sum := sha256.Sum256([]byte(name))
		a := Built{Platform: p, Name: name, SHA256: hex.EncodeToString(sum[:])}
		built = append(built, a)
		shas[ReleaseURL(tag, name)] = a.SHA256
	}
	out := renderReleaseBot(t, string(text), tag, shas)
	if !bytes.HasPrefix(out, []byte("apiVersion: ")) {
		t.Errorf("the rendered template does not start with the manifest:\n%.200s", out)
	}
	got, err := krew.Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := krew.Validate(got, pluginName); err != nil {
		t.Fatal(err)
	}
	if err := krew.ValidateArchives(got, layoutArchives(tag)); err != nil {
		t.Fatal(err)
	}
	want := Render(loadRoot(t), tag, built)
	if !reflect.DeepEqual(got, want) {
		w, _ := krew.Marshal(want)
		t.Fatalf(".krew.yaml renders a manifest other than make dist's:\n--- .krew.yaml for %s\n%s\n--- make dist\n%s", tag, out, w)
	}
}

func TestCompletionHelpers(t *testing.T) {
	sh := string(completionHelper)
	if !strings.HasPrefix(sh, "#!/bin/sh\n") || !strings.Contains(sh, `exec kubectl-informer __complete "$@"`) {
		t.Errorf("kubectl_complete-informer:\n%s", sh)
	}
	cmd := string(completionHelperWindows)
	if !strings.Contains(cmd, "kubectl-informer.exe __complete %*\r\n") || strings.Contains(strings.ReplaceAll(cmd, "\r\n", ""), "\n") {
		t.Errorf("kubectl_complete-informer.cmd must call kubectl-informer.exe with every argument, with CRLF line ends:\n%q", cmd)
	}
	if st, err := os.Stat("kubectl_complete-informer"); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("kubectl_complete-informer in the repository is not executable: %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// kubectl passes the words typed, the last one possibly empty; the
	// helper must hand them on unchanged.
	dir := t.TempDir()
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl-informer"), []byte(fake), 0o755); err != nil { //nolint:gosec // G306: a script the test runs
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "kubectl_complete-informer")
	if err := os.WriteFile(helper, completionHelper, 0o755); err != nil { //nolint:gosec // G306: a script the test runs
		t.Fatal(err)
	}
	c := exec.Command(helper, "query", "pods,dep", "a b", "") //nolint:gosec // G204: the completion helper the test wrote
	c.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := c.CombinedOutput()
	if want := "[__complete][query][pods,dep][a b][]"; err != nil || string(out) != want {
		t.Fatalf("the helper ran %q (%v), want %q", out, err, want)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		o    options
		want string
	}{
		{options{version: "dev"}, `--version "dev": want a semantic version with the prefix v`},
		{options{version: "1.2.3"}, "want a semantic version"},
		{options{version: "v1.2.3", platforms: "linux/mips"}, `platform "linux/mips"`},
		{options{version: "v1.2.3", manifest: filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
	} {
		var out, errOut bytes.Buffer
		err := run(ctx, tt.o, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tt.o, err, tt.want)
		}
	}
}
